import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import problem from '../../plugins/problem/index.js'
import conventions from '../../plugins/conventions/index.js'
import auth, { signToken } from '../../plugins/auth/index.js'
import conditional from '../../plugins/conditional/index.js'
import query from '../../plugins/query/index.js'
import { exposeField, routeConfigOf, stateOf, useRequestState, type PublicField } from '../../plugins/shared/request-state.js'

// The suite keeps every per-request value in one object under one request decoration; the
// public names are accessors over it. These tests hold that shape and what users see of it.

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'
const HEADERS = { 'user-agent': 'test/1 (request-state)', authorization: `Bearer ${signToken({ secret: SECRET, sub: 'u' })}` }

async function suite (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(conventions)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(conditional)
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  return app
}

function ownKeys (request: FastifyRequest): string[] {
  return Reflect.ownKeys(request).map(String).sort()
}

t.test('the suite adds one own property to a request, whatever it sets', async t => {
  const bare = Fastify()
  let bareKeys: string[] = []
  bare.get('/x', async (request) => { bareKeys = ownKeys(request); return {} })
  await bare.inject({ url: '/x' })

  const app = await suite()
  let keys: string[] = []
  let values: Record<string, unknown> = {}
  app.get('/x', { config: { conditional: {} } }, async (request) => {
    keys = ownKeys(request)
    values = { principal: request.principal?.sub, executionContext: request.executionContext, negotiatedType: request.negotiatedType, preconditions: request.preconditions }
    return {}
  })
  const res = await app.inject({ url: '/x', headers: { ...HEADERS, 'svc-execution-context': 'preprod', 'if-none-match': '"a"' } })
  t.equal(res.statusCode, 200)
  t.same(values, { principal: 'u', executionContext: 'preprod', negotiatedType: 'application/json', preconditions: { ifMatch: null, ifNoneMatch: [{ weak: false, tag: '"a"' }] } })
  t.same(keys.filter((k) => !bareKeys.includes(k)), ['Symbol(svc-conventions.requestState)'], 'one slot, not one property per value')
  await Promise.all([bare.close(), app.close()])
})

t.test('each public field reads its empty value until set, reads back what is set, and stays with its request', async t => {
  const app = Fastify()
  const fields: Array<[PublicField, unknown, unknown]> = [
    ['executionContext', '', 'preprod'],
    ['callingService', null, { id: '7d7c7a4e-0b8a-4a57-9b4b-3c7f0a1e2d3c', attributes: {} }],
    ['idempotencyKey', null, 'a-key-of-twenty-chars-or-more'],
    ['negotiatedType', null, 'application/json'],
    ['principal', null, { sub: 's', scopes: [], claims: {} }],
    ['preconditions', null, { ifMatch: '*', ifNoneMatch: null }],
    ['collectionQuery', null, { paging: { kind: 'offset', limit: 1, offset: 0, totalCount: false } }],
    ['webhook', null, { producer: 'p', id: null, rawBody: Buffer.alloc(0) }]
  ]
  for (const [name] of fields) exposeField(app, name)
  const seen: Array<Record<string, unknown>> = []
  app.get('/x', async (request) => {
    const r = request as unknown as Record<string, unknown>
    const before = Object.fromEntries(fields.map(([name]) => [name, r[name]]))
    if (request.query !== null && (request.query as Record<string, string>).set === '1') for (const [name, , value] of fields) r[name] = value
    seen.push({ before, after: Object.fromEntries(fields.map(([name]) => [name, r[name]])) })
    return {}
  })
  await app.inject({ url: '/x?set=1' })
  await app.inject({ url: '/x' })
  const empty = Object.fromEntries(fields.map(([name, initial]) => [name, initial]))
  const set = Object.fromEntries(fields.map(([name, , value]) => [name, value]))
  t.same(seen[0], { before: empty, after: set }, 'a write is read back')
  t.same(seen[1], { before: empty, after: empty }, 'the next request starts empty')
  await app.close()
})

t.test('a field is declared once: a second declaration throws as any decoration does', async t => {
  const app = Fastify()
  exposeField(app, 'principal')
  t.throws(() => { exposeField(app, 'principal') }, { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  useRequestState(app)
  t.doesNotThrow(() => { useRequestState(app) }, 'the slot itself may be asked for by every plugin')
  t.ok(app.hasRequestDecorator('principal'))
})

t.test('routeConfigOf reads the route config once per request; stateOf works without a declared slot', async t => {
  const app = Fastify()
  useRequestState(app)
  let same = false
  app.get('/x', { config: { auth: false } }, async (request) => {
    const first = routeConfigOf(request)
    same = routeConfigOf(request) === first && stateOf(request).routeConfig === first
    return { url: first.url, method: first.method, auth: first.auth }
  })
  const res = await app.inject({ url: '/x' })
  t.same(res.json(), { url: '/x', method: 'GET', auth: false })
  t.ok(same)
  // A Fastify instance none of the suite's plugins decorated: the state is still kept.
  const plain = Fastify()
  plain.get('/y', async (request) => {
    stateOf(request).negotiatedType = 'text/plain'
    return { type: stateOf(request).negotiatedType, url: routeConfigOf(request).url }
  })
  t.same((await plain.inject({ url: '/y' })).json(), { type: 'text/plain', url: '/y' })
  await Promise.all([app.close(), plain.close()])
})
