import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'
import auth, { signToken } from '../../plugins/auth/index.js'
import fastifyCors from '@fastify/cors'
import cors, { DEFAULT_ALLOWED_HEADERS, DEFAULT_EXPOSED_HEADERS, DEFAULT_METHODS, type CorsPluginOptions } from '../../plugins/cors/index.js'

const APP = 'https://app.example.com'
const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

async function build (t: Test, opts: CorsPluginOptions = { origins: [APP, /^https:\/\/[a-z0-9]+\.preview\.example\.com$/g] }): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(cors, opts)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(methods)
  app.get('/v1/authors', { config: { auth: { scopes: ['authors:read'] } } }, async () => ({ results: [] }))
  app.post('/v1/authors', async () => ({ ok: true }))
  app.get('/health', { config: { auth: false } }, async () => ({ status: 'UP' }))
  t.teardown(() => app.close())
  return app
}

function bodyOf (res: { body: string }): Record<string, any> {
  return JSON.parse(res.body)
}

const preflight = (origin: string, method: string, headers?: string): Record<string, string> => ({
  origin,
  'access-control-request-method': method,
  ...(headers === undefined ? {} : { 'access-control-request-headers': headers })
})

t.test('accepted preflights: 204 with explicit lists, the origin echoed, no token needed', async t => {
  const app = await build(t)
  const table: Array<[string, string, Record<string, string>]> = [
    ['exact origin, simple method', '/v1/authors', preflight(APP, 'GET')],
    ['RegExp origin', '/v1/authors', preflight('https://pr42.preview.example.com', 'GET')],
    ['RegExp origin again (global flag state is reset)', '/v1/authors', preflight('https://pr43.preview.example.com', 'GET')],
    ['requested headers, mixed case and spaces', '/v1/authors', preflight(APP, 'POST', 'authorization, Content-Type,X-REQUEST-ID , svc-idempotency-key')],
    ['empty items in the header list', '/v1/authors', preflight(APP, 'PATCH', ' , if-match,')],
    ['path with a query', '/v1/authors?limit=5', preflight(APP, 'DELETE')],
    ['unknown path: the lists do not depend on it', '/v1/nothing', preflight(APP, 'PUT')]
  ]
  for (const [name, url, headers] of table) {
    const res = await app.inject({ method: 'OPTIONS', url, headers })
    t.equal(res.statusCode, 204, `${name}: status`)
    t.equal(res.headers['access-control-allow-origin'], headers.origin, `${name}: origin echoed`)
    t.equal(res.headers['access-control-allow-methods'], DEFAULT_METHODS.join(', '), `${name}: methods`)
    t.equal(res.headers['access-control-allow-headers'], DEFAULT_ALLOWED_HEADERS.join(', '), `${name}: headers`)
    t.equal(res.headers['access-control-max-age'], '600', `${name}: max age`)
    t.equal(res.headers['cache-control'], 'no-store', `${name}: not for HTTP caches (Method rules 12)`)
    t.equal(res.headers['access-control-allow-credentials'], undefined, `${name}: no credentials by default`)
    t.equal(res.headers.vary, 'Origin', `${name}: Vary`)
    t.equal(res.headers['svc-cors-error'], undefined)
    t.equal(res.body, '', `${name}: no body`)
    for (const [key, value] of Object.entries(res.headers)) {
      if (key.startsWith('access-control-')) t.notMatch(String(value), /\*/, `${name}: no * in ${key}`)
    }
  }
})

t.test('refused preflights: 403 problem with Svc-Cors-Error, detail naming path and value', async t => {
  const app = await build(t)
  const table: Array<[string, Record<string, string>, string, RegExp]> = [
    ['unknown origin', preflight('https://evil.example.com', 'GET'), 'bad origin', /\/v1\/authors was refused: the origin https:\/\/evil\.example\.com is not allowed/],
    ['origin differing in scheme', preflight('http://app.example.com', 'GET'), 'bad origin', /origin http:\/\/app\.example\.com/],
    ['origin with a port', preflight('https://app.example.com:8443', 'GET'), 'bad origin', /origin https:\/\/app\.example\.com:8443/],
    ['opaque origin', preflight('null', 'GET'), 'bad origin', /origin null/],
    ['unanchored-looking attack on the RegExp', preflight('https://pr1.preview.example.com.evil.net', 'GET'), 'bad origin', /is not allowed/],
    ['very long origin is cut short', preflight(`https://${'a'.repeat(200)}.example.com`, 'GET'), 'bad origin', /origin https:\/\/a{92}… is not allowed/],
    ['method not in the list', preflight(APP, 'OPTIONS'), 'bad method', /the method OPTIONS is not allowed; use one of GET, HEAD, POST, PUT, PATCH, DELETE/],
    ['method compared case-sensitively (Fetch)', preflight(APP, 'patch'), 'bad method', /the method patch is not allowed/],
    ['custom method', preflight(APP, 'PURGE'), 'bad method', /PURGE/],
    ['one header not allowed', preflight(APP, 'POST', 'content-type, x-secret-header'), 'bad header', /the header x-secret-header is not allowed/],
    ['wildcard header asked', preflight(APP, 'GET', '*'), 'bad header', /the header \* is not allowed/],
    ['origin checked before method and headers', preflight('https://evil.example.com', 'PURGE', 'x-a'), 'bad origin', /origin/]
  ]
  for (const [name, headers, reason, detail] of table) {
    const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors?x=1', headers: { ...headers, 'x-request-id': 'req-9' } })
    t.equal(res.statusCode, 403, `${name}: status`)
    t.equal(res.headers['svc-cors-error'], reason, `${name}: Svc-Cors-Error`)
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', `${name}: problem media type`)
    const body = bodyOf(res)
    t.equal(body.title, 'Forbidden', `${name}: title`)
    t.equal(body.status, 403)
    t.equal(body.requestId, 'req-9', `${name}: requestId from the problem plugin`)
    t.equal(body.instance, '/v1/authors', `${name}: instance is the path`)
    t.match(body.detail, detail, `${name}: detail`)
    t.equal(res.headers['access-control-allow-origin'], undefined, `${name}: no allow-origin on a refusal`)
    t.equal(res.headers.vary, 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers', `${name}: Vary`)
  }
})

t.test('a RegExp origin must match the whole origin, also when it alternates between branches', async t => {
  // Each branch anchored at one end only, as written: ^(a|b)$ is meant.
  const app = await build(t, { origins: [/^https:\/\/one\.example\.com|https:\/\/two\.example\.com$/] })
  const table: Array<[string, number]> = [
    ['https://one.example.com', 204],
    ['https://two.example.com', 204],
    ['https://one.example.com.evil.net', 403],
    ['https://evil.net/https://two.example.com', 403],
    ['https://evil.nethttps://two.example.com', 403]
  ]
  for (const [origin, status] of table) {
    const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(origin, 'GET') })
    t.equal(res.statusCode, status, origin)
    t.equal(res.headers['access-control-allow-origin'], status === 204 ? origin : undefined, `${origin}: Allow-Origin`)
    const actual = await app.inject({ method: 'GET', url: '/health', headers: { origin } })
    t.equal(actual.headers['access-control-allow-origin'], status === 204 ? origin : undefined, `${origin}: actual request`)
  }
})

t.test('no origins configured: every cross-origin preflight is refused', async t => {
  const app = await build(t, {})
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'GET') })
  t.equal(res.statusCode, 403)
  t.equal(res.headers['svc-cors-error'], 'bad origin')
  const plain = await app.inject({ url: '/health' })
  t.equal(plain.headers.vary, undefined, 'nothing can vary by Origin')
  const actual = await app.inject({ url: '/health', headers: { origin: APP } })
  t.equal(actual.statusCode, 200)
  t.equal(actual.headers['access-control-allow-origin'], undefined)
})

t.test('what the service sends and reads beyond the basics: a page may send and read it, by default', async t => {
  const app = await build(t)
  // The headers a service of the plugins answers with, by feature, as the jobs, csv and files
  // plugins and the methods plugin write them.
  app.post('/v1/reports', { config: { auth: false } }, async (_request, reply) => reply.code(202)
    .header('link', '</v1/jobs/1>; rel="monitor"').header('preference-applied', 'respond-async')
    .header('content-disposition', 'attachment; filename="r.csv"').send({ id: '1' }))
  // Requested headers, one preflight each: Prefer asks for asynchronous processing, Content-Disposition names an upload.
  for (const name of ['Prefer', 'prefer', 'Content-Disposition']) {
    const res = await app.inject({ method: 'OPTIONS', url: '/v1/reports', headers: preflight(APP, 'POST', name) })
    t.equal(res.statusCode, 204, `${name} may be sent`)
  }
  const accepted = await app.inject({ method: 'POST', url: '/v1/reports', headers: { origin: APP, prefer: 'respond-async' } })
  t.equal(accepted.statusCode, 202)
  const exposed = String(accepted.headers['access-control-expose-headers']).toLowerCase().split(', ')
  for (const name of ['link', 'preference-applied', 'content-disposition']) {
    t.ok(name in accepted.headers, `${name} is sent`)
    t.ok(exposed.includes(name), `${name} may be read`)
  }
  const refused = await app.inject({ method: 'DELETE', url: '/v1/authors', headers: { origin: APP } })
  t.equal(refused.statusCode, 405)
  t.ok(typeof refused.headers.allow === 'string' && exposed.includes('allow'), 'the Allow of a 405 may be read')
})

t.test('actual requests: allowed origins may read, others are served without CORS headers', async t => {
  const app = await build(t)
  const token = signToken({ secret: SECRET, sub: 'u', scope: 'authors:read' })
  const allowed = await app.inject({ url: '/v1/authors', headers: { origin: APP, authorization: `Bearer ${token}` } })
  t.equal(allowed.statusCode, 200)
  t.equal(allowed.headers['access-control-allow-origin'], APP)
  t.equal(allowed.headers['access-control-expose-headers'], DEFAULT_EXPOSED_HEADERS.join(', '))
  t.equal(allowed.headers['access-control-allow-methods'], undefined, 'preflight headers only on preflights')
  t.equal(allowed.headers.vary, 'Origin')

  const refusedByAuth = await app.inject({ url: '/v1/authors', headers: { origin: APP } })
  t.equal(refusedByAuth.statusCode, 401)
  t.equal(refusedByAuth.headers['access-control-allow-origin'], APP, 'the browser may read the 401 problem')

  const other = await app.inject({ url: '/health', headers: { origin: 'https://evil.example.com' } })
  t.equal(other.statusCode, 200, 'CORS is not access control: the request is served')
  t.equal(other.headers['access-control-allow-origin'], undefined, 'without Allow-Origin the browser keeps the response from the script')
  t.equal(other.headers['access-control-expose-headers'], undefined, 'and no other CORS header')
  t.equal(other.headers.vary, 'Origin')

  const sameOrigin = await app.inject({ url: '/health' })
  t.equal(sameOrigin.headers['access-control-allow-origin'], undefined)
  t.equal(sameOrigin.headers['access-control-expose-headers'], undefined, 'no CORS headers on a same-origin request')
  t.equal(sameOrigin.headers.vary, 'Origin', 'Vary also without Origin, for shared caches')
})

t.test('the gate in front of @fastify/cors answers as the library would, and leaves it the requests with an Origin', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(cors, { origins: [APP] })
  app.get('/open', async () => ({ ok: true }))
  app.get('/closed', { config: { cors: false } }, async () => ({ ok: true }))
  // A same-origin route the library is switched off for (its own route option) gets nothing, Origin or not.
  const table: Array<[string, Record<string, string>, string | undefined, string | undefined]> = [
    ['/open', {}, 'Origin', undefined],
    ['/open', { origin: APP }, 'Origin', APP],
    ['/open', { origin: 'https://evil.example.com' }, 'Origin', undefined],
    ['/closed', {}, undefined, undefined],
    ['/closed', { origin: APP }, undefined, undefined]
  ]
  for (const [url, headers, vary, allowOrigin] of table) {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 200)
    t.equal(res.headers.vary, vary, `${url} ${JSON.stringify(headers)}: Vary`)
    t.equal(res.headers['access-control-allow-origin'], allowOrigin, `${url} ${JSON.stringify(headers)}: Allow-Origin`)
  }
  // No origins configured: the library adds no Vary either (nothing varies by Origin).
  const none = Fastify()
  await none.register(problem)
  await none.register(cors, { origins: [] })
  none.get('/open', async () => ({ ok: true }))
  t.equal((await none.inject({ url: '/open' })).headers.vary, undefined)
  t.equal((await none.inject({ url: '/open', headers: { origin: APP } })).headers.vary, undefined)
  // The gate is in place for the plugin's registration only: hooks added afterwards are the caller's own.
  const later = Fastify()
  await later.register(problem)
  await later.register(cors, { origins: [APP] })
  let ran = 0
  later.addHook('onRequest', async () => { ran++ })
  later.get('/after', async () => ({ ok: true }))
  await later.inject({ url: '/after' })
  t.equal(ran, 1, 'a hook added after the plugin runs for a request without Origin')
  await app.close()
  await none.close()
  await later.close()
})

t.test('non-preflight OPTIONS is left to the methods plugin (204 + Allow)', async t => {
  const app = await build(t)
  const table: Array<[string, Record<string, string>]> = [
    ['no Origin', {}],
    ['Origin without Access-Control-Request-Method', { origin: APP }],
    ['Access-Control-Request-Method without Origin', { 'access-control-request-method': 'GET' }]
  ]
  for (const [name, headers] of table) {
    const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers })
    t.equal(res.headers['access-control-allow-methods'], undefined, `${name}: not treated as a preflight`)
    t.equal(res.headers['svc-cors-error'], undefined, `${name}: not refused by CORS`)
    // The methods plugin runs after auth here: auth lets the catch-all OPTIONS route pass
    // (it matches no route of the path, and OPTIONS carries no data), so no token is needed.
    t.equal(res.statusCode, 204, `${name}: answered by the methods plugin`)
    t.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS', `${name}: with Allow`)
    t.equal(res.headers['cache-control'], 'no-store', `${name}: not for caches`)
  }
  const token = signToken({ secret: SECRET, sub: 'u' })
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: { origin: APP, authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 204)
  t.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.equal(res.headers['access-control-allow-origin'], APP, 'an actual OPTIONS request from an allowed origin')
})

t.test('preflights are answered by the cors plugin whichever of cors and methods is registered first', async t => {
  for (const order of [['cors', 'methods'], ['methods', 'cors']]) {
    const app = Fastify()
    await app.register(problem)
    for (const name of order) {
      if (name === 'cors') await app.register(cors, { origins: [APP] })
      else await app.register(methods)
    }
    app.get('/v1/authors', async () => ({ results: [] }))
    const table: Array<[string, Record<string, string>, number, Record<string, string | undefined>]> = [
      ['an allowed preflight', preflight(APP, 'GET'), 204, { 'access-control-allow-origin': APP, allow: undefined }],
      ['a refused origin', preflight('https://evil.example.com', 'GET'), 403, { 'svc-cors-error': 'bad origin' }],
      ['a refused method', preflight(APP, 'PURGE'), 403, { 'svc-cors-error': 'bad method' }],
      ['an OPTIONS that is no preflight', { origin: APP }, 204, { allow: 'GET, HEAD, OPTIONS' }]
    ]
    for (const [name, headers, status, expected] of table) {
      const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers })
      t.equal(res.statusCode, status, `${order.join(' then ')}: ${name}`)
      for (const [header, value] of Object.entries(expected)) t.equal(res.headers[header], value, `${order.join(' then ')}: ${name}: ${header}`)
    }
    await app.close()
  }
})

t.test('composition with auth: a preflight needs no token, a refusal is 403 not 401', async t => {
  const app = await build(t)
  const ok = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'GET', 'authorization') })
  t.equal(ok.statusCode, 204, 'auth did not ask for the token it lacks')
  t.equal(ok.headers['www-authenticate'], undefined)
  const bad = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight('https://evil.example.com', 'GET') })
  t.equal(bad.statusCode, 403)
  t.equal(bad.headers['www-authenticate'], undefined)
  t.equal(bad.headers['cache-control'], 'no-store', 'a refused preflight is not for caches either')
})

t.test('configured lists, credentials, max age', async t => {
  const app = await build(t, {
    origins: [APP],
    methods: ['GET', 'POST'],
    allowedHeaders: ['Authorization', 'X-Custom'],
    exposedHeaders: ['ETag'],
    maxAge: 7200,
    credentials: true
  })
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'POST', 'x-custom') })
  t.equal(res.statusCode, 204)
  t.equal(res.headers['access-control-allow-methods'], 'GET, POST')
  t.equal(res.headers['access-control-allow-headers'], 'Authorization, X-Custom')
  t.equal(res.headers['access-control-max-age'], '7200')
  t.equal(res.headers['access-control-allow-credentials'], 'true')
  const badMethod = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'DELETE') })
  t.equal(badMethod.headers['svc-cors-error'], 'bad method')
  const badHeader = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'GET', 'content-type') })
  t.equal(badHeader.headers['svc-cors-error'], 'bad header')
  const actual = await app.inject({ url: '/health', headers: { origin: APP } })
  t.equal(actual.headers['access-control-allow-credentials'], 'true')
  t.equal(actual.headers['access-control-expose-headers'], 'ETag')
})

t.test('empty header lists: no Allow-Headers / Expose-Headers at all, any requested header refused', async t => {
  const app = await build(t, { origins: [APP], allowedHeaders: [], exposedHeaders: [] })
  const res = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'GET') })
  t.equal(res.statusCode, 204)
  t.notOk('access-control-allow-headers' in res.headers)
  const refused = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: preflight(APP, 'GET', 'authorization') })
  t.equal(refused.headers['svc-cors-error'], 'bad header')
  const actual = await app.inject({ url: '/health', headers: { origin: APP } })
  t.equal(actual.headers['access-control-allow-origin'], APP)
  t.notOk('access-control-expose-headers' in actual.headers)
})

t.test('Vary: Origin is left off responses no cache may keep (Cache-Control: no-store)', async t => {
  const app = await build(t)
  app.get('/cached', { config: { auth: false } }, async (request, reply) => {
    const value = request.headers['x-cache-control']
    if (typeof value === 'string') reply.header('cache-control', value)
    return {}
  })
  const token = signToken({ secret: SECRET, sub: 'u', scope: 'authors:read' })
  const authenticated = await app.inject({ url: '/v1/authors', headers: { authorization: `Bearer ${token}` } })
  t.equal(authenticated.statusCode, 200)
  t.equal(authenticated.headers['cache-control'], 'no-store')
  t.equal(authenticated.headers.vary, undefined, 'an authenticated answer is never stored, so nothing varies for a cache')
  const refused = await app.inject({ url: '/v1/authors' })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers.vary, 'Origin', 'a 401 without no-store keeps the Vary')
  const crossOrigin = await app.inject({ url: '/v1/authors', headers: { origin: APP, authorization: `Bearer ${token}` } })
  t.equal(crossOrigin.headers.vary, 'Origin', 'a request with an Origin gets what @fastify/cors sends')
  const table: Array<[string | undefined, string | undefined]> = [
    [undefined, 'Origin'],
    ['no-store', undefined],
    ['private, no-store', undefined],
    ['No-Store , max-age=0', undefined],
    ['no-cache', 'Origin'],
    ['max-age=60', 'Origin'],
    ['no-storage', 'Origin'],
    ['private="no-store"', 'Origin']
  ]
  for (const [cacheControl, vary] of table) {
    const res = await app.inject({ url: '/cached', headers: cacheControl === undefined ? {} : { 'x-cache-control': cacheControl } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers.vary, vary, `Cache-Control ${String(cacheControl)}`)
  }
})

t.test('no-store responses to requests without Origin keep the Vary fields of others, without Origin', async t => {
  const app = Fastify()
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers['x-early-vary'] !== undefined) reply.header('vary', 'Accept')
  })
  await app.register(problem)
  await app.register(cors, { origins: [APP] })
  app.get('/x', async (request, reply) => {
    reply.header('cache-control', 'no-store')
    const vary = request.headers['x-vary']
    if (vary === 'none') reply.removeHeader('vary')
    else if (typeof vary === 'string') reply.header('vary', vary)
    return {}
  })
  t.teardown(() => app.close())
  const table: Array<[Record<string, string>, string | undefined]> = [
    [{}, undefined],
    [{ 'x-vary': 'none' }, undefined],
    [{ 'x-vary': 'Accept' }, 'Accept'],
    [{ 'x-vary': 'Accept,Accept-Language' }, 'Accept,Accept-Language'],
    [{ 'x-vary': 'Origin, Accept' }, 'Accept'],
    [{ 'x-vary': 'Accept, Origin, Accept-Language' }, 'Accept, Accept-Language'],
    [{ 'x-early-vary': '1' }, 'Accept']
  ]
  for (const [headers, vary] of table) {
    const res = await app.inject({ url: '/x', headers })
    t.equal(res.headers.vary, vary, JSON.stringify(headers))
  }
  t.equal((await app.inject({ url: '/x', headers: { origin: APP } })).headers.vary, 'Origin', 'with an Origin, the library\'s Vary stays')
})

t.test('Vary is appended to, never duplicated or overwritten', async t => {
  const app = Fastify()
  app.addHook('onRequest', async (request, reply) => {
    const vary = request.headers['x-preset-vary']
    if (typeof vary === 'string') reply.header('vary', vary)
  })
  await app.register(problem)
  await app.register(cors, { origins: [APP] })
  app.get('/x', async () => ({}))
  t.teardown(() => app.close())
  const table: Array<[string, string]> = [
    ['Accept', 'Accept, Origin'],
    ['accept, origin', 'accept, origin'],
    ['Accept,Origin', 'Accept,Origin']
  ]
  for (const [preset, expected] of table) {
    const res = await app.inject({ url: '/x', headers: { 'x-preset-vary': preset } })
    t.equal(res.headers.vary, expected, preset)
    const preflight = await app.inject({ method: 'OPTIONS', url: '/x', headers: { 'x-preset-vary': preset, origin: APP, 'access-control-request-method': 'GET' } })
    t.equal(preflight.statusCode, 204)
    t.equal(preflight.headers.vary, expected, `${preset} (preflight)`)
  }
})

t.test('a refusal made before the library\'s hook (auth or conventions registered first) still carries the CORS headers of an allowed origin', async t => {
  const secret = SECRET
  const configs: Array<[string, CorsPluginOptions]> = [
    ['defaults', { origins: [APP] }],
    ['credentials, no exposed headers', { origins: [APP], credentials: true, exposedHeaders: [] }]
  ]
  for (const [name, opts] of configs) {
    const app = Fastify()
    await app.register(problem)
    await app.register(auth, { verifier: { secret } })
    await app.register(cors, opts)
    await app.register(methods)
    app.get('/v1/authors', async () => ({ results: [] }))
    app.get('/closed', { config: { cors: false } }, async () => ({ ok: true }))
    const refused = await app.inject({ url: '/v1/authors', headers: { origin: APP } })
    t.equal(refused.statusCode, 401, `${name}: auth refused it first`)
    t.equal(refused.headers['access-control-allow-origin'], APP, `${name}: the page may read the problem`)
    t.equal(refused.headers['access-control-allow-credentials'], opts.credentials === true ? 'true' : undefined, `${name}: credentials`)
    t.equal(refused.headers['access-control-expose-headers'], opts.exposedHeaders === undefined ? DEFAULT_EXPOSED_HEADERS.join(', ') : undefined, `${name}: exposed headers`)
    t.equal(refused.headers.vary, 'Origin', `${name}: Vary`)
    const other = await app.inject({ url: '/v1/authors', headers: { origin: 'https://evil.example.com' } })
    t.equal(other.headers['access-control-allow-origin'], undefined, `${name}: another origin gets none`)
    const closed = await app.inject({ url: '/closed', headers: { origin: APP } })
    t.equal(closed.headers['access-control-allow-origin'], undefined, `${name}: nor a route with config.cors false`)
    const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/authors', headers: { origin: APP, 'access-control-request-method': 'PURGE' } })
    t.strictSame([preflight.statusCode, preflight.headers['access-control-allow-origin']], [403, undefined], `${name}: a refused preflight stays without`)
    await app.close()
  }
})

t.test('registered twice, beside @fastify/cors, or in sibling contexts under one prefix: the registration is refused, naming the plugin', async t => {
  const twice = Fastify()
  await twice.register(problem)
  await twice.register(cors, { origins: [APP] })
  await t.rejects(async () => { await twice.register(cors, { origins: ['https://other.example.com'] }); await twice.ready() }, { message: /^The cors plugin is registered in this context already/ }, 'twice in one context')
  await twice.close()
  const library = Fastify()
  await library.register(problem)
  await library.register(fastifyCors)
  await t.rejects(async () => { await library.register(cors, { origins: [APP] }); await library.ready() },
    { message: /^cors plugin: @fastify\/cors is registered already, here or above; register the cors plugin instead/ }, 'beside @fastify/cors')
  await library.close()

  // Each sibling context its own origins: served under prefixes of their own, refused under one.
  const siblings = async (prefixes: string[]): Promise<ReturnType<typeof Fastify>> => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    for (const [i, prefix] of prefixes.entries()) {
      await app.register(async (c) => {
        await c.register(cors, { origins: [`https://${i}.example.com`] })
        c.get('/x', async () => ({ ok: true }))
      }, { prefix })
    }
    await app.ready()
    return app
  }
  await t.rejects(siblings(['/v1', '/v1']), { message: 'cors plugin: an OPTIONS route for every path under the prefix "/v1" is declared already (the cors plugin or @fastify/cors in a sibling context?), and the library declares its own; register the cors plugin once in the parent, with every origin, or give each context a prefix of its own' })
  await t.rejects(siblings(['', '']), { message: /^cors plugin: an OPTIONS route for every path under the prefix "" is declared already/ })
  const app = await siblings(['/a', '/b'])
  for (const [i, prefix] of ['/a', '/b'].entries()) {
    const origin = `https://${i}.example.com`
    const preflight = await app.inject({ method: 'OPTIONS', url: `${prefix}/x`, headers: { origin, 'access-control-request-method': 'GET' } })
    t.strictSame([preflight.statusCode, preflight.headers['access-control-allow-origin']], [204, origin], `${prefix}: its own preflight`)
    const get = await app.inject({ url: `${prefix}/x`, headers: { origin } })
    t.strictSame([get.statusCode, get.headers['access-control-allow-origin']], [200, origin], `${prefix}: its own origin`)
    const other = await app.inject({ method: 'OPTIONS', url: `${prefix}/x`, headers: { origin: `https://${1 - i}.example.com`, 'access-control-request-method': 'GET' } })
    t.equal(other.statusCode, 403, `${prefix}: the sibling's origin is refused`)
  }
})

t.test('auth and methods above the cors plugin (at the root, registered before or after it, or cors in sibling contexts under prefixes): every preflight is the cors plugin\'s', async t => {
  const preflight = { 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }
  const layouts: Array<[string, (app: FastifyInstance) => Promise<void>, string]> = [
    ['cors in sibling contexts under prefixes', async (app) => {
      for (const [i, prefix] of ['/a', '/b'].entries()) {
        await app.register(async (c) => {
          await c.register(cors, { origins: [i === 0 ? APP : 'https://b.example.com'] })
          c.get('/x', async () => ({ ok: true }))
        }, { prefix })
      }
    }, '/a/x'],
    ['cors at the root after auth, an OPTIONS route of its own', async (app) => {
      await app.register(cors, { origins: [APP] })
      app.get('/x', async () => ({ ok: true }))
      app.options('/x', async (_request, reply) => await reply.code(204).send())
    }, '/x'],
    ['cors at the root after auth', async (app) => {
      await app.register(cors, { origins: [APP] })
      app.get('/x', async () => ({ ok: true }))
    }, '/x']
  ]
  for (const [name, layout, url] of layouts) {
    for (const withMethods of [false, true]) {
      const app = Fastify()
      t.teardown(() => app.close())
      await app.register(problem)
      if (withMethods) await app.register(methods)
      await app.register(auth, { verifier: { secret: SECRET } })
      await layout(app)
      await app.ready()
      const label = `${name}${withMethods ? ', methods at the root' : ''}`
      const allowed = await app.inject({ method: 'OPTIONS', url, headers: { ...preflight, origin: APP } })
      t.strictSame([allowed.statusCode, allowed.headers['access-control-allow-origin'], allowed.headers['access-control-allow-headers']?.includes('Authorization')], [204, APP, true], `${label}: an allowed preflight is answered with its Access-Control-* headers`)
      const refused = await app.inject({ method: 'OPTIONS', url, headers: { ...preflight, origin: 'https://evil.example.com' } })
      t.strictSame([refused.statusCode, refused.headers['svc-cors-error']], [403, 'bad origin'], `${label}: another origin is refused by the cors plugin`)
      const get = await app.inject({ url, headers: { origin: APP } })
      t.strictSame([get.statusCode, get.headers['access-control-allow-origin']], [401, APP], `${label}: the request itself still needs its token`)
    }
  }
})

t.test('option validation at registration (TypeError naming the option and value)', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['origins not a list', { origins: APP }, /origins must be an array, got "https:\/\/app\.example\.com"/],
    ['wildcard origin', { origins: ['*'] }, /origins\[0\] must be an exact origin such as https:\/\/app\.example\.com \(never \*\) or a RegExp, got "\*"/],
    ['null origin', { origins: [APP, 'null'] }, /origins\[1\] must be an exact origin .* got "null"/],
    ['origin with a path', { origins: ['https://app.example.com/app'] }, /got "https:\/\/app\.example\.com\/app"/],
    ['origin with a trailing slash', { origins: ['https://app.example.com/'] }, /origins\[0\]/],
    ['origin in upper case', { origins: ['https://APP.example.com'] }, /origins\[0\]/],
    ['origin of the wrong type', { origins: [42] }, /origins\[0\] .* got 42/],
    ['RegExp without ^', { origins: [/https:\/\/app\.example\.com$/] }, /origins\[0\] must be anchored with \^ and \$, got \/https:\\\/\\\/app\\\.example\\\.com\$\//],
    ['RegExp without $', { origins: [/^https:\/\/app\.example\.com/] }, /must be anchored/],
    ['methods not a list', { methods: 'GET' }, /methods must be an array, got "GET"/],
    ['empty methods', { methods: [] }, /methods must be a non-empty array of methods, got \[\]/],
    ['wildcard method', { methods: ['GET', '*'] }, /methods\[1\] must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS \(never \*\), got "\*"/],
    ['lowercase method', { methods: ['get'] }, /methods\[0\] .* got "get"/],
    ['custom method', { methods: ['PURGE'] }, /methods\[0\] .* got "PURGE"/],
    ['wildcard allowed header', { allowedHeaders: ['Authorization', '*'] }, /allowedHeaders\[1\] must be a header name \(never \*\), got "\*"/],
    ['allowed header with a space', { allowedHeaders: ['X Custom'] }, /allowedHeaders\[0\]/],
    ['allowedHeaders not a list', { allowedHeaders: 'Authorization' }, /allowedHeaders must be an array/],
    ['wildcard exposed header', { exposedHeaders: ['*'] }, /exposedHeaders\[0\] must be a header name \(never \*\), got "\*"/],
    ['exposed header not a string', { exposedHeaders: [1] }, /exposedHeaders\[0\] .* got 1/],
    ['maxAge above 7200', { maxAge: 7201 }, /maxAge must be an integer of seconds from 0 to 7200, got 7201/],
    ['negative maxAge', { maxAge: -1 }, /maxAge .* got -1/],
    ['fractional maxAge', { maxAge: 1.5 }, /maxAge .* got 1.5/],
    ['credentials not boolean', { credentials: 'true' }, /credentials must be a boolean, got "true"/],
    // @fastify/cors's spelling: ignored, it would leave every preflight refused.
    ['@fastify/cors\'s origin', { origin: [APP] }, /^cors plugin: unknown option origin \(did you mean origins\?\); the options are origins, methods, allowedHeaders, exposedHeaders, maxAge, credentials$/],
    ['another library option', { preflightContinue: true }, /^cors plugin: unknown option preflightContinue; the options are/]
  ]
  for (const [name, opts, message] of cases) {
    const app = Fastify()
    await app.register(problem)
    await t.rejects(async () => { await app.register(cors, opts as CorsPluginOptions); await app.ready() }, { name: 'TypeError', message }, name)
    await app.close()
  }
  const app = Fastify()
  await app.register(problem)
  await t.resolves(async () => { await app.register(cors, { origins: [APP, /^https:\/\/x\.example\.com$/], maxAge: 0 }); await app.ready() }, 'valid options boot')
  await app.close()
})
