import { exp, exportsLine, imp, js, ts } from '../lib/code.js'

/** app.(ts|js): the suite's plugins in the order a request travels, then the resources. */
export default function app (ctx) {
  return `${imp(ctx, 'fastify', { def: 'Fastify', types: ['FastifyInstance', 'FastifyServerOptions'] })}${imp(ctx, 'pino', { names: ['pino'] })}${imp(ctx, '@sinclair/typebox', { names: ['Type'] })}${imp(ctx, 'svc-conventions', {
    names: ['auth', 'bulk', 'conventions', 'cors', 'createStore', 'docs', 'lint', 'methods', 'openapi', 'problem', 'problems', 'query', 'rateLimit', 'resource', 'validation']
  })}${imp(ctx, 'svc-conventions/problem', { names: ['problemServerOptions'] })}${imp(ctx, './config.js', { types: ['Config'] })}${imp(ctx, './resources/index.js', { names: ['resources'] })}
const Health = Type.Object({ status: Type.Literal('UP') }, { additionalProperties: false })

${js(ctx, `/**
 * @param {import('./config.js').Config} config
 * @param {import('fastify').FastifyServerOptions} [fastify]
 * @returns {Promise<import('fastify').FastifyInstance>}
 */
`)}${ts(ctx, '/** The service; tests build it too, with their own configuration. */\n')}${exp(ctx)}async function buildApp (config${ts(ctx, ': Config')}, fastify${ts(ctx, ': FastifyServerOptions')} = {})${ts(ctx, ': Promise<FastifyInstance>')} {
  const app = Fastify({
    // Each line is written when it is logged: pino's default destination writes in the
    // background, and at an exit its last lines could come out of order or not at all.
    logger: { level: config.logLevel, stream: pino.destination({ dest: 1, sync: true }) },
    trustProxy: config.trustProxy,
    // The resource plugin waits for the store: a first start of the embedded PostgreSQL (initdb
    // in WebAssembly) can outlast Fastify's 10 s on a busy machine.
    pluginTimeout: 120_000,
    // Refusals made before any plugin runs (Node's HTTP parser, the router) are problems too.
    ...problemServerOptions,
    ...fastify
  })
  // DATABASE_URL: a PostgreSQL server; else PostgreSQL embedded (PGlite) in DATA_DIR, or in
  // memory. The resources' tables are created, or changed to follow their definitions, at start.
  const store = createStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger: app.log })
  app.addHook('onClose', async () => { await store.close() })

  try {
    // The convention, in the order a request travels. Each plugin refuses bad options at start.
    await app.register(problem) // every 4xx/5xx as application/problem+json with requestId
    await app.register(validation) // strict Ajv: every error at once, unknown properties are a 400
    await app.register(conventions) // HTTP/1.1, User-Agent, Accept, Content-Type, Svc-* headers
    await app.register(cors, { origins: config.corsOrigins }) // preflights answered before auth
    await app.register(methods) // 405 with Allow; OPTIONS 204
    await app.register(auth, { verifier: { secret: config.jwtSecret } }) // Bearer JWT, scopes per route
    await app.register(rateLimit, { max: config.rateLimitMax, timeWindow: '1 minute' }) // 429 per token, or address
    await app.register(openapi, { info: { title: '${ctx.name}', version: '1.0.0' } }) // GET /openapi.json
    await app.register(docs) // GET /docs: the API docs page

    // Readiness, for a load balancer: no token, no header rules.
    app.get('/health', {
      schema: { summary: 'Readiness: UP once the store answers', response: { 200: { ...Health, description: 'The service is ready.' } } },
      config: { auth: false, conventions: false, rateLimit: false }
    }, async () => {
      try {
        await store.ready()
      } catch (err) {
        throw problems.unavailable('The store is not ready; retry shortly.', { cause: err, headers: { 'retry-after': 1 } })
      }
      return { status: ${ts(ctx, '\'UP\' as const')}${js(ctx, '\'UP\'')} }
    })

    // Collections: limit, signed cursors, offset, filters (simple and FIQL), ordering, search by POST.
    await app.register(query, { cursorSecret: config.cursorSecret })
    // After query and before the resources: a route that breaks the convention stops the start,
    // naming the route, the property and the rule.
    await app.register(lint)
    await app.register(resource, { store, resources })
    await app.register(bulk) // PATCH on each collection: many operations in one request
  } catch (err) {
    // A plugin refused to start: give the store back (its data directory, its connections), or
    // the process that called buildApp, a test runner among them, would wait on it for ever.
    await store.close().catch(() => {})
    throw err
  }
  return app
}
${exportsLine(ctx, ['buildApp'])}`
}
