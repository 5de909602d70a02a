import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import {
  problem, validation, methods, conventions, cors, auth, openapi, conditional, idempotency, query, webhooks, rateLimit, lint, downstream, createStore, type Store
} from '../../index.js'
import { signToken } from '../../plugins/auth/index.js'
import { createFieldMap, registerCollection, collectionQueryOf, queryMemory } from '../../plugins/query/index.js'
import { registerWebhook, sharedToken } from '../../plugins/webhooks/index.js'
import { fingerprintOf, replayStatus, type IdempotencyClaim } from '../../plugins/idempotency/index.js'

// Each plugin of the public entry in a bare Fastify app, alone (with `problem` only where its
// `dependencies` name svc-problem): it must declare every request value it sets, so a route
// reads the declared value (null, '') rather than undefined when no other plugin is there.
// `resource` and `bulk` are covered by test/resource/standalone.test.ts.

const UA = 'standalone-test/1 (tap)'
const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

async function bare (t: Test, register: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await register(app)
  return app
}

function json (res: { body: string }): Record<string, any> {
  return JSON.parse(res.body)
}

/** One PGlite store for the plugins that keep rows (idempotency keys, webhook deliveries). */
let shared: Store | undefined
async function memoryStore (): Promise<Store> {
  if (shared === undefined) {
    shared = createStore({ dataDir: 'memory' })
    t.teardown(async () => { await (shared as Store).close() })
  }
  return shared
}

t.test('problem: refusals are problems carrying request.requestId, the sent X-Request-ID or a generated one', async t => {
  const app = await bare(t, async (app) => { await app.register(problem) })
  app.get('/id', async (request) => ({ requestId: request.requestId }))
  const missing = await app.inject({ url: '/nothing', headers: { 'x-request-id': 'req-1' } })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.match(json(missing), { status: 404, title: 'Not Found', requestId: 'req-1', instance: '/nothing' })
  t.equal(missing.headers['x-request-id'], 'req-1', 'echoed')
  t.strictSame(json(await app.inject({ url: '/id', headers: { 'x-request-id': 'req-2' } })), { requestId: 'req-2' })
  const generated = json(await app.inject({ url: '/id' })).requestId
  t.match(generated, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID when none is sent')
})

t.test('validation: strict bodies, unknown properties refused rather than removed', async t => {
  const app = await bare(t, async (app) => { await app.register(validation) })
  app.post('/x', { schema: { body: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } } }, async (request) => request.body)
  t.equal((await app.inject({ method: 'POST', url: '/x', payload: { a: 'b' } })).statusCode, 200)
  const extra = await app.inject({ method: 'POST', url: '/x', payload: { a: 'b', c: 1 } })
  t.equal(extra.statusCode, 400, 'Fastify alone would have removed c and answered 200')
  t.equal((await app.inject({ method: 'POST', url: '/x', payload: { a: 1 } })).statusCode, 400, 'no coercion of body values')
})

t.test('methods: 405 and OPTIONS with Allow for a known path', async t => {
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(methods)
  })
  app.get('/x', async () => ({ ok: true }))
  const refused = await app.inject({ method: 'DELETE', url: '/x' })
  t.equal(refused.statusCode, 405)
  t.equal(refused.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal(json(refused).title, 'Method Not Allowed')
  const options = await app.inject({ method: 'OPTIONS', url: '/x' })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'GET, HEAD, OPTIONS')
  t.strictSame(app.allowedMethods('/x'), ['GET', 'HEAD', 'OPTIONS'])
  t.equal((await app.inject({ url: '/y' })).statusCode, 404)
})

t.test('conventions: 403 without User-Agent; executionContext, callingService, idempotencyKey and negotiatedType on the request', async t => {
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(conventions)
  })
  const echo = async (request: { executionContext: string, callingService: unknown, idempotencyKey: string | null, negotiatedType: string | null }): Promise<unknown> => ({
    executionContext: request.executionContext,
    callingService: request.callingService,
    idempotencyKey: request.idempotencyKey,
    negotiatedType: request.negotiatedType
  })
  app.route({ method: ['GET', 'POST'], url: '/echo', handler: echo })
  app.get('/off', { config: { conventions: false } }, echo)

  const refused = await app.inject({ url: '/echo' })
  t.equal(refused.statusCode, 403)
  t.match(json(refused), { title: 'Forbidden', detail: /User-Agent/ })

  t.strictSame(json(await app.inject({ url: '/echo', headers: { 'user-agent': UA } })), { executionContext: 'prod', callingService: null, idempotencyKey: null, negotiatedType: 'application/json' })
  const key = '0b1e5c1a-7d7e-4a51-9f0e-4d3b0b8b6a11'
  const service = '7e0c1d1e-3c1e-4f7a-8d0a-2b5e8f9a1c3d'
  const sent = await app.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'user-agent': UA, 'svc-execution-context': 'preprod', 'svc-idempotency-key': key, 'svc-service': `id=${service}; name=orders` }
  })
  t.strictSame(json(sent), { executionContext: 'preprod', callingService: { id: service, name: 'orders', attributes: {} }, idempotencyKey: key, negotiatedType: 'application/json' })
  t.equal(sent.headers['svc-execution-context'], 'preprod', 'echoed')
  const bad = await app.inject({ url: '/echo', headers: { 'user-agent': UA, 'svc-execution-context': 'Nope!' } })
  t.equal(bad.statusCode, 400)
  t.equal(json(bad).context[0].field, 'Svc-Execution-Context')
  t.strictSame(json(await app.inject({ url: '/off' })), { executionContext: 'prod', callingService: null, idempotencyKey: null, negotiatedType: null }, 'rules off: the default context, the declared values')
})

t.test('cors: preflights answered or refused, actual requests get the library\'s headers', async t => {
  const APP = 'https://app.example.com'
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(cors, { origins: [APP] })
  })
  app.get('/x', async () => ({ ok: true }))
  const preflight = await app.inject({ method: 'OPTIONS', url: '/x', headers: { origin: APP, 'access-control-request-method': 'GET' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], APP)
  t.equal(preflight.headers['access-control-max-age'], '600')
  const refused = await app.inject({ method: 'OPTIONS', url: '/x', headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' } })
  t.equal(refused.statusCode, 403)
  t.equal(refused.headers['svc-cors-error'], 'bad origin')
  const actual = await app.inject({ url: '/x', headers: { origin: APP } })
  t.equal(actual.headers['access-control-allow-origin'], APP)
  t.equal(actual.headers.vary, 'Origin')
  const plain = await app.inject({ url: '/x' })
  t.equal(plain.headers['access-control-allow-origin'], undefined)
  t.equal(plain.headers.vary, 'Origin')
})

t.test('auth: 401 without a token, request.principal with one, null where the route needs none', async t => {
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(auth, { verifier: { secret: SECRET } })
  })
  app.get('/me', { config: { auth: { scopes: ['me:read'] } } }, async (request) => ({ principal: request.principal }))
  app.get('/open', { config: { auth: false } }, async (request) => ({ principal: request.principal }))
  const missing = await app.inject({ url: '/me' })
  t.equal(missing.statusCode, 401)
  t.equal(missing.headers['www-authenticate'], 'Bearer')
  const token = signToken({ secret: SECRET, sub: 'u1', scope: 'me:read' })
  const admitted = await app.inject({ url: '/me', headers: { authorization: `Bearer ${token}` } })
  t.equal(admitted.statusCode, 200)
  t.match(json(admitted).principal, { sub: 'u1', scopes: ['me:read'] })
  t.equal(admitted.headers['cache-control'], 'no-store')
  const scopeless = await app.inject({ url: '/me', headers: { authorization: `Bearer ${signToken({ secret: SECRET, sub: 'u2' })}` } })
  t.equal(scopeless.statusCode, 403)
  t.strictSame(json(await app.inject({ url: '/open' })), { principal: null })
})

t.test('openapi: the document is served and lists the routes', async t => {
  const app = await bare(t, async (app) => { await app.register(openapi, { info: { title: 'Alone', version: '1.0.0' } }) })
  app.get('/v1/things', { schema: { response: { 200: { type: 'object', properties: { name: { type: 'string' } } } } } }, async () => ({ name: 'a' }))
  const res = await app.inject({ url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = json(res)
  t.equal(doc.info.title, 'Alone')
  t.ok(doc.paths['/v1/things']?.get, 'the route is documented')
})

t.test('conditional: 428 when If-Match is required, request.preconditions parsed, 304 on a matching If-None-Match', async t => {
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(conditional)
  })
  app.put('/x', { config: { conditional: { requireIfMatch: true } } }, async (request) => ({ preconditions: request.preconditions }))
  app.get('/x', async (_request, reply) => reply.header('etag', '"v1"').send({ ok: true }))
  app.get('/off', { config: { conditional: false } }, async (request) => ({ preconditions: request.preconditions }))
  const required = await app.inject({ method: 'PUT', url: '/x', payload: {} })
  t.equal(required.statusCode, 428)
  t.equal(json(required).title, 'Precondition Required')
  const parsed = await app.inject({ method: 'PUT', url: '/x', payload: {}, headers: { 'if-match': '"v1", W/"v0"' } })
  t.equal(parsed.statusCode, 200)
  t.strictSame(json(parsed).preconditions, { ifMatch: [{ weak: false, tag: '"v1"' }, { weak: true, tag: '"v0"' }], ifNoneMatch: null, ifUnmodifiedSince: null })
  const notModified = await app.inject({ url: '/x', headers: { 'if-none-match': '"v1"' } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.strictSame(json(await app.inject({ url: '/off', headers: { 'if-match': '"v1"' } })), { preconditions: null }, 'the declared value where the plugin sets none')
})

t.test('idempotency: app.idempotency claims a key once on a PGlite memory store; a retry replays, another body is a 409', async t => {
  const store = await memoryStore()
  const app = await bare(t, async (app) => { await app.register(idempotency, { store, purgeInterval: 0 }) })
  app.put('/v1/orders/1', async (request, reply) => {
    const key = String(request.headers['svc-idempotency-key'])
    const claim: IdempotencyClaim = { ctx: 'prod', resource: 'orders', caller: 'anonymous', key, method: 'PUT', target: '/v1/orders/1', fingerprint: fingerprintOf(request.body), instance: '/v1/orders/1', status: 201 }
    const earlier = await store.transaction(async (tx) => await app.idempotency.claim(tx, claim))
    return await reply.code(earlier === null ? 201 : replayStatus(earlier, claim)).send({ replayed: earlier !== null })
  })
  const send = async (payload: unknown): Promise<{ statusCode: number, body: string }> =>
    await app.inject({ method: 'PUT', url: '/v1/orders/1', payload: payload as object, headers: { 'svc-idempotency-key': 'a6f1c2d4-0c1e-4b7e-9a55-0f1e2d3c4b5a' } })
  const first = await send({ item: 'a' })
  t.strictSame([first.statusCode, json(first)], [201, { replayed: false }])
  const retry = await send({ item: 'a' })
  t.strictSame([retry.statusCode, json(retry)], [201, { replayed: true }])
  t.equal((await send({ item: 'b' })).statusCode, 409, 'the key was used with another body')
})

t.test('query: a collection route gets request.collectionQuery and answers with reply.sendCollection\'s envelope', async t => {
  const fields = createFieldMap([{ path: 'id', type: 'string', sortable: true }, { path: 'name', type: 'string', sortable: true }])
  const items = [{ id: 'a', name: 'Ann' }, { id: 'b', name: 'Bob' }, { id: 'c', name: 'Cy' }]
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(query, { cursorSecret: 'a test secret of at least 16 bytes' })
  })
  registerCollection(app, {
    url: '/v1/people',
    collection: { fields },
    handler: async (request, reply) => reply.sendCollection(queryMemory(items, collectionQueryOf(request), fields))
  })
  app.get('/other', async (request) => ({ collectionQuery: request.collectionQuery }))

  const page = await app.inject({ url: '/v1/people?limit=2&ordering=-name' })
  t.equal(page.statusCode, 200)
  const body = json(page)
  t.strictSame(body.results, [{ id: 'c', name: 'Cy' }, { id: 'b', name: 'Bob' }])
  t.match(body.paging, { limit: 2, next: { cursor: String, url: /^http:\/\/localhost:80\/v1\/people\?limit=2&cursor=/ }, previous: null })
  t.match(page.headers.etag, /^"/, 'a strong ETag over the page')
  const next = json(await app.inject({ url: new URL(body.paging.next.url as string).pathname + new URL(body.paging.next.url as string).search }))
  t.strictSame(next.results, [{ id: 'a', name: 'Ann' }])
  const search = await app.inject({ method: 'POST', url: '/v1/people/search', payload: { filter: 'name==Bob' } })
  t.strictSame(json(search).results, [{ id: 'b', name: 'Bob' }])
  const bad = await app.inject({ url: '/v1/people?limit=0' })
  t.equal(bad.statusCode, 400)
  t.equal(json(bad).title, 'Invalid Data')
  t.strictSame(json(await app.inject({ url: '/other' })), { collectionQuery: null }, 'the declared value on other routes')
})

t.test('webhooks: a delivery is verified, applied once by its id, and on request.webhook', async t => {
  const store = await memoryStore()
  const TOKEN = 'a-shared-token-of-the-producer-0001'
  const applied: unknown[] = []
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(webhooks, { store, allowHttp: true })
  })
  registerWebhook(app, {
    producer: 'billing',
    event: 'paid',
    verifier: sharedToken({ tokens: TOKEN }),
    handler: async (payload, _tx, request) => { applied.push([payload, request.webhook?.producer, request.webhook?.id]) }
  })
  app.get('/other', async (request) => ({ webhook: request.webhook }))
  const deliver = async (headers: Record<string, string>): Promise<number> =>
    (await app.inject({ method: 'POST', url: '/_webhooks/billing/paid', payload: '{"invoice":1}', headers: { 'content-type': 'application/json', ...headers } })).statusCode
  t.equal(await deliver({ 'webhook-id': 'd1' }), 401, 'no token')
  t.equal(await deliver({ authorization: `Bearer ${TOKEN}`, 'webhook-id': 'd1' }), 204)
  t.equal(await deliver({ authorization: `Bearer ${TOKEN}`, 'webhook-id': 'd1' }), 204, 'a repeated delivery is acknowledged')
  t.strictSame(applied, [[{ invoice: 1 }, 'billing', 'd1']], 'and applied once')
  t.strictSame(json(await app.inject({ url: '/other' })), { webhook: null }, 'the declared value on other routes')
})

t.test('rateLimit: 429 problem with Retry-After once the limit is used up', async t => {
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(rateLimit, { max: 1, timeWindow: '1 minute' })
  })
  app.get('/x', async () => ({ ok: true }))
  const first = await app.inject({ url: '/x' })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['ratelimit-limit'], '1')
  const second = await app.inject({ url: '/x' })
  t.equal(second.statusCode, 429)
  t.equal(second.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.match(json(second), { title: 'Too Many Requests', detail: /limit of 1 request per 1 minute/ })
  t.ok(Number(second.headers['retry-after']) > 0)
})

t.test('downstream: request.downstream is there alone, and calls with the request\'s own X-Request-ID', async t => {
  const seen: Array<string | undefined> = []
  const other = Fastify()
  other.get('/ping', async (request) => { seen.push(request.headers['x-request-id'] as string | undefined); return { ok: true } })
  await other.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => other.close())
  const app = await bare(t, async (app) => {
    await app.register(downstream, { service: { id: '7e0c1d1e-3c1e-4f7a-8d0a-2b5e8f9a1c3d', name: 'alone' }, userAgent: { product: 'alone', version: 1 } })
  })
  app.get('/x', async (request) => (await request.downstream.get(`${other.listeningOrigin}/ping`)).body)
  t.strictSame(json(await app.inject({ url: '/x', headers: { 'x-request-id': 'r-1' } })), { ok: true })
  t.strictSame(seen, ['r-1'])
})

t.test('lint: a route schema that breaks the conventions stops the boot', async t => {
  const app = await bare(t, async (app) => { await app.register(lint) })
  app.get('/v1/things', { schema: { response: { 200: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } } } }, async () => ({ name: 'a' }))
  await t.rejects(async () => {
    app.get('/v1/bad', { schema: { response: { 200: { type: 'object', properties: { first_name: { type: 'string', maxLength: 10 } } } } } }, async () => ({}))
    await app.ready()
  }, /svc-lint: .*first_name/s)
})

t.test('registered again in a child context with other options, a plugin keeps working: its request values are inherited, not declared twice', async t => {
  const store = await memoryStore()
  const cursorSecret = 'a test secret of at least 16 bytes'
  const app = await bare(t, async (app) => {
    await app.register(problem)
    await app.register(conventions)
    await app.register(auth, { verifier: { secret: SECRET }, required: false })
    await app.register(conditional)
    await app.register(query, { cursorSecret })
    await app.register(webhooks, { store, allowHttp: true })
  })
  const echo = async (request: FastifyRequest): Promise<unknown> => ({
    requestId: request.requestId,
    executionContext: request.executionContext,
    principal: request.principal?.sub ?? null,
    preconditions: request.preconditions,
    collectionQuery: request.collectionQuery,
    webhook: request.webhook
  })
  app.get('/echo', echo)
  await app.register(async (child) => {
    await child.register(problem)
    await child.register(conventions, { executionContext: { default: 'preprod' } })
    await child.register(auth, { verifier: { secret: SECRET } })
    await child.register(conditional, { notModified: false })
    await child.register(query, { cursorSecret, defaultLimit: 1 })
    await child.register(webhooks, { store, allowHttp: true, bodyLimit: 1000 })
    child.get('/echo', echo)
  }, { prefix: '/v2' })

  const headers = { 'user-agent': UA, 'x-request-id': 'r1', 'if-none-match': '"a"' }
  const preconditions = { ifMatch: null, ifNoneMatch: [{ weak: false, tag: '"a"' }], ifUnmodifiedSince: null }
  t.strictSame(json(await app.inject({ url: '/echo', headers })), { requestId: 'r1', executionContext: 'prod', principal: null, preconditions, collectionQuery: null, webhook: null })
  t.equal((await app.inject({ url: '/v2/echo', headers })).statusCode, 401, 'the child\'s auth needs a token')
  const token = signToken({ secret: SECRET, sub: 'u1' })
  t.strictSame(json(await app.inject({ url: '/v2/echo', headers: { ...headers, authorization: `Bearer ${token}` } })), { requestId: 'r1', executionContext: 'preprod', principal: 'u1', preconditions, collectionQuery: null, webhook: null })
})
