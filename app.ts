import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import { tokenClaims, type Config } from './config.js'
import underPressure from '@fastify/under-pressure'
import {
  auth, bulk, cors, conventions, createStore, csv, docs, downstream, events, files, jobs, lint, methods, openapi, problem, problemServerOptions, problems, query, rateLimit, resource, validation, webhooks, type EventsPluginOptions, type Store
} from './index.js'
import { migrate, RefusalCounts } from 'svc-conventions/store'
import { parseDuration } from 'svc-conventions/rate-limit'
import { redisRefusalCounts, type SharedRefusalCounts } from 'svc-conventions/auth'
import { healthRoutes } from './routes/health.js'
import type { TracingOptions } from './tracing.js'
import { registerScannerWebhook } from './routes/webhooks.js'
import { authors } from './routes/v1/authors.js'
import { DOCUMENT_CONTENT_TYPES, documents } from './routes/v1/documents.js'

export interface AppOptions {
  /** Extra Fastify server options (tests pass `logger: false`, benchmarks more). */
  fastify?: FastifyHttpOptions<Server>
  /** A store to use instead of the one the configuration names; the caller closes it. */
  store?: Store
  /** Tracing options beside the configuration's OTLP endpoint (tests pass an in-memory exporter). */
  tracing?: TracingOptions
  /** Options of the events plugin beside the configuration's (tests pass short timeouts, a resolver stub, a clock). */
  events?: Partial<Omit<EventsPluginOptions, 'store'>>
  /**
   * Lints every route as it is added, and the whole OpenAPI document at ready (the lint plugin,
   * mode error). The service's routes change only with its code, so its tests lint them once
   * (test/lint/reference.test.ts) rather than every start.
   */
  lint?: boolean
}

/** The reference service: the suite's plugins in the order a request travels (design.md). */
export async function buildApp (config: Config, opts: AppOptions = {}): Promise<FastifyInstance> {
  // Checked before anything opens, and named by their variables (the plugins would name their options).
  const retention = parseDuration(config.webhookDeliveryRetention)
  const window = parseDuration(config.rateLimitWindow)
  const badDurations = [
    ...retention === null || retention < 1 ? [`WEBHOOK_DELIVERY_RETENTION: must be a duration such as "7 days" or "36h" (got ${JSON.stringify(config.webhookDeliveryRetention)})`] : [],
    ...window === null || window < 1 || !Number.isSafeInteger(window) ? [`RATE_LIMIT_WINDOW: must be milliseconds or a duration such as "1 minute" or "30s" (got ${JSON.stringify(config.rateLimitWindow)})`] : []
  ]
  if (retention === null || window === null || badDurations.length > 0) throw new Error(`Invalid configuration:\n- ${badDurations.join('\n- ')}`)
  const options: FastifyHttpOptions<Server> = {
    logger: { level: config.logLevel },
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Refusals made before any hook runs (Node's parser, the router) are problems too, and the
    // log's reqId is the convention's requestId: the caller's X-Request-ID or a UUID.
    ...problemServerOptions,
    // Identifiers are up to 128 characters (contract); a longer one is then a 400 from its
    // schema, naming the parameter, rather than the router's refusal.
    routerOptions: { maxParamLength: 512 },
    // A body trickled in slowly holds a connection at most this long (Node's default is 300 s).
    requestTimeout: 30_000,
    // The resource plugin waits for the store at registration: PGlite's first start (initdb in
    // WebAssembly) can outlast Fastify's 10 s on a busy machine.
    pluginTimeout: 120_000,
    ...opts.fastify
  }
  // Node applies requestTimeout to a request's body only when the HTTP server is created with
  // it; Fastify sets it afterwards, which bounds the headers alone.
  options.http = {
    requestTimeout: options.requestTimeout,
    // A request without Host reaches the conventions plugin, which refuses it with a problem;
    // Node's own refusal is an empty 400.
    requireHostHeader: false,
    ...options.http
  }
  const app = Fastify(options)
  // Tracing, when configured, wraps every hook and handler registered after it.
  const tracingOptions = opts.tracing ?? (config.otelEndpoint === null ? null : { endpoint: config.otelEndpoint })
  // OpenTelemetry is loaded only when tracing is on: it is most of what a start would load.
  const tracingModule = tracingOptions === null ? null : await import('./tracing.js')
  if (tracingModule !== null && tracingOptions !== null) {
    const tracing = tracingModule.startTracing(tracingOptions)
    await app.register(tracing.plugin)
    app.addHook('onClose', async () => { await tracing.shutdown() })
  }

  await app.register(problem)
  await registerOverload(app, config)
  await app.register(validation)
  await app.register(conventions, { executionContext: { extra: config.executionContexts } })
  if (tracingModule !== null) tracingModule.traceAttributes(app)
  // Every outgoing call (request.downstream, app.downstream) names this service and passes on
  // the request's X-Request-ID and execution context.
  await app.register(downstream, {
    service: { id: config.serviceId, name: config.serviceName },
    userAgent: { product: config.serviceName, version: 1, comment: 'svc-conventions' }
  })
  await app.register(cors, { origins: config.corsOrigins })
  // Methods before auth: OPTIONS and 405 answers carry no sensitive data and need no token.
  await app.register(methods)
  // The store the configuration names (PGlite in DATA_DIR, or a pg pool for DATABASE_URL),
  // closed with the app; a store handed in by the caller stays the caller's to close.
  const store = opts.store ?? createStore({ databaseUrl: config.databaseUrl ?? undefined, dataDir: config.dataDir, pool: { statementTimeoutMillis: config.databaseStatementTimeout, pgbouncer: config.databasePgbouncer }, logger: app.log })
  if (opts.store === undefined) app.addHook('onClose', async () => { await store.close() })
  await app.register(auth, {
    verifier: { ...config.jwksUrl !== null ? { jwksUrl: config.jwksUrl } : { secret: config.jwtSecret }, ...tokenClaims(config) },
    // Requests without a valid token count per address too (contract: "per token, or per address
    // without one"): refused ones by auth itself, before it checks the next token of that address.
    refusalLimit: { max: config.rateLimitMax, timeWindow: window, ...await sharedRefusals(app, config, store) }
  })
  // Per route, after auth: keyed by the token's subject, else the client address.
  await app.register(rateLimit, { max: config.rateLimitMax, timeWindow: config.rateLimitWindow, ...(config.redisUrl === null ? {} : { redis: config.redisUrl }) })
  await app.register(openapi, {
    info: {
      title: 'Reference resource service',
      version: '1.0.0',
      description: [
        'Authors and documents, built only from the svc-conventions plugins.',
        'Every `/v1` operation needs a bearer token: run `npm run token -- --scope "authors:read authors:write documents:read documents:write webhooks:read webhooks:write"` where the service runs (it signs with `AUTH_JWT_SECRET`), then choose **Authorize** and paste it.',
        'Clients send a `User-Agent` of the form `<product>/<major-version>` (`my-client/1`); without one the answer is 403.'
      ].join('\n\n')
    },
    tokenHelp: 'A JWT signed with the service\'s AUTH_JWT_SECRET, with `sub` (the user) and `scope` (space-separated: authors:read authors:write documents:read documents:write webhooks:read webhooks:write). Where the service runs: `npm run token -- --scope "authors:read documents:read"`.'
  })
  await app.register(docs)

  await app.register(healthRoutes, { check: async () => { await store.ready() } })
  await app.register(query, { cursorSecret: config.cursorSecret, defaultLimit: 20, maxLimit: 100 })
  // Collection GETs also answer text/csv (contract: "Collections as CSV"); before the resources it serves.
  await app.register(csv)
  // After query, whose onRoute completes the collection schemas, and before the resources.
  if (opts.lint === true) await app.register(lint, { mode: 'error' })
  await app.register(resource, { store, resources: [authors, documents], ...(config.migrationsDir === null ? {} : { migrations: config.migrationsDir }) })
  // Background work (asynchronous bulk) on the same store, claimed by any instance; before bulk, which uses it.
  await app.register(jobs, { store, path: '/v1/jobs', leaseMillis: config.jobLeaseMillis })
  await app.register(bulk, { maxOperations: 100, maxAsyncOperations: 10_000 })
  // Document content: files of up to 10 MiB, read by their own parser (the 1 MiB bodyLimit above is for JSON).
  await app.register(files, { resources: { documents: { mediaTypes: DOCUMENT_CONTENT_TYPES, maxBytes: 10 * 1024 * 1024 } } })
  await app.register(webhooks, { store, retention })
  registerScannerWebhook(app, config.webhookSecretScanner)
  // Outgoing events: every change of the resources above, written in its own transaction,
  // delivered by any instance that has not WEBHOOK_DELIVERY=false.
  await app.register(events, {
    store,
    workerStore: workerStore(app, config, opts, store),
    service: { id: config.serviceId, name: config.serviceName },
    path: '/v1/webhook-subscriptions',
    retrySchedule: config.webhookRetrySchedule,
    allowInsecureTargets: config.webhookAllowInsecureTargets,
    // A refused http:// or internal target names the variable that allows it; in production, nothing.
    allowInsecureTargetsHint: config.production ? false : 'WEBHOOK_ALLOW_INSECURE_TARGETS=true',
    worker: config.webhookDelivery,
    // The reference contract's scope table asks webhooks:write alone of a subscription's writes,
    // whatever events it names; the plugin's default also asks the read scope of their resource.
    eventReadScopes: false,
    ...opts.events
  })
  return app
}

/**
 * The store deliveries are claimed and recorded through: on a PostgreSQL server, two
 * connections of their own (none on an instance that does not deliver), so that under load a
 * claim does not wait behind the requests queued for the pool's connections; PGlite, one
 * connection in all, and a store handed in serve for both.
 */
function workerStore (app: FastifyInstance, config: Config, opts: AppOptions, store: Store): Store {
  if (opts.store !== undefined || config.databaseUrl === null || !config.webhookDelivery) return store
  const own = createStore({ databaseUrl: config.databaseUrl, pool: { max: 2, statementTimeoutMillis: config.databaseStatementTimeout, pgbouncer: config.databasePgbouncer }, logger: app.log })
  app.addHook('onClose', async () => { await own.close() })
  return own
}

/**
 * Where the token-guessing throttle counts, so that N instances allow the guesses of one: Redis
 * when REDIS_URL is set, else the PostgreSQL server's table; in memory on PGlite, which one
 * process alone can open.
 */
async function sharedRefusals (app: FastifyInstance, config: Config, store: Store): Promise<{ shared?: SharedRefusalCounts }> {
  if (config.redisUrl !== null) {
    // Loaded only when REDIS_URL is set: ioredis is an optional peer.
    const { Redis } = await import('ioredis')
    // As the rate limit's client: a Redis that does not answer costs a request half a second, not for ever.
    const redis = new Redis(config.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, commandTimeout: 500 })
    // Without a listener ioredis prints its errors to stderr, outside the service's log.
    redis.on('error', (err: Error) => { app.log.warn({ err }, 'auth: Redis connection error') })
    app.addHook('onClose', async () => { redis.disconnect() })
    return { shared: redisRefusalCounts(redis) }
  }
  if (store.kind !== 'pg') return {}
  const counts = new RefusalCounts(store)
  await migrate(store, counts.migrations())
  // Windows that are over, deleted now and then, by one instance at a time. Judged by this
  // process's clock, which the auth plugin wrote them with, not the database's.
  const timer = setInterval(() => {
    counts.purge(new Date()).catch((err: unknown) => { app.log.warn({ err }, 'auth: purging old refusal counts failed; trying again later') })
  }, 60_000)
  timer.unref()
  app.addHook('onClose', async () => { clearInterval(timer) })
  return { shared: counts }
}

/**
 * Overload: past a threshold (event-loop delay or utilization, heap, RSS), every request is
 * answered at once with a 503 problem and Retry-After (@fastify/under-pressure), so that a
 * balancer or client goes elsewhere or waits, instead of everyone getting slow answers.
 */
async function registerOverload (app: FastifyInstance, config: Config): Promise<void> {
  const retryAfter = config.overloadRetryAfter
  await app.register(underPressure, {
    maxEventLoopDelay: config.overloadMaxEventLoopDelay,
    maxEventLoopUtilization: config.overloadMaxEventLoopUtilization,
    // The loop's use over the last sample, not since the start (the plugin's default), which a
    // process that ran idle for hours would never see pass the threshold however busy it is now.
    eventLoopUtilizationMode: 'interval',
    maxHeapUsedBytes: config.overloadMaxHeapUsedBytes,
    maxRssBytes: config.overloadMaxRssBytes,
    retryAfter,
    // Thrown, so the problem plugin renders it like every other refusal.
    pressureHandler: async () => {
      throw problems.unavailable(`The service is overloaded; retry after ${retryAfter} seconds.`, { headers: { 'retry-after': retryAfter } })
    }
  })
}
