import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions, { type ConventionsOptions } from '../../plugins/conventions/index.js'
import methods from '../../plugins/methods/index.js'
import auth from '../../plugins/auth/index.js'
import rateLimit from '../../plugins/rate-limit/index.js'
import openapi from '../../plugins/openapi/index.js'
import { SECRET } from '../resource/helper.js'
import { inlineHeaders, type Doc } from './support.js'

// The document follows what the plugins registered on the app do, with their settings: the
// headers they send, the statuses they answer, the media types and scopes they check.

async function documentOf (app: FastifyInstance): Promise<{ raw: Doc, doc: Doc }> {
  await app.ready()
  const raw = app.swagger() as Doc
  return { raw, doc: inlineHeaders(raw) }
}

const names = (headers: Doc | undefined): string[] => Object.keys(headers ?? {})

t.test('with the conventions, methods, auth and rate-limit plugins', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { contentLanguage: 'fr-FR', contentTypes: ['application/json', 'application/vnd.svc-thing+json'] } satisfies ConventionsOptions)
  await app.register(methods)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(rateLimit)
  await app.register(openapi, { stateOnce: false })
  const thing = Type.Object({ id: Type.String({ maxLength: 10 }) })
  app.get('/v1/things/:thingId', {
    schema: { response: { 200: { ...thing, headers: { 'svc-thing-version': { type: 'string', maxLength: 10 } } } } },
    config: { auth: { scopes: ['things:read'] }, problems: [412] }
  }, async () => ({ id: '1' }))
  app.post('/v1/things', { schema: { body: thing }, config: { auth: { scopes: [] } } }, async () => ({}))
  app.get('/public', { config: { auth: false, rateLimit: false, conventions: { accept: false, userAgent: false, contentLanguage: false } } }, async () => ({}))
  app.get('/german', { config: { conventions: { contentLanguage: 'de-DE' } } }, async () => ({}))
  app.get('/own-options', async () => ({}))
  app.options('/own-options', { schema: { summary: 'Its own' } }, async () => null)
  app.route({ method: ['GET', 'POST'], url: '/multi', handler: async () => ({}) })
  app.post('/_webhooks/producer/event', { config: { auth: false, openapi: { internal: true } } }, async () => null)
  const { raw, doc } = await documentOf(app)
  t.teardown(() => app.close())

  const get = doc.paths['/v1/things/{thingId}'].get
  t.strictSame(get.security, [{ bearerAuth: ['things:read'] }], 'the scopes with the scheme')
  t.equal(doc.paths['/v1/things'].post.security, undefined, 'no scopes: the document\'s bearer security')
  t.strictSame(get.responses['200'].headers['Content-Language'].schema.examples, ['fr-FR'], 'the plugin\'s contentLanguage')
  t.strictSame(doc.paths['/german'].get.responses['200'].headers['Content-Language'].schema.examples, ['de-DE'], 'a route\'s own')
  t.ok(raw.components.headers.ContentLanguage2, 'a second shape of one header is a second component')
  t.strictSame(names(get.responses['200'].headers), ['X-Request-ID', 'Svc-Execution-Context', 'Content-Language', 'Cache-Control', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'ETag', 'Svc-Thing-Version'])
  t.strictSame(names(get.responses['401'].headers), ['X-Request-ID', 'Svc-Execution-Context', 'Content-Language', 'WWW-Authenticate'], 'refused before counting, without a token accepted')
  t.ok(get.responses['403'].headers['WWW-Authenticate'], 'insufficient_scope on a route with scopes')
  t.notOk(doc.paths['/v1/things'].post.responses['403'].headers['WWW-Authenticate'], 'none without scopes')
  t.notOk(doc.paths['/v1/things'].post.responses['415'].headers['RateLimit-Limit'], 'the Content-Type rule refuses before counting')
  t.ok(doc.paths['/v1/things'].post.responses['413'].headers['RateLimit-Limit'], 'a body too large is counted')
  t.strictSame(Object.keys(doc.paths['/v1/things'].post.requestBody.content), ['application/json', 'application/vnd.svc-thing+json'], 'the media types the route accepts')

  t.notOk(doc.paths['/v1/things/{thingId}'].head, 'HEAD: no operation of its own')
  t.match(doc.info.description, /`HEAD` is served wherever `GET` is/, 'the document says so once')

  const pub = doc.paths['/public'].get
  t.strictSame(Object.keys(pub.responses), ['200', '400', '500'], 'no token, no User-Agent or Accept rule, not counted: no 401, 403, 406, 429')
  t.strictSame(names(pub.responses['200'].headers), ['X-Request-ID', 'Svc-Execution-Context'])

  const options = doc.paths['/v1/things/{thingId}'].options
  t.equal(options.summary, 'Allow: GET, HEAD, OPTIONS')
  t.match(options.responses['204'].description, /Any other method answers 405 Method Not Allowed, with the same Allow header/, 'the 405 told once, by the shared 204')
  t.notMatch(options.responses['204'].description, /CORS/, 'no CORS plugin, no preflight')
  t.strictSame(options.parameters.filter((p: Doc) => p.in === 'path').map((p: Doc) => p.name), ['thingId'], 'the path parameters as the other operations declare them')
  t.strictSame(names(options.responses['204'].headers), ['X-Request-ID', 'Svc-Execution-Context', 'Content-Language', 'Allow'])
  t.notOk(options.responses['403'].headers['Svc-Cors-Error'])
  t.strictSame(options.security, [])
  t.equal(doc.paths['/own-options'].options.summary, 'Its own', 'a route of its own is kept')
  t.equal(doc.paths['/_webhooks/producer/event'].options['x-internal'], true, 'every operation of a webhook path is internal')
  t.notOk(doc.paths['/multi'].get.operationId, 'a route of several methods: one operation each, no one name')
})

t.test('without the conventions plugin: no Content-Language; without the problem plugin: no correlation id', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  await app.register(openapi, { stateOnce: false })
  app.get('/x', async () => ({}))
  const { doc } = await documentOf(app)
  t.teardown(() => app.close())
  t.strictSame(names(doc.paths['/x'].options.responses['204'].headers), ['X-Request-ID', 'Svc-Execution-Context', 'Allow'])
  t.strictSame(names(doc.paths['/x'].get.responses['200'].headers), ['X-Request-ID', 'Svc-Execution-Context'])
  t.equal(doc.paths['/x'].get.responses['200'].description, 'OK', 'a route without a success schema answers a 200 still')

  const bare = Fastify()
  await bare.register(openapi, { stateOnce: false })
  bare.get('/x', async () => ({}))
  const { doc: plain } = await documentOf(bare)
  t.teardown(() => bare.close())
  t.notOk(plain.paths['/x'].get.parameters?.some((p: Doc) => p.name === 'X-Request-ID'), 'nobody takes the id')
  t.notOk(plain.paths['/x'].get.responses['200'].headers?.['X-Request-ID'], 'nor echoes it')
  t.notOk(plain.paths['/x'].options, 'no OPTIONS operation without the methods plugin')
})

t.test('a HEAD route, declared or not, is no operation: the document says HEAD answers as GET once', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  await app.register(openapi, { stateOnce: false })
  app.get('/x', async () => ({}))
  app.head('/h', { schema: { response: { 200: { type: 'object', properties: { a: { type: 'string' } } } } } }, async () => undefined)
  const { doc } = await documentOf(app)
  t.teardown(() => app.close())
  t.notOk(doc.paths['/x'].head)
  t.notOk(doc.paths['/h'])
  t.match(doc.info.description, /`HEAD` is served wherever `GET` is/)
})

t.test('a route\'s own documentation: config.openapi description and headers', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(openapi, { stateOnce: false })
  const signed = { 'svc-signature': { type: 'string', maxLength: 100, description: 'Signature.' } }
  app.post('/signed', { schema: { description: 'Takes a signed body.' }, config: { openapi: { description: 'Signed by the producer.', headers: signed } } }, async () => null)
  app.post('/plain', { config: { openapi: { description: 'Only this.' } } }, async () => null)
  const { doc } = await documentOf(app)
  t.teardown(() => app.close())
  const op = doc.paths['/signed'].post
  t.equal(op.description, 'Takes a signed body.\n\nSigned by the producer.')
  t.strictSame(op.parameters.find((p: Doc) => p.name === 'Svc-Signature'), { schema: { type: 'string', maxLength: 100 }, in: 'header', name: 'Svc-Signature', required: true, description: 'Signature.' })
  t.equal(doc.paths['/plain'].post.description, 'Only this.')
})
