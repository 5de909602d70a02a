import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import conditional, { evaluateRead, type ConditionalPluginOptions } from '../../plugins/conditional/index.js'

async function build (t: Test, opts: ConditionalPluginOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(conditional, opts)
  // A route that sets an ETag and leaves If-None-Match to the plugin (like a collection).
  app.get('/tagged', async (_request, reply) => { reply.header('etag', '"v1"'); return { ok: true } })
  app.get('/untagged', async () => ({ ok: true }))
  app.get('/missing', async (_request, reply) => { reply.header('etag', '"v1"'); return await reply.code(404).send({ gone: true }) })
  app.post('/tagged', async (_request, reply) => { reply.header('etag', '"v1"'); return { ok: true } })
  app.get('/off', { config: { conditional: false } }, async (request) => ({ preconditions: request.preconditions }))
  app.get('/parsed', async (request) => ({ preconditions: request.preconditions }))
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    app.route({ method, url: '/required', config: { conditional: { requireIfMatch: true } }, handler: async (_r, reply) => await reply.code(204).send() })
    app.route({ method, url: '/strict', config: { conditional: { requireIfMatch: true, createWithIfNoneMatch: false } }, handler: async (_r, reply) => await reply.code(204).send() })
    app.route({ method, url: '/optional', config: { conditional: {} }, handler: async (_r, reply) => await reply.code(204).send() })
  }
  t.teardown(() => app.close())
  return app
}

t.test('the parsed headers are on the request; a route can switch them off', async t => {
  const app = await build(t)
  const parsed = await app.inject({ url: '/parsed', headers: { 'if-match': '"a", W/"b"', 'if-none-match': '*', 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' } })
  t.strictSame(JSON.parse(parsed.body).preconditions, { ifMatch: [{ weak: false, tag: '"a"' }, { weak: true, tag: '"b"' }], ifNoneMatch: '*', ifUnmodifiedSince: Date.UTC(1994, 10, 6, 8, 49, 37) })
  const since = await app.inject({ url: '/parsed', headers: { 'if-unmodified-since': 'Sun Nov  6 08:49:37 1994' } })
  t.strictSame(JSON.parse(since.body).preconditions, { ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: Date.UTC(1994, 10, 6, 8, 49, 37) }, 'If-Unmodified-Since alone, in asctime form')
  const none = await app.inject({ url: '/parsed' })
  t.strictSame(JSON.parse(none.body).preconditions, { ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: null })
  const off = await app.inject({ url: '/off', headers: { 'if-match': 'garbage' } })
  t.equal(off.statusCode, 200)
  t.strictSame(JSON.parse(off.body).preconditions, null)
})

t.test('routes of a context created before the plugin get the parsed headers and its problems too', async t => {
  const app = Fastify()
  await app.register(problem)
  // Registered first, like the reference service's /health and docs pages.
  await app.register(async (early) => {
    early.get('/early', async (request) => ({ preconditions: request.preconditions }))
  })
  await app.register(conditional)
  t.teardown(() => app.close())
  for (const method of ['GET', 'HEAD'] as const) {
    const bad = await app.inject({ method, url: '/early', headers: { 'if-match': 'garbage' } })
    t.equal(bad.statusCode, 400, method)
    t.match(bad.headers['content-type'], /^application\/problem\+json/, method)
    if (method === 'GET') t.match(JSON.parse(bad.body), { title: 'Invalid Data', context: [{ code: 'INPUT_INVALID', field: 'If-Match', value: 'garbage' }] })
  }
  const parsed = await app.inject({ url: '/early', headers: { 'if-none-match': '"a"' } })
  t.strictSame(JSON.parse(parsed.body).preconditions, { ifMatch: null, ifNoneMatch: [{ weak: false, tag: '"a"' }], ifUnmodifiedSince: null })
  const none = await app.inject({ url: '/early' })
  t.strictSame(JSON.parse(none.body).preconditions, { ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: null })
})

t.test('a malformed header is 400 Invalid Data with one item per header', async t => {
  const app = await build(t)
  const res = await app.inject({ url: '/parsed', headers: { 'if-match': 'nope', 'if-none-match': '"a', 'if-unmodified-since': '2026-01-01T00:00:00Z' } })
  t.equal(res.statusCode, 400)
  const body = JSON.parse(res.body)
  t.equal(body.title, 'Invalid Data')
  t.strictSame(body.context.map((c: Record<string, string>) => [c.code, c.field, c.source, c.value]), [
    ['INPUT_INVALID', 'If-Match', 'header', 'nope'],
    ['INPUT_INVALID', 'If-None-Match', 'header', '"a'],
    ['INPUT_INVALID', 'If-Unmodified-Since', 'header', '2026-01-01T00:00:00Z']
  ])
  t.match(body.context[2].message, /HTTP date such as Sun, 06 Nov 1994 08:49:37 GMT/)
  const alone = await app.inject({ url: '/parsed', headers: { 'if-unmodified-since': 'yesterday' } })
  t.equal(alone.statusCode, 400, 'a malformed If-Unmodified-Since alone')
})

t.test('requireIfMatch: 428 naming the header; If-None-Match: * lets a PUT create', async t => {
  const app = await build(t)
  const table: Array<[string, string, Record<string, string>, number]> = [
    ['PUT', '/required', {}, 428],
    ['PATCH', '/required', {}, 428],
    ['DELETE', '/required', {}, 428],
    ['PUT', '/required', { 'if-match': '"x"' }, 204],
    ['PUT', '/required', { 'if-none-match': '*' }, 204],
    ['PATCH', '/required', { 'if-none-match': '*' }, 428],
    ['PUT', '/required', { 'if-none-match': '"x"' }, 428],
    ['PUT', '/strict', { 'if-none-match': '*' }, 428],
    ['DELETE', '/strict', { 'if-match': '*' }, 204],
    ['DELETE', '/optional', {}, 204]
  ]
  for (const [method, url, headers, status] of table) {
    const res = await app.inject({ method, url, headers })
    t.equal(res.statusCode, status, `${method} ${url} ${JSON.stringify(headers)}`)
    if (status === 428) {
      const body = JSON.parse(res.body)
      t.equal(body.title, 'Precondition Required')
      t.match(body.detail, 'If-Match')
      t.equal(body.instance, url)
      t.equal(body.detail.includes('If-None-Match: *'), method === 'PUT' && url === '/required')
    }
  }
})

t.test('GET with a matching If-None-Match on a route that sets ETag: 304 without a body', async t => {
  const app = await build(t)
  const table: Array<[string, string, string | undefined, number]> = [
    ['GET', '/tagged', '"v1"', 304],
    ['HEAD', '/tagged', 'W/"v1"', 304],
    ['GET', '/tagged', '"v2"', 200],
    ['GET', '/tagged', undefined, 200],
    ['GET', '/untagged', '*', 200],
    ['GET', '/missing', '"v1"', 404],
    ['POST', '/tagged', '"v1"', 200]
  ]
  for (const [method, url, inm, status] of table) {
    const res = await app.inject({ method: method as 'GET', url, headers: inm === undefined ? {} : { 'if-none-match': inm } })
    t.equal(res.statusCode, status, `${method} ${url} ${String(inm)}`)
    if (status === 304) {
      t.equal(res.body, '')
      t.equal(res.headers.etag, '"v1"')
      t.notOk(res.headers['content-type'])
      if (method === 'GET') t.notOk(res.headers['content-length'])
    }
  }
})

t.test('notModified: false leaves 304s to the routes', async t => {
  const app = await build(t, { notModified: false })
  const res = await app.inject({ url: '/tagged', headers: { 'if-none-match': '"v1"' } })
  t.equal(res.statusCode, 200)
})

t.test('evaluateRead', async t => {
  const since = { ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: Date.UTC(2026, 0, 1) }
  t.equal(evaluateRead(since, '"a"', '/x', '2025-12-31T23:59:59.000Z'), false, 'not modified since')
  t.equal(evaluateRead(since, '"a"', '/x'), false, 'no modification date: ignored')
  try {
    evaluateRead(since, '"a"', '/x', '2026-01-01T00:00:01.000Z')
    t.fail('did not throw')
  } catch (err) {
    t.match(err, { statusCode: 412, detail: '/x has changed since the date in If-Unmodified-Since; read it without the condition.' }, 'modified since: 412')
  }
  t.equal(evaluateRead(null, '"a"', '/x'), false)
  t.equal(evaluateRead({ ifMatch: null, ifNoneMatch: null }, '"a"', '/x'), false)
  t.equal(evaluateRead({ ifMatch: null, ifNoneMatch: '*' }, '"a"', '/x'), true)
  try {
    evaluateRead({ ifMatch: [{ weak: false, tag: '"b"' }], ifNoneMatch: null }, '"a"', '/x')
    t.fail('did not throw')
  } catch (err) {
    t.match(err, { statusCode: 412, instance: '/x', detail: /If-Match/ })
  }
})

t.test('options and route configs are checked at registration', async t => {
  const options: Array<[unknown, RegExp]> = [
    [{ notModified: 'yes' }, /notModified must be a boolean, got "yes"/],
    [{ notModifed: false }, /^conditional plugin: unknown option notModifed \(did you mean notModified\?\); the options are notModified$/]
  ]
  for (const [opts, message] of options) {
    const bad = Fastify()
    await bad.register(problem)
    await t.rejects(async () => { await bad.register(conditional, opts as never); await bad.ready() }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
  const configs: Array<[unknown, RegExp]> = [
    [true, /config\.conditional of PUT \/x must be false or/],
    [null, /config\.conditional of PUT \/x must be false or/],
    [{ requireIfMatch: 'yes' }, /config\.conditional of PUT \/x must be false or/],
    [{ createWithIfNoneMatch: 1 }, /config\.conditional of PUT \/x must be false or/],
    // Misspelt, the rule would be ignored and the route take writes without If-Match.
    [{ requireIfMach: true }, /^conditional plugin: route PUT \/x: unknown option config\.conditional\.requireIfMach \(did you mean config\.conditional\.requireIfMatch\?\); config\.conditional takes requireIfMatch, createWithIfNoneMatch$/]
  ]
  for (const [config, message] of configs) {
    const app = Fastify()
    await app.register(problem)
    await app.register(conditional)
    t.throws(() => app.put('/x', { config: { conditional: config as false } }, async () => ({})), { name: 'TypeError', message }, JSON.stringify(config))
  }
})
