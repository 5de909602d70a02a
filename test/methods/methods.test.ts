import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'

async function build (t: Test, opts = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods, opts)
  app.get('/v1/authors', async () => ({ results: [] }))
  app.post('/v1/authors', async (_req, reply) => reply.code(201).send({ id: '1' }))
  app.route({ method: ['GET', 'PUT', 'PATCH', 'DELETE'], url: '/v1/authors/:authorId', handler: async (req) => ({ id: (req.params as { authorId: string }).authorId }) })
  app.get('/health', async () => ({ status: 'UP' }))
  app.options('*', async () => 'wildcard options route of some plugin')
  t.teardown(() => app.close())
  return app
}

t.test('OPTIONS answers 204 with Allow on every known path', async t => {
  const app = await build(t)
  const table: Array<[string, string]> = [
    ['/v1/authors', 'GET, HEAD, POST, OPTIONS'],
    ['/v1/authors/abc', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
    ['/health', 'GET, HEAD, OPTIONS']
  ]
  for (const [url, allow] of table) {
    t.equal(app.allowedMethods(url)?.join(', '), allow, `allowedMethods(${url})`)
  }
  t.equal(app.allowedMethods('/v1/nothing'), null)
  // The catch-all OPTIONS route's wildcard comes percent-decoded: it still says nothing of which paths exist.
  for (const url of ['/v1/nothing%41', '/v1/authors%2Fabc', '/v1/nothing/a%20b', '/%E2%82%AC', '/a%25b']) {
    t.equal(app.allowedMethods(url), null, `allowedMethods(${url})`)
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, `GET ${url}`)
  }
  t.equal(app.allowedMethods('/v1/authors/a%20b')?.join(', '), 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS', 'an escaped id')
  // A catch-all registered as `/*`, whose wildcard leaves out the first slash.
  const slashed = Fastify()
  t.teardown(() => slashed.close())
  await slashed.register(problem)
  await slashed.register(methods)
  slashed.options('/*', async () => 'wildcard')
  slashed.get('/a', async () => ({}))
  for (const url of ['/nothing', '/nothing%41']) t.equal((await slashed.inject({ url })).statusCode, 404, `/*: GET ${url}`)
})

t.test('OPTIONS answers are not for caches: Cache-Control no-store', async t => {
  const app = await build(t)
  for (const url of ['/v1/authors', '/v1/authors/abc', '/health']) {
    const res = await app.inject({ method: 'OPTIONS', url })
    t.equal(res.statusCode, 204, url)
    t.equal(res.headers['cache-control'], 'no-store', `OPTIONS ${url}`)
  }
  const get = await app.inject({ method: 'GET', url: '/health' })
  t.equal(get.headers['cache-control'], undefined, 'a GET is left to its route')
  // Without a catch-all OPTIONS route: an unknown path is the problem plugin's 404.
  const plain = Fastify()
  t.teardown(() => plain.close())
  await plain.register(problem)
  await plain.register(methods)
  plain.get('/a', async () => ({}))
  const unknown = await plain.inject({ method: 'OPTIONS', url: '/nowhere' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.headers['cache-control'], 'no-store', 'a refusal of an OPTIONS too (the problem plugin)')
  const missing = await plain.inject({ method: 'GET', url: '/nowhere' })
  t.equal(missing.headers['cache-control'], undefined, 'not the refusal of a GET')
})

t.test('a method the path lacks: 405 with Allow and a problem body naming the method', async t => {
  const app = await build(t)
  const table: Array<[string, string, string]> = [
    ['DELETE', '/v1/authors', 'GET, HEAD, POST, OPTIONS'],
    ['POST', '/v1/authors/abc', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
    ['PUT', '/health?x=1', 'GET, HEAD, OPTIONS']
  ]
  for (const [method, url, allow] of table) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow)
    const body = JSON.parse(res.body)
    t.equal(body.title, 'Method Not Allowed')
    t.match(body.detail, method)
  }
})

t.test('OPTIONS is answered by the methods plugin before a catch-all OPTIONS route only when no route matched', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  app.get('/a', async () => ({ a: 1 }))
  const res = await app.inject({ method: 'OPTIONS', url: '/a' })
  t.equal(res.statusCode, 204)
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal(res.body, '')
  const unknown = await app.inject({ method: 'OPTIONS', url: '/b' })
  t.equal(unknown.statusCode, 404, 'an unknown path stays 404 for OPTIONS too')
  await app.close()
})

async function things (t: Test): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  app.post('/v1/things/search', async () => ({ results: [] }))
  app.get('/v1/things/:id', async (req) => ({ id: (req.params as { id: string }).id }))
  app.delete('/v1/things/:id', async () => null)
  app.route({ method: ['PUT', 'PATCH'], url: '/v1/things/:id', handler: async () => null })
  app.get('/v1/things/:id/parts', async () => ({ results: [] }))
  // A child collection's search beside its item route: the fixed segment is not the first parameter.
  app.post('/v1/things/:id/parts/search', async () => ({ results: [] }))
  app.get('/v1/things/:id/parts/:partId', async () => ({ part: 1 }))
  t.teardown(() => app.close())
  return app
}

t.test('Allow is what the path serves: a fixed path beside a parametric one belongs to the route that names it', async t => {
  const app = await things(t)
  const table: Array<[string, string]> = [
    ['/v1/things/search', 'POST, OPTIONS'],
    ['/v1/things/42', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
    ['/v1/things/search/parts', 'GET, HEAD, OPTIONS'],
    ['/v1/things/42/parts/search', 'POST, OPTIONS'],
    ['/v1/things/42/parts/7', 'GET, HEAD, OPTIONS']
  ]
  for (const [url, allow] of table) {
    const res = await app.inject({ method: 'OPTIONS', url })
    t.equal(res.statusCode, 204, url)
    t.equal(res.headers.allow, allow, url)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: not for caches (Method rules 12)`)
    t.strictSame(app.allowedMethods(url), allow.split(', '), `allowedMethods(${url})`)
  }
  t.equal(app.allowedMethods('/v1/nothing'), null)
})

t.test('a parametric route does not serve a path that a route of another method names literally', async t => {
  const app = await things(t)
  // [method, url, status, Allow of a 405]
  const table: Array<[string, string, number, string | undefined]> = [
    ['GET', '/v1/things/search', 405, 'POST, OPTIONS'],
    ['HEAD', '/v1/things/search', 405, 'POST, OPTIONS'],
    ['PUT', '/v1/things/search', 405, 'POST, OPTIONS'],
    ['DELETE', '/v1/things/search?x=1', 405, 'POST, OPTIONS'],
    ['GET', '/v1/things/42/parts/search', 405, 'POST, OPTIONS'],
    ['POST', '/v1/things/search', 200, undefined],
    ['POST', '/v1/things/42/parts/search', 200, undefined],
    ['GET', '/v1/things/42', 200, undefined],
    ['GET', '/v1/things/search/parts', 200, undefined],
    ['GET', '/v1/things/42/parts/7', 200, undefined],
    ['POST', '/v1/things/42', 405, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS']
  ]
  for (const [method, url, status, allow] of table) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, status, `${method} ${url}`)
    t.equal(res.headers.allow, allow, `${method} ${url}`)
    if (status === 405 && method !== 'HEAD') t.match(JSON.parse(res.body), { title: 'Method Not Allowed', detail: new RegExp(`^The method ${method} is not supported at /v1/things/`) })
  }
})

t.test('a route with constraints is served where its parameters match (the lookups have no constraints)', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  app.route({ method: 'GET', url: '/v2/things/:id', constraints: { version: '2.0.0' }, handler: async () => ({ v: 2 }) })
  app.get('/v2/things/:id', async () => ({ v: 1 }))
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/v2/things/1', headers: { 'accept-version': '2.x' } })
  t.equal(res.statusCode, 200)
  t.strictSame(JSON.parse(res.body), { v: 2 })
})

t.test('routes constrained by host or version: 405 and OPTIONS where the request meets their constraints, as the router serves them', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  app.get('/v1/tenant', { constraints: { host: 'api.example.com' } }, async () => ({ host: true }))
  app.get('/v1/things', { constraints: { version: '1.0.0' } }, async () => ({ v: 1 }))
  app.get('/v1/plain', async () => ({ plain: true }))
  t.teardown(() => app.close())
  const api = { host: 'api.example.com' }
  const v1 = { 'accept-version': '1.x' }
  const table: Array<[string, string, Record<string, string>, number, string | undefined]> = [
    ['DELETE', '/v1/tenant', api, 405, 'GET, HEAD, OPTIONS'],
    ['OPTIONS', '/v1/tenant', api, 204, 'GET, HEAD, OPTIONS'],
    ['DELETE', '/v1/tenant', { host: 'other.example.com' }, 404, undefined],
    ['DELETE', '/v1/things', v1, 405, 'GET, HEAD, OPTIONS'],
    ['OPTIONS', '/v1/things', v1, 204, 'GET, HEAD, OPTIONS'],
    ['DELETE', '/v1/things', {}, 404, undefined],
    // No route is versioned here: the router ignores Accept-Version, and so does the lookup.
    ['DELETE', '/v1/plain', { ...v1, ...api }, 405, 'GET, HEAD, OPTIONS']
  ]
  for (const [method, url, headers, status, allow] of table) {
    const res = await app.inject({ method: method as 'GET', url, headers })
    t.equal(res.statusCode, status, `${method} ${url} ${JSON.stringify(headers)}`)
    t.equal(res.headers.allow, allow, `${method} ${url} ${JSON.stringify(headers)}`)
  }
  t.strictSame(app.allowedMethods('/v1/tenant', api), ['GET', 'HEAD', 'OPTIONS'])
  t.equal(app.allowedMethods('/v1/tenant'), null, 'without constraints, a constrained route is not found')
})

t.test('over HTTP/2, a host-constrained route is looked up by :authority, as the router does', async t => {
  const app = Fastify({ http2: true })
  await app.register(problem)
  await app.register(methods)
  app.get('/v1/tenant', { constraints: { host: 'api.example.com' } }, async () => ({ host: true }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const session = http2.connect(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`)
  t.teardown(() => session.close())
  const head = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    const req = session.request({ ':method': 'DELETE', ':path': '/v1/tenant', ':authority': 'api.example.com' })
    req.on('response', resolve).on('error', reject).resume()
    req.end()
  })
  t.equal(head[':status'], 405)
  t.equal(head.allow, 'GET, HEAD, OPTIONS')
})

t.test('without the cors plugin, a CORS preflight is an OPTIONS like any other: 204 with Allow', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } })
  t.equal(res.statusCode, 204)
  t.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.equal(res.headers['access-control-allow-origin'], undefined)
})

t.test('options: false leaves OPTIONS to other handlers (405 here)', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods, { options: false })
  app.get('/a', async () => ({ a: 1 }))
  const res = await app.inject({ method: 'OPTIONS', url: '/a' })
  t.equal(res.statusCode, 405)
  await app.close()
  await t.rejects(async () => { await Fastify().register(problem).register(methods, { options: 'yes' } as never).ready() }, TypeError)
})

t.test('HEAD mirrors GET without a body; .json suffixes select nothing', async t => {
  const app = await build(t)
  const get = await app.inject({ method: 'GET', url: '/v1/authors/abc' })
  const head = await app.inject({ method: 'HEAD', url: '/v1/authors/abc' })
  t.equal(head.statusCode, get.statusCode)
  t.equal(head.headers['content-type'], get.headers['content-type'])
  t.equal(head.body, '')
  const json = await app.inject({ url: '/health.json' })
  t.equal(json.statusCode, 404, 'no format selection by extension')
  const idWithDot = await app.inject({ url: '/v1/authors/abc.json' })
  t.strictSame(JSON.parse(idWithDot.body), { id: 'abc.json' }, 'a dotted segment is an identifier, not a format')
})

t.test('the app\'s router options hold for 405 and OPTIONS as for routing (routerOptions or the top-level ones)', async t => {
  // [server options, method, url, status, Allow]: what Fastify routes, the plugin finds alike.
  const table: Array<[Record<string, unknown>, string, string, number, string | undefined]> = [
    [{ routerOptions: { ignoreTrailingSlash: true } }, 'DELETE', '/health/', 405, 'GET, HEAD, OPTIONS'],
    [{ routerOptions: { ignoreTrailingSlash: true } }, 'OPTIONS', '/health/', 204, 'GET, HEAD, OPTIONS'],
    [{ ignoreTrailingSlash: true }, 'DELETE', '/health/', 405, 'GET, HEAD, OPTIONS'],
    [{}, 'DELETE', '/health/', 404, undefined],
    [{ routerOptions: { caseSensitive: false } }, 'DELETE', '/ITEMS', 405, 'GET, HEAD, POST, OPTIONS'],
    [{ caseSensitive: false }, 'OPTIONS', '/Items/42', 204, 'GET, HEAD, PUT, OPTIONS'],
    [{}, 'DELETE', '/ITEMS', 404, undefined],
    [{ routerOptions: { ignoreDuplicateSlashes: true } }, 'DELETE', '//items//42', 405, 'GET, HEAD, PUT, OPTIONS'],
    [{ routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } }, 'PATCH', '/Items/42/', 405, 'GET, HEAD, PUT, OPTIONS'],
    // Without HEAD routes, HEAD is not allowed either.
    [{ exposeHeadRoutes: false }, 'DELETE', '/items', 405, 'GET, POST, OPTIONS']
  ]
  for (const [server, method, url, status, allow] of table) {
    const app = Fastify(server)
    await app.register(problem)
    await app.register(methods)
    app.get('/items', async () => ({ results: [] }))
    app.post('/items', async () => ({}))
    app.route({ method: ['GET', 'PUT'], url: '/items/:id', handler: async () => ({}) })
    app.get('/health', async () => ({}))
    const res = await app.inject({ method: method as 'GET', url })
    const name = `${JSON.stringify(server)} ${method} ${url}`
    t.equal(res.statusCode, status, name)
    t.equal(res.headers.allow, allow, name)
    await app.close()
  }
})

t.test('routes registered before the plugin, or in another context of the app, count too', async t => {
  const app = Fastify()
  app.get('/early', async () => ({}))
  await app.register(async (child) => { child.put('/sibling', async () => ({})) })
  await app.register(problem)
  await app.register(methods)
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'DELETE', url: '/early' })).headers.allow, 'GET, HEAD, OPTIONS')
  t.equal((await app.inject({ method: 'GET', url: '/sibling' })).headers.allow, 'PUT, OPTIONS')
})

t.test('a name taken literally shadows a parameter wherever the routes were registered, and only where a parameter took it', async t => {
  const app = Fastify()
  // Before the plugin: the literal route, and a parametric one of its own.
  app.post('/v1/early/search', async () => ({}))
  app.get('/v1/early/:id', async () => ({ early: true }))
  await app.register(problem)
  await app.register(methods)
  app.get('/v1/late/:id', async () => ({ late: true }))
  app.post('/v1/late/search', async () => ({}))
  app.get('/v1/late/:id/:part', async () => ({ part: true }))
  app.get('/v1/blobs/*', async () => ({ blob: true }))
  app.post('/v1/blobs/search/latest', async () => ({}))
  // A parameter beside text in one segment.
  await app.register(async (child) => { child.get('/v1/files/:name.:ext', async () => ({ file: true })) })
  t.teardown(() => app.close())
  // [method, url, status, Allow]
  const table: Array<[string, string, number, string | undefined]> = [
    ['GET', '/v1/early/search', 405, 'POST, OPTIONS'],
    ['GET', '/v1/early/42', 200, undefined],
    ['GET', '/v1/late/search', 405, 'POST, OPTIONS'],
    ['GET', '/v1/late/SEARCH', 200, undefined],
    ['GET', '/v1/late/%73earch', 405, 'POST, OPTIONS'],
    ['GET', '/v1/late/42', 200, undefined],
    // `late` is a literal segment, but the route that takes it here takes it literally too.
    ['GET', '/v1/late/late', 200, undefined],
    ['GET', '/v1/late/42/search', 200, undefined],
    ['GET', '/v1/files/search.txt', 200, undefined],
    ['GET', '/v1/blobs/a/b', 200, undefined],
    ['GET', '/v1/blobs/a/search', 200, undefined],
    ['GET', '/v1/blobs/search/latest', 405, 'POST, OPTIONS']
  ]
  for (const [method, url, status, allow] of table) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, status, `${method} ${url}`)
    t.equal(res.headers.allow, allow, `${method} ${url}`)
  }
})
