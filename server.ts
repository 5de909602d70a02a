import { loadConfig } from './config.js'
import { buildApp } from './app.js'

/**
 * `npm start`: reads the environment, opens the store, listens, and on SIGTERM/SIGINT stops
 * accepting, lets requests in flight finish, closes the store and exits 0.
 */
async function main (): Promise<void> {
  const { config, warnings } = loadConfig()
  const app = await buildApp(config)
  for (const w of warnings) app.log.warn(w)
  let closing = false
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
