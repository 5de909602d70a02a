import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import swagger from '@fastify/swagger'
import openapi from '../../plugins/openapi/index.js'
import { inlineHeaders } from './support.js'

// Per operation and status (`stateOnce: false`), unless a test says otherwise: what each route gets.
async function build (opts = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, { stateOnce: false, ...opts })
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

const documentOf = (body: string): Doc => inlineHeaders(JSON.parse(body) as Doc)

t.test('every operation documents its problem responses, the conventional headers and bearer security', async t => {
  const app = await build({ info: { title: 'T', version: '2.0.0' } })
  const res = await app.inject({ url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = documentOf(res.body)
  t.equal(doc.openapi, '3.1.0')
  t.strictSame(doc.info, { title: 'T', version: '2.0.0', description: '`HEAD` is served wherever `GET` is, and answers as it would, without a body.' }, 'HEAD told once, not an operation per GET')
  t.strictSame(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.strictSame(doc.security, [{ bearerAuth: [] }])
  t.ok(doc.components.schemas.Problem, 'the problem schema is a shared component')

  const get = doc.paths['/v1/things/{thingId}'].get
  t.strictSame(Object.keys(get.responses).sort(), ['200', '304', '400', '401', '403', '404', '406', '409', '412', '429', '500'])
  t.strictSame(get.responses['409'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' })
  // Each status its own example, not the Problem schema's 400: [status, title].
  const statuses: Array<[string, string]> = [['400', 'Invalid Data'], ['401', 'Unauthorized'], ['403', 'Forbidden'], ['404', 'Not Found'], ['406', 'Not Acceptable'], ['409', 'Conflict'], ['412', 'Precondition Failed'], ['429', 'Too Many Requests'], ['500', 'Internal Server Error']]
  for (const [status, title] of statuses) {
    const media = get.responses[status].content['application/problem+json']
    t.match(media.example, { status: Number(status), title, requestId: String }, `${status}: an example of its own status`)
    t.equal(get.responses[status].description, status === '400' ? 'Invalid Data' : title, `${status}: described by its title`)
  }
  const headers = get.parameters.filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)
  t.strictSame(headers.sort(), ['If-Match', 'If-None-Match', 'If-Unmodified-Since', 'Svc-Execution-Context', 'Svc-Service', 'User-Agent', 'X-Request-ID'], 'no idempotency key on GET; conditions where 412 can come')
  t.equal(get.parameters.find((p: Doc) => p.name === 'User-Agent').required, true)

  const post = doc.paths['/v1/things'].post
  t.ok(post.responses['415'], 'a route with a body can answer 415')
  t.notOk(post.responses['404'], 'no 404 without path parameters')
  t.ok(post.parameters.some((p: Doc) => p.name === 'Svc-Idempotency-Key'), 'writes document the idempotency key')

  const hook = doc.paths['/_webhooks/scanner/document-scanned'].post
  t.equal(hook['x-internal'], true)
  t.strictSame(hook.security, [], 'no bearer token on a webhook')
  t.notOk(hook.responses['401'], 'no 401/403 documented for an unauthenticated route')
  t.notOk(hook.parameters?.some((p: Doc) => p.name === 'User-Agent'), 'no User-Agent rule where conventions are off')
  t.notOk(doc.paths['/hidden'], 'hidden routes stay hidden')
  const both = doc.paths['/v1/both/{id}']
  t.equal(both.get.responses['404'].description, 'Gone for good', 'a route\'s own response schema is kept')
  t.ok(both.delete.parameters.some((p: Doc) => p.name === 'Svc-Idempotency-Key'), 'a route with several methods: writes get the key')
  const self = doc.paths['/openapi.json'].get
  t.strictSame(self.security, [], 'the document describes itself, readable without a token')
  t.strictSame(Object.keys(self.responses).sort(), ['200', '400', '403', '406', '429', '500'], 'no 401; the User-Agent rule\'s 403')
  t.equal(self.responses['200'].description, 'The OpenAPI 3.1 document of every route of this service.')
  await app.close()
})

t.test('stateOnce (the default): common problems as each operation\'s default, the convention\'s headers once', async t => {
  const app = await build({ stateOnce: true })
  const raw = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as Doc
  const get = raw.paths['/v1/things/{thingId}'].get
  t.strictSame(Object.keys(get.responses).sort(), ['200', '304', '409', '412', 'default'], 'what the route itself refuses stays listed')
  const problems = raw.components.responses[get.responses.default.$ref.split('/').pop()]
  t.match(problems.description, /^A problem \(RFC 9457\): 400, 401, 403, 404, 406, 413, 415, 429 or 500, as the operation allows/)
  t.strictSame(Object.keys(problems.headers), ['Retry-After'], 'the headers of the statuses it stands for (no challenge without the auth plugin), not those stated once')
  t.strictSame(raw.paths['/v1/things'].post.responses.default, get.responses.default, 'one response for every operation whose problems carry the same headers')
  t.strictSame(raw['x-request-headers'].map((p: Doc) => p.name), ['User-Agent', 'X-Request-ID', 'Svc-Execution-Context', 'Svc-Service'])
  t.equal(raw['x-request-headers'][0].required, true, 'the User-Agent is required')
  t.strictSame(Object.keys(raw['x-response-headers']), ['X-Request-ID', 'Svc-Execution-Context'], 'no Content-Language without the conventions plugin')
  t.match(raw.info.description, /described once, not on each: requests send those of `x-request-headers` \(User-Agent, X-Request-ID, Svc-Execution-Context, Svc-Service\) and answers carry/)
  // The path's one operation: its path parameter and conditions are the path's (no OPTIONS without the methods plugin).
  t.strictSame(raw.paths['/v1/things/{thingId}'].parameters.map((p: Doc) => p.name), ['thingId', 'If-Match', 'If-None-Match', 'If-Unmodified-Since'])
  t.notOk('parameters' in get, 'nothing left of its own')
  const text = JSON.stringify(raw.paths)
  for (const name of ['User-Agent', 'X-Request-ID', 'Svc-Execution-Context', 'Svc-Service', 'Content-Language']) t.notOk(text.includes(`"${name}"`), `${name}: on no operation`)
  await app.close()
})

t.test('route declared headers are merged; commonProblems and routePrefix options', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, { commonProblems: [500], routePrefix: '/docs/openapi.json', stateOnce: false })
  app.put('/x', { schema: { headers: Type.Object({ 'if-match': Type.String() }) } }, async () => ({}))
  const doc = documentOf((await app.inject({ url: '/docs/openapi.json' })).body)
  const put = doc.paths['/x'].put
  t.strictSame(Object.keys(put.responses).sort(), ['200', '500'], 'only the common statuses, and the 200 of a route without a success schema')
  t.ok(put.parameters.some((p: Doc) => p.name === 'If-Match' && p.required === true), 'declared header kept and required')
  t.ok(put.parameters.some((p: Doc) => p.name === 'User-Agent'))
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
  // Each named, with the value given, rather than a document without a title or a 500 at its first request.
  const table: Array<[unknown, RegExp]> = [
    [{ info: 'Notes' }, /^openapi plugin: info must be \{ title, version, description\? \} of strings, got "Notes"$/],
    [{ info: {} }, /^openapi plugin: info must be .* got \{\}$/],
    [{ info: { title: 'Notes' } }, /^openapi plugin: info must be /],
    [{ info: { title: '', version: '1' } }, /^openapi plugin: info must be /],
    [{ info: { title: 1, version: '1' } }, /^openapi plugin: info must be /],
    [{ info: { title: 'Notes', version: 1 } }, /^openapi plugin: info must be /],
    [{ info: { title: 'Notes', version: '1', description: 5 } }, /^openapi plugin: info must be /],
    [{ servers: 'https://api.example.com' }, /^openapi plugin: servers must be an array of \{ url, description\? \} of strings, got "https:\/\/api\.example\.com"$/],
    [{ servers: [{ url: 'https://api.example.com' }, {}] }, /^openapi plugin: servers\[1\] must be \{ url, description\? \} of strings, got \{\}$/],
    [{ servers: [{ url: 5 }] }, /^openapi plugin: servers\[0\] must be /],
    [{ servers: [{ url: 'https://api.example.com', description: 5 }] }, /^openapi plugin: servers\[0\] must be /],
    [{ servers: [null] }, /^openapi plugin: servers\[0\] must be /],
    [{ commonProblems: 500 }, /^openapi plugin: commonProblems must be an array of 4xx\/5xx statuses, got 500$/]
  ]
  for (const [opts, message] of table) {
    await t.rejects(async () => { await Fastify().register(openapi, opts as never).ready() }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
  for (const problems of [[200], [999], [409.5], ['409'], '409', null]) {
    const app = Fastify()
    await app.register(openapi)
    await t.rejects(async () => { app.get('/v1/notes', { config: { problems } as never }, async () => ({})); await app.ready() },
      { name: 'TypeError', message: `openapi plugin: route GET /v1/notes: config.problems must be an array of 4xx/5xx statuses, got ${JSON.stringify(problems)}` }, `config.problems ${JSON.stringify(problems)}`)
    await app.close()
  }
  const app = Fastify()
  await app.register(openapi, { info: { title: 'Notes', version: '2', description: 'Notes of the team.' }, servers: [{ url: 'https://api.example.com', description: 'production' }, { url: '/' }] })
  const doc = documentOf((await app.inject({ url: '/openapi.json' })).body)
  t.strictSame([doc.info.title, doc.info.version, doc.servers.length], ['Notes', '2', 2], 'good ones are used as given')
  await app.close()
})

t.test('conditional requests and response headers', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, { stateOnce: false })
  const item = Type.Object({ id: Type.String() })
  app.get('/v1/things/:id', { schema: { response: { 200: item } }, config: { problems: [412] } }, async () => ({ id: '1' }))
  app.post('/v1/things', { schema: { response: { 201: item } } }, async () => ({ id: '1' }))
  app.put('/v1/things/:id', { schema: { response: { 204: Type.Null({ description: 'No Content' }) } }, config: { problems: [412, 428] } }, async () => null)
  // A collection read: the query plugin's `config.collection` (any value but false).
  app.get('/v1/things', { schema: { response: { 200: Type.Object({ results: Type.Array(item) }) } }, config: { collection: {} } as never }, async () => ({ results: [] }))
  app.get('/v1/plain', { schema: { response: { 200: item } }, config: { collection: false } as never }, async () => ({ id: '1' }))
  app.patch('/v1/things', { schema: { response: { 200: item } }, config: { problems: [412] } }, async () => ({ id: '1' }))
  app.post('/hook', { schema: { response: { 204: { type: 'null', description: 'Done', headers: { 'x-own': { type: 'string' } } } } }, config: { conventions: false } }, async () => null)
  // Rules switched off one by one: only their headers leave the document.
  app.post('/some-rules', { schema: { response: { 204: Type.Null({ description: 'No Content' }) } }, config: { conventions: { userAgent: false, executionContext: false } } as never }, async () => null)
  app.post('/other-rules', { schema: { response: { 204: Type.Null({ description: 'No Content' }) } }, config: { conventions: { serviceHeader: false, idempotencyKey: false } } as never }, async () => null)
  app.post('/no-rule-off', { schema: { response: { 204: Type.Null({ description: 'No Content' }) } }, config: { conventions: null } as never }, async () => null)
  const doc = documentOf((await app.inject({ url: '/openapi.json' })).body)
  const names = (op: Doc): string[] => op.parameters.filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)
  const paths = doc.paths

  const get = paths['/v1/things/{id}'].get
  t.ok(names(get).includes('If-Match') && names(get).includes('If-None-Match'), 'an item read honours both conditions')
  t.strictSame(Object.keys(get.responses['200'].headers).sort(), ['ETag', 'Svc-Execution-Context', 'X-Request-ID'])
  t.strictSame(get.responses['304'].headers.ETag.schema, { type: 'string', maxLength: 1024 }, '304 carries the ETag')
  t.notOk(get.responses['304'].content, 'a 304 has no body')
  t.notOk(paths['/v1/things/{id}'].head, 'HEAD is no operation of its own')

  const post = paths['/v1/things'].post
  t.strictSame(Object.keys(post.responses['201'].headers).sort(), ['ETag', 'Location', 'Svc-Execution-Context', 'X-Request-ID'])
  t.notOk(names(post).includes('If-Match'), 'no conditions where none are evaluated')
  t.strictSame(Object.keys(post.responses['429'].headers).sort(), ['Retry-After', 'Svc-Execution-Context', 'X-Request-ID'], 'RateLimit-* only where the rate-limit plugin counts')
  t.strictSame(Object.keys(post.responses['400'].headers).sort(), ['Svc-Execution-Context', 'X-Request-ID'], 'problems echo the correlation headers')

  const put = paths['/v1/things/{id}'].put
  t.ok(names(put).includes('If-Match'))
  t.notOk(put.responses['304'], 'no 304 for a write')
  t.strictSame(Object.keys(put.responses['204'].headers).sort(), ['Svc-Execution-Context', 'X-Request-ID'], 'no ETag on a 204')

  const list = paths['/v1/things'].get
  t.strictSame(names(list).filter(n => n.startsWith('If-')), ['If-None-Match'], 'a collection read honours If-None-Match only')
  t.ok(list.responses['200'].headers.ETag)
  t.ok(list.responses['304'])
  const plain = paths['/v1/plain'].get
  t.notOk(names(plain).includes('If-None-Match'), 'collection: false is no collection')
  t.notOk(plain.responses['200'].headers.ETag, 'no ETag where no condition is honoured')
  t.notOk(plain.responses['304'])

  const bulk = paths['/v1/things'].patch
  t.ok(names(bulk).includes('If-Match'))
  t.notOk(bulk.responses['304'], 'a write with conditions gives 412, never 304')
  t.notOk(bulk.responses['200'].headers.ETag)

  t.strictSame(names(paths['/some-rules'].post), ['X-Request-ID', 'Svc-Service', 'Svc-Idempotency-Key'], 'no User-Agent or execution context where their rules are off')
  t.strictSame(Object.keys(paths['/some-rules'].post.responses['204'].headers), ['X-Request-ID'], 'and no echoed execution context')
  t.strictSame(names(paths['/other-rules'].post), ['User-Agent', 'X-Request-ID', 'Svc-Execution-Context'], 'no Svc-Service or idempotency key where their rules are off')
  t.strictSame(names(paths['/no-rule-off'].post), ['User-Agent', 'X-Request-ID', 'Svc-Execution-Context', 'Svc-Service', 'Svc-Idempotency-Key'], 'a config of null switches nothing off')

  const hook = paths['/hook'].post
  t.strictSame(Object.keys(hook.responses['204'].headers), ['X-Request-ID', 'X-Own'], 'conventions off: the problem plugin still echoes X-Request-ID; the route\'s own headers are kept')
  t.strictSame(Object.keys(hook.responses['400'].headers), ['X-Request-ID'], 'and nothing else on a problem of a route without conventions')
  t.strictSame(names(hook), ['X-Request-ID'], 'its correlation id is still taken')
  await app.close()
})

t.test('shared schemas become components with $refs; resources give entities with examples', async t => {
  const Thing = Type.Object({ id: Type.String(), size: Type.Integer({ minimum: 1 }) })
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  // What the resource plugin decorates: the served definitions by collection.
  const bodies = (note: TSchema): Doc => ({ create: Type.Object({ note }), replace: Type.Object({ note, id: Type.Optional(Type.String()) }), patch: Type.Object({ note: Type.Optional(note) }) })
  const widgetEntity = Type.Object({ id: Type.String({ examples: ['w-1'] }), note: Type.Union([Type.String(), Type.Null()]) })
  const widget = { name: 'widget', api: { entity: widgetEntity, summary: Type.Object({ id: Type.String({ examples: ['w-1'] }) }), bodies: bodies(Type.Union([Type.String(), Type.Null()])) } }
  const odd = { name: 'odd', api: { entity: Type.Object({ code: Type.String({ pattern: '^[A-Z]+$' }) }), summary: Type.Object({ code: Type.String({ pattern: '^[A-Z]+$' }) }), bodies: bodies(Type.String()) } }
  app.decorate('resources', new Map([['widgets', { definition: widget }], ['odds', { definition: odd }]]) as never)
  await app.register(openapi, { components: { Thing } })
  app.get('/things/:id', { schema: { response: { 200: Thing } } }, async () => ({ id: '1', size: 1 }))
  app.get('/things', { schema: { response: { 200: Type.Object({ results: Type.Array(Thing) }) } } }, async () => ({ results: [] }))
  app.get('/widgets/:id', { schema: { response: { 200: widgetEntity } } }, async () => ({ id: 'w', note: null }))
  app.put('/widgets/:id', { schema: { body: widget.api.bodies.replace } }, async () => null)
  app.get('/widgets', { schema: { response: { 200: Type.Object({ results: Type.Array(widget.api.summary) }) } } }, async () => ({ results: [] }))
  const doc = documentOf((await app.inject({ url: '/openapi.json' })).body)
  const schemas = doc.components.schemas
  const body = (path: string): Doc => doc.paths[path].get.responses['200'].content['application/json'].schema
  t.strictSame(body('/things/{id}'), { $ref: '#/components/schemas/Thing' })
  t.strictSame(body('/things').properties.results.items, { $ref: '#/components/schemas/Thing' }, 'nested copies too')
  t.strictSame(schemas.Thing.required, ['id', 'size'])
  t.strictSame(body('/widgets/{id}'), { $ref: '#/components/schemas/Widget' })
  t.strictSame(body('/widgets').properties.results.items, { $ref: '#/components/schemas/WidgetSummary' })
  t.strictSame(schemas.Widget.examples, [{ id: 'w-1', note: null }], 'an entity example from its properties')
  t.strictSame(schemas.Odd.examples, undefined, 'no example where a required value cannot be made up')
  t.strictSame(doc.paths['/widgets/{id}'].put.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/WidgetReplacement' }, 'the write bodies are components')
  t.ok(schemas.WidgetCreate && schemas.WidgetPatch && schemas.OddReplacement)
  t.ok(schemas.CursorPaging && schemas.OffsetPaging && schemas.BulkResponse, 'the convention\'s shapes')
  t.strictSame(schemas.BulkResponse.properties.operations.items, { $ref: '#/components/schemas/BulkOperationResult' }, 'components refer to each other')
  t.equal(schemas.BulkResponse.examples[0].status, 'PARTIAL')
  await app.close()

  await t.rejects(async () => { await Fastify().register(openapi, { components: [] as never }).ready() }, TypeError, 'components must be an object')
  await t.rejects(async () => { await Fastify().register(openapi, { components: 'Thing' as never }).ready() }, TypeError)
  await t.rejects(async () => { await Fastify().register(openapi, { tokenHelp: 42 as never }).ready() }, /^openapi plugin: tokenHelp must be a non-empty string, got 42$/)
  await t.rejects(async () => { await Fastify().register(openapi, { stateOnce: 'yes' as never }).ready() }, /^openapi plugin: stateOnce must be a boolean, got "yes"$/)
  await t.rejects(async () => { await Fastify().register(openapi, { routePrefx: '/doc.json' } as never).ready() },
    /^openapi plugin: unknown option routePrefx \(did you mean routePrefix\?\); the options are info, servers, routePrefix, commonProblems, components, tokenHelp, stateOnce$/)
})

t.test('@fastify/swagger registered by the application before it: the boot stops, naming both and what to do', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { info: { title: 'Ours', version: '1' } } })
  await t.rejects(async () => { await app.register(openapi).ready() },
    /^openapi plugin: @fastify\/swagger is registered already; remove that registration: this plugin registers it itself/)
})

t.test('a server without HEAD routes (exposeHeadRoutes: false): the document does not say HEAD is served', async t => {
  const app = Fastify({ exposeHeadRoutes: false })
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(openapi, { info: { title: 'T', version: '1.0.0', description: 'Things.' } })
  app.get('/v1/things', async () => ({}))
  t.equal((await app.inject({ method: 'HEAD', url: '/v1/things' })).statusCode, 404, 'no HEAD route')
  const doc = documentOf((await app.inject({ url: '/openapi.json' })).body)
  t.notMatch(doc.info.description, /HEAD/)
  t.match(doc.info.description, /^Things\./)
})
