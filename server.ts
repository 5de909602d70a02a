import { loadConfig } from './config.js'
import { buildApp } from './app.js'

/**
 * `npm start`: reads the environment, opens the store, listens, and on SIGTERM/SIGINT stops
 * accepting, lets requests in flight finish, closes the store and exits 0.
 */
async function main (): Promise<void> {
  const { config, warnings } = loadConfig()
  // A request that reaches a kept-alive connection while draining is served like the rest
  // (with Connection: close), not refused by Fastify's built-in 503, whose body is no
  // problem document (conventions: Errors, rule 1) and which would drop work already sent.
  const app = await buildApp(config, { fastify: { return503OnClosing: false } })
  for (const w of warnings) app.log.warn(w)
  let closing = false
  // Once draining, every answer closes its connection (RFC 9112 §9.6): the server stops
  // when the last request in flight is answered, instead of waiting for idle kept-alive
  // connections to time out (Node closes only those already idle when close() starts).
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  const stop = (signal: string): void => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: draining requests in flight')
    app.close().then(() => process.exit(0), (err: unknown) => {
      app.log.error({ err }, 'error while shutting down')
      process.exit(1)
    })
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  await app.listen({ host: config.host, port: config.port })
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
