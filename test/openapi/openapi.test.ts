import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import openapi from '../../plugins/openapi/index.js'

async function build (opts = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, opts)
  app.get('/v1/things/:thingId', {
    schema: { params: Type.Object({ thingId: Type.String() }), response: { 200: Type.Object({ id: Type.String() }) } },
    config: { problems: [409, 412] }
  }, async () => ({ id: '1' }))
  app.post('/v1/things', { schema: { body: Type.Object({ name: Type.String() }) } }, async () => ({}))
  app.post('/_webhooks/scanner/document-scanned', { config: { auth: false, conventions: false, openapi: { internal: true } } }, async () => ({}))
  app.get('/hidden', { schema: { hide: true } }, async () => ({}))
  app.route({ method: ['GET', 'DELETE'], url: '/v1/both/:id', schema: { response: { 404: { description: 'Gone for good', type: 'object' } } }, handler: async () => ({}) })
  return app
}

type Doc = Record<string, any>

t.test('every operation documents its problem responses, the conventional headers and bearer security', async t => {
  const app = await build({ info: { title: 'T', version: '2.0.0' } })
  const res = await app.inject({ url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = JSON.parse(res.body) as Doc
  t.equal(doc.openapi, '3.1.0')
  t.same(doc.info, { title: 'T', version: '2.0.0' })
  t.same(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.same(doc.security, [{ bearerAuth: [] }])
  t.ok(doc.components.schemas.Problem, 'the problem schema is a shared component')

  const get = doc.paths['/v1/things/{thingId}'].get
  t.same(Object.keys(get.responses).sort(), ['200', '400', '401', '403', '404', '406', '409', '412', '429', '500'])
  t.same(get.responses['409'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' })
  t.equal(get.responses['412'].description, 'Precondition Failed')
  const headers = get.parameters.filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)
  t.same(headers.sort(), ['svc-execution-context', 'svc-service', 'user-agent', 'x-request-id'], 'no idempotency key on GET')
  t.equal(get.parameters.find((p: Doc) => p.name === 'user-agent').required, true)

  const post = doc.paths['/v1/things'].post
  t.ok(post.responses['415'], 'a route with a body can answer 415')
  t.notOk(post.responses['404'], 'no 404 without path parameters')
  t.ok(post.parameters.some((p: Doc) => p.name === 'svc-idempotency-key'), 'writes document the idempotency key')

  const hook = doc.paths['/_webhooks/scanner/document-scanned'].post
  t.equal(hook['x-internal'], true)
  t.same(hook.security, [], 'no bearer token on a webhook')
  t.notOk(hook.responses['401'], 'no 401/403 documented for an unauthenticated route')
  t.notOk(hook.parameters?.some((p: Doc) => p.name === 'user-agent'), 'no User-Agent rule where conventions are off')
  t.notOk(doc.paths['/hidden'], 'hidden routes stay hidden')
  const both = doc.paths['/v1/both/{id}']
  t.equal(both.get.responses['404'].description, 'Gone for good', 'a route\'s own response schema is kept')
  t.ok(both.delete.parameters.some((p: Doc) => p.name === 'svc-idempotency-key'), 'a route with several methods: writes get the key')
  t.notOk(doc.paths['/openapi.json'], 'the document does not describe itself')
  await app.close()
})

t.test('route declared headers are merged; commonProblems and routePrefix options', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, { commonProblems: [500], routePrefix: '/docs/openapi.json' })
  app.put('/x', { schema: { headers: Type.Object({ 'if-match': Type.String() }) } }, async () => ({}))
  const doc = JSON.parse((await app.inject({ url: '/docs/openapi.json' })).body) as Doc
  const put = doc.paths['/x'].put
  t.same(Object.keys(put.responses).sort(), ['500'], 'only the declared and the common statuses')
  t.ok(put.parameters.some((p: Doc) => p.name === 'if-match' && p.required === true), 'declared header kept and required')
  t.ok(put.parameters.some((p: Doc) => p.name === 'user-agent'))
  t.equal((await app.inject({ url: '/openapi.json' })).statusCode, 404)
  await app.close()

  const none = Fastify()
  await none.register(openapi, { routePrefix: false })
  await none.ready()
  t.equal((await none.inject({ url: '/openapi.json' })).statusCode, 404, 'routePrefix false serves no document')
  t.type(none.swagger(), 'object', 'the document stays available in code')
  await none.close()
})

t.test('options are checked at registration', async t => {
  for (const opts of [{ commonProblems: [200] }, { commonProblems: [4.5] }, { routePrefix: 'openapi.json' }, { routePrefix: 7 }]) {
    await t.rejects(async () => { await Fastify().register(openapi, opts as never).ready() }, TypeError, JSON.stringify(opts))
  }
})
