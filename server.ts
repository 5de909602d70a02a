import closeWithGrace from 'close-with-grace'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { signalCopies, stopRequests } from './stop-signals.js'
// The rest is imported once the stop signals are taken (main): loading the service's modules
// takes most of a second, and a SIGTERM meanwhile would end the process by Node's default.

/**
 * The server's connections, each with the number of its requests being served (dispatched, and
 * not yet answered and closed). `dropUnserved` destroys those serving none.
 */
function trackServing (server: Server): { dropUnserved: () => void } {
  const connections = new Map<Socket, number>()
  server.on('connection', (socket: Socket) => {
    connections.set(socket, 0)
    socket.once('close', () => connections.delete(socket))
  })
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    connections.set(socket, (connections.get(socket) ?? 0) + 1)
    response.once('close', () => {
      const n = connections.get(socket)
      if (n !== undefined) connections.set(socket, n - 1)
    })
  })
  return {
    dropUnserved: () => {
      for (const [socket, n] of connections) if (n === 0) socket.destroy()
    }
  }
}

/**
 * `npm start`: reads the environment, opens the store, listens, and on SIGTERM/SIGINT stops
 * accepting, lets requests in flight finish, closes the store and exits 0; if that takes longer
 * than SHUTDOWN_TIMEOUT, or an error escapes, it exits 1.
 */
async function main (): Promise<void> {
  // SIGINT and SIGTERM are taken from the start: one that comes while the modules load, the
  // store opens and the schema migrates (which may wait on another instance's lock) lets that
  // finish, then closes the store and exits 0 without listening, rather than ending the process
  // half-way. Once listening, close-with-grace drains (below). One Ctrl-C under `npm start`
  // arrives twice (stop-signals.ts).
  const stops = stopRequests(signalCopies(process.env))
  // SHUTDOWN_TIMEOUT bounds a stop during the start, once the configuration is read.
  const read: { shutdownTimeout?: number } = {}
  let startStop: { signal: NodeJS.Signals, timer?: NodeJS.Timeout } | undefined
  const boundStart = (): void => {
    const shutdownTimeout = read.shutdownTimeout
    if (startStop === undefined || startStop.timer !== undefined || shutdownTimeout === undefined) return
    const { signal } = startStop
    startStop.timer = setTimeout(() => {
      console.error(`shutdown: the start did not finish within ${String(shutdownTimeout)} ms of ${signal} (SHUTDOWN_TIMEOUT); exiting anyway`)
      process.exit(1)
    }, shutdownTimeout)
  }
  let stopSignal: NodeJS.Signals | undefined
  // close-with-grace's stop, once the app is built and about to listen.
  const armed: { grace?: ReturnType<typeof closeWithGrace> } = {}
  let log: { debug: (obj: object, msg: string) => void, error: (obj: object, msg: string) => void } = {
    debug: () => {},
    error: (_obj, msg) => { console.error(msg) }
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      const verdict = stops.signal()
      if (verdict === 'stop') {
        stopSignal = signal
        if (armed.grace !== undefined) armed.grace.close()
        else {
          startStop = { signal }
          boundStart()
        }
      } else if (verdict === 'repeat') {
        log.debug({ signal }, 'the stop is under way: this signal is taken for npm\'s copy of the one that began it')
      } else {
        log.error({ signal }, `${signal} again while stopping: exiting without waiting for requests in flight`)
        process.exit(1)
      }
    })
  }
  const [{ loadConfig }, { buildApp }, { listenRefusal }, { logOptions }, { storeLocation }] = await Promise.all([
    import('./config.js'), import('./app.js'), import('./listen-refusal.js'), import('./log-options.js'), import('svc-conventions/store')
  ])
  const { config, warnings } = loadConfig()
  read.shutdownTimeout = config.shutdownTimeout
  boundStart()
  // A request that reaches a kept-alive connection while draining is served like the rest
  // (with Connection: close), not refused by Fastify's built-in 503, whose body is no
  // problem document (conventions: Errors, rule 1) and which would drop work already sent.
  const app = await buildApp(config, { fastify: { logger: await logOptions(config), return503OnClosing: false } })
  log = app.log
  for (const w of warnings) app.log.warn(w)
  if (startStop !== undefined) {
    app.log.info({ signal: startStop.signal }, 'shutting down: stopped while starting, before listening')
    await app.close()
    clearTimeout(startStop.timer)
    app.log.info('stopped: the store closed')
    return
  }
  let closing = false
  // Once draining, every answer closes its connection (RFC 9112 §9.6): the server stops
  // when the last request in flight is answered, instead of waiting for idle kept-alive
  // connections to time out (Node closes only those already idle when close() starts).
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  // Node's close() drops the connections idle between requests, not those holding part of a
  // request's head: a slow or stalled client would keep the stop waiting until SHUTDOWN_TIMEOUT
  // (and exit 1) though nothing of it reached the service. Those are dropped as well, last
  // thing before the server stops listening; requests being served are left to finish.
  const serving = trackServing(app.server)
  app.addHook('preClose', async () => { serving.dropUnserved() })
  // close-with-grace: one stop for signals and for errors that escape (uncaught exceptions,
  // unhandled rejections), and a forced exit when closing hangs. SIGINT and SIGTERM reach it
  // through the handlers above.
  armed.grace = closeWithGrace({
    delay: config.shutdownTimeout,
    skip: ['SIGINT', 'SIGTERM'],
    logger: { error: (message: unknown) => { app.log.error(String(message)) } },
    onTimeout: (delay) => { app.log.error(`shutdown: requests in flight or the store did not finish within ${delay} ms (SHUTDOWN_TIMEOUT); exiting anyway`) }
  }, async ({ signal, err }) => {
    closing = true
    stops.begin()
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error nothing handled')
    else app.log.info({ signal: signal ?? stopSignal }, 'shutting down: draining requests in flight')
    await app.close()
    // The last line: nothing is left running (a log that ends at "draining" would leave that in doubt).
    app.log.info('stopped: requests in flight answered, the store closed')
  })
  let url: string
  try {
    url = await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    // A stop that came while it started listening: close-with-grace has the exit.
    if (closing) return
    // The store is closed before the exit, so that the data directory is left clean.
    await app.close()
    throw listenRefusal(err, config.host, config.port)
  }
  const docs = `${url}/docs`
  const store = storeLocation({ databaseUrl: config.databaseUrl ?? undefined, dataDir: config.dataDir })
  app.log.info({ url, docs, store }, `Listening at ${url} · API docs at ${docs} · store: ${store} · a token: npm run token`)
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
