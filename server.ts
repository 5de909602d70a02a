import closeWithGrace from 'close-with-grace'
import type { FastifyServerOptions } from 'fastify'
import { storeLocation } from './index.js'
import { loadConfig, type Config } from './config.js'
import { buildApp } from './app.js'

/**
 * Readable lines for a person at a terminal in development (pino-pretty, a development
 * dependency, loaded only then); JSON lines otherwise, for log collectors.
 */
async function logger (config: Config): Promise<FastifyServerOptions['logger']> {
  if (config.production || process.stdout.isTTY !== true) return { level: config.logLevel }
  try {
    const { default: pretty } = await import('pino-pretty')
    // Synchronous, so that the last lines before an exit are written.
    return { level: config.logLevel, stream: pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) }
  } catch {
    return { level: config.logLevel } // installed without development dependencies
  }
}

/**
 * `npm start`: reads the environment, opens the store, listens, and on SIGTERM/SIGINT stops
 * accepting, lets requests in flight finish, closes the store and exits 0; if that takes longer
 * than SHUTDOWN_TIMEOUT, or an error escapes, it exits 1.
 */
async function main (): Promise<void> {
  const { config, warnings } = loadConfig()
  // A request that reaches a kept-alive connection while draining is served like the rest
  // (with Connection: close), not refused by Fastify's built-in 503, whose body is no
  // problem document (conventions: Errors, rule 1) and which would drop work already sent.
  const app = await buildApp(config, { fastify: { logger: await logger(config), return503OnClosing: false } })
  for (const w of warnings) app.log.warn(w)
  let closing = false
  // Once draining, every answer closes its connection (RFC 9112 §9.6): the server stops
  // when the last request in flight is answered, instead of waiting for idle kept-alive
  // connections to time out (Node closes only those already idle when close() starts).
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  // close-with-grace: one stop for signals and for errors that escape (uncaught exceptions,
  // unhandled rejections), and a forced exit when closing hangs.
  closeWithGrace({
    delay: config.shutdownTimeout,
    logger: { error: (message: unknown) => { app.log.error(String(message)) } },
    onTimeout: (delay) => { app.log.error(`shutdown: requests in flight or the store did not finish within ${delay} ms (SHUTDOWN_TIMEOUT); exiting anyway`) }
  }, async ({ signal, err }) => {
    closing = true
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error nothing handled')
    else app.log.info({ signal }, 'shutting down: draining requests in flight')
    await app.close()
  })
  const url = await app.listen({ host: config.host, port: config.port })
  const docs = `${url}/docs`
  const store = storeLocation({ databaseUrl: config.databaseUrl ?? undefined, dataDir: config.dataDir })
  app.log.info({ url, docs, store }, `Listening at ${url} · API docs at ${docs} · store: ${store} · a token: npm run token`)
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
