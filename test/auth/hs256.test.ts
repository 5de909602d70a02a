import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import auth from '../../plugins/auth/index.js'
import { SECRET, build, bodyOf, forge, hs256 } from './helper.js'

const now = (): number => Math.floor(Date.now() / 1000)
const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` })

t.test('a valid HS256 token yields request.principal and Cache-Control: no-store', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const res = await app.inject({ url: '/me', headers: bearer(hs256({ sub: 'user-1', scope: 'authors:read  authors:write', extra: 42 })) })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const { principal } = bodyOf(res)
  t.equal(principal.sub, 'user-1')
  t.strictSame(principal.scopes, ['authors:read', 'authors:write'], 'scope is space-separated, empty parts dropped')
  t.equal(principal.claims.extra, 42, 'every claim is kept')
})

t.test('refused HS256 tokens: 401 Invalid Token with a detail naming the reason', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const rsaPublicPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' }) as string
  const claims = { sub: 'user-1', exp: now() + 60 }
  const table: Array<[string, string, RegExp]> = [
    ['expired', hs256({ sub: 'user-1', exp: now() - 10 }), /has expired/],
    ['not yet valid (nbf)', hs256({ sub: 'user-1', nbf: now() + 300 }), /not valid yet/],
    ['signed with another secret', hs256({ sub: 'user-1' }, 'another-secret-that-is-also-long-enough'), /signature does not verify/],
    ['tampered payload', (() => { const [h, , s] = hs256({ sub: 'user-1' }).split('.'); return `${h as string}.${Buffer.from(JSON.stringify({ sub: 'admin', exp: now() + 60 })).toString('base64url')}.${s as string}` })(), /signature does not verify/],
    ['alg none', forge({ alg: 'none', typ: 'JWT' }, claims), /unsigned/],
    ['alg none with a signature', forge({ alg: 'none', typ: 'JWT' }, claims, SECRET), /algorithm this service does not accept; use a token signed with HS256/],
    ['HS256 signed with an RSA public key as secret', forge({ alg: 'HS256', typ: 'JWT' }, claims, rsaPublicPem), /signature does not verify/],
    ['RS256 header', forge({ alg: 'RS256', typ: 'JWT' }, claims, SECRET), /algorithm this service does not accept/],
    ['not a JWT', 'abc.def', /not a well-formed JWT/],
    ['header is not JSON', 'YWJj.eyJzdWIiOiJ1In0.c2ln', /not a well-formed JWT/],
    ['payload is an array', forge({ alg: 'HS256', typ: 'JWT' }, [1] as unknown as Record<string, unknown>, SECRET), /not a well-formed JWT/],
    ['no exp', forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'user-1' }, SECRET), /has no exp claim/],
    ['exp is text', forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'user-1', exp: 'tomorrow' }, SECRET), /exp claim is not accepted/],
    ['no sub', hs256({ scope: 'authors:read' }), /no sub claim/],
    ['empty sub', hs256({ sub: '' }), /no sub claim/],
    ['numeric sub', hs256({ sub: 7 }), /no sub claim/]
  ]
  for (const [name, token, detail] of table) {
    const res = await app.inject({ url: '/me', headers: bearer(token) })
    const body = bodyOf(res)
    t.equal(res.statusCode, 401, `${name}: status`)
    t.equal(body.title, 'Invalid Token', `${name}: title`)
    t.match(body.detail, detail, `${name}: detail`)
    t.notMatch(body.detail, token, `${name}: token not echoed`)
    t.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"', `${name}: challenge`)
    t.equal(res.headers['cache-control'], undefined, `${name}: nobody authenticated`)
  }
})

t.test('issuer and audience: required when configured, and must match', async t => {
  const app = await build(t, { verifier: { secret: SECRET, issuer: 'https://idp.example.com', audience: ['svc-a', 'svc-b'] } })
  const table: Array<[string, Record<string, unknown>, number, RegExp | null]> = [
    ['matching', { iss: 'https://idp.example.com', aud: 'svc-b' }, 200, null],
    ['audience list with one match', { iss: 'https://idp.example.com', aud: ['other', 'svc-a'] }, 200, null],
    ['wrong issuer', { iss: 'https://evil.example.com', aud: 'svc-a' }, 401, /iss claim is not accepted/],
    ['wrong audience', { iss: 'https://idp.example.com', aud: 'svc-z' }, 401, /aud claim is not accepted/],
    ['no audience in a list', { iss: 'https://idp.example.com', aud: ['x', 'y'] }, 401, /aud claim is not accepted/],
    ['missing issuer', { aud: 'svc-a' }, 401, /has no iss claim/],
    ['missing audience', { iss: 'https://idp.example.com' }, 401, /has no aud claim/]
  ]
  for (const [name, claims, status, detail] of table) {
    const res = await app.inject({ url: '/me', headers: bearer(hs256({ sub: 'u', ...claims })) })
    t.equal(res.statusCode, status, name)
    if (detail !== null) t.match(bodyOf(res).detail, detail, `${name}: detail`)
  }
})

t.test('scopes: scope string, scp list or string, merged; every route scope required (403)', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const table: Array<[string, Record<string, unknown>, string, string, number, RegExp | null]> = [
    ['scope string', { scope: 'authors:read' }, 'GET', '/v1/authors', 200, null],
    ['scp list', { scp: ['authors:read', 'authors:write'] }, 'POST', '/v1/authors', 200, null],
    ['scp string', { scp: 'authors:read authors:write' }, 'POST', '/v1/authors', 200, null],
    ['scope and scp merged', { scope: 'authors:read', scp: ['authors:write'] }, 'POST', '/v1/authors', 200, null],
    ['no scopes at all', {}, 'GET', '/v1/authors', 403, /does not grant the scope authors:read that GET \/v1\/authors requires; request a token with it\./],
    ['one of two missing', { scope: 'authors:read' }, 'POST', '/v1/authors?x=1', 403, /the scope authors:write that POST \/v1\/authors requires/],
    ['both missing', { scope: 'documents:read' }, 'POST', '/v1/authors', 403, /the scopes authors:read, authors:write that POST \/v1\/authors requires; request a token with them\./],
    ['scope is not a string or list', { scope: 12, scp: { a: 1 } }, 'GET', '/v1/authors', 403, /authors:read/],
    ['non-string members ignored', { scp: [1, 'authors:read', ''] }, 'GET', '/v1/authors', 200, null],
    ['scopes are case-sensitive', { scope: 'AUTHORS:READ' }, 'GET', '/v1/authors', 403, /authors:read/]
  ]
  for (const [name, claims, method, url, status, detail] of table) {
    const res = await app.inject({ method: method as 'GET', url, headers: bearer(hs256({ sub: 'u', ...claims })) })
    t.equal(res.statusCode, status, name)
    t.equal(res.headers['cache-control'], 'no-store', `${name}: authenticated, so no-store also on a 403`)
    if (detail === null) continue
    const body = bodyOf(res)
    t.equal(body.title, 'Forbidden', `${name}: title`)
    t.match(body.detail, detail, `${name}: detail names path and scope`)
    t.equal(body.instance, '/v1/authors', `${name}: instance is the path`)
    t.match(res.headers['www-authenticate'], /^Bearer error="insufficient_scope", scope="authors:read( authors:write)?"$/, `${name}: RFC 6750 insufficient_scope`)
  }
})

t.test('config.auth = false needs no token; principal stays null', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const res = await app.inject({ url: '/health' })
  t.equal(res.statusCode, 200)
  t.equal(bodyOf(res).principal, null)
  t.equal(res.headers['cache-control'], undefined)
  const withBadToken = await app.inject({ url: '/health', headers: bearer('garbage') })
  t.equal(withBadToken.statusCode, 200, 'a token sent to an open route is not even looked at')
})

t.test('required: false makes routes without config optional, but a sent token is still verified', async t => {
  const app = await build(t, { verifier: { secret: SECRET }, required: false })
  const anonymous = await app.inject({ url: '/me' })
  t.equal(anonymous.statusCode, 200)
  t.equal(bodyOf(anonymous).principal, null)
  t.equal(anonymous.headers['cache-control'], undefined)
  const bad = await app.inject({ url: '/me', headers: { authorization: 'Basic dXNlcjpwYXNz' } })
  t.equal(bad.statusCode, 401)
  t.equal(bodyOf(bad).title, 'Invalid Request')
  const good = await app.inject({ url: '/me', headers: bearer(hs256({ sub: 'u' })) })
  t.equal(bodyOf(good).principal.sub, 'u')
  const scoped = await app.inject({ url: '/v1/authors' })
  t.equal(scoped.statusCode, 401, 'a route with config.auth still needs a token')
})

t.test('Cache-Control: no-store stays on a later error of an authenticated request', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const res = await app.inject({ url: '/boom', headers: bearer(hs256({ sub: 'u' })) })
  t.equal(res.statusCode, 500)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
})

t.test('composition with the problem plugin: requestId, X-Request-ID echo, problem media type', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const res = await app.inject({ url: '/me', headers: { 'x-request-id': 'req-123' } })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['x-request-id'], 'req-123')
  t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.strictSame(Object.keys(bodyOf(res)).sort(), ['detail', 'requestId', 'status', 'title'])
  t.equal(bodyOf(res).requestId, 'req-123')
  const unknown = await app.inject({ url: '/nowhere', headers: bearer(hs256({ sub: 'u' })) })
  t.equal(unknown.statusCode, 404, 'an authenticated request to an unknown path is a 404')
  const anonymousUnknown = await app.inject({ url: '/nowhere' })
  t.equal(anonymousUnknown.statusCode, 404, 'a path no route serves has nothing to protect: 404, not 401')
})

t.test('the verifier cache respects exp: a cached token is refused once it expires', async t => {
  const app = await build(t, { verifier: { secret: SECRET } })
  const token = hs256({ sub: 'u', exp: now() + 30 })
  t.equal((await app.inject({ url: '/me', headers: bearer(token) })).statusCode, 200)
  t.equal((await app.inject({ url: '/me', headers: bearer(token) })).statusCode, 200, 'served from the cache')
  const realNow = Date.now
  Date.now = () => realNow() + 60_000
  t.teardown(() => { Date.now = realNow })
  const later = await app.inject({ url: '/me', headers: bearer(token) })
  t.equal(later.statusCode, 401)
  t.match(bodyOf(later).detail, /has expired/)
})

t.test('custom verifier: receives token and request; null is 401 Unauthorized; problems pass through', async t => {
  const seen: Array<[string, string]> = []
  const app = await build(t, {
    verifier: async (token, request) => {
      seen.push([token, request.url])
      if (token === 'forbidden-token') throw Object.assign(new Error('x'), { statusCode: 403 })
      return token === 'good-token' ? { sub: 'svc', scopes: ['authors:read'], claims: {} } : null
    }
  })
  const ok = await app.inject({ url: '/v1/authors', headers: bearer('good-token') })
  t.equal(ok.statusCode, 200)
  t.strictSame(bodyOf(ok), { sub: 'svc' })
  t.strictSame(seen, [['good-token', '/v1/authors']])
  const refused = await app.inject({ url: '/me', headers: bearer('other-token') })
  t.equal(refused.statusCode, 401)
  t.equal(bodyOf(refused).title, 'Unauthorized')
  t.match(bodyOf(refused).detail, /not accepted; obtain a new token/)
  t.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"')
  const thrown = await app.inject({ url: '/me', headers: bearer('forbidden-token') })
  t.equal(thrown.statusCode, 403, 'an error of the verifier goes to the problem handler')
})

t.test('option and route config validation at registration', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no verifier', {}, /verifier must be a function, \{ secret \} or \{ jwksUrl \}, got undefined/],
    ['verifier of the wrong type', { verifier: 'secret' }, /verifier must be .* got secret/],
    ['verifier object with neither', { verifier: { issuer: 'x' } }, /got neither/],
    ['both secret and jwksUrl', { verifier: { secret: SECRET, jwksUrl: 'https://idp.example.com/jwks' } }, /got both secret and jwksUrl/],
    ['short secret', { verifier: { secret: 'short' } }, /verifier.secret must be a string of at least 32 bytes \(RFC 7518 §3.2\), got 5 bytes/],
    ['secret of the wrong type', { verifier: { secret: 42 } }, /verifier.secret .* got number/],
    ['empty issuer', { verifier: { secret: SECRET, issuer: '' } }, /verifier.issuer must be a non-empty string or list of strings, got ""/],
    ['empty audience list', { verifier: { secret: SECRET, audience: [] } }, /verifier.audience .* got \[\]/],
    ['audience of the wrong type', { verifier: { secret: SECRET, audience: 5 } }, /verifier.audience .* got 5/],
    ['required not boolean', { verifier: { secret: SECRET }, required: 'yes' }, /required must be a boolean, got "yes"/],
    ['negative cacheSize', { verifier: { secret: SECRET }, cacheSize: -1 }, /cacheSize must be a non-negative integer, got -1/],
    ['fractional cacheSize', { verifier: { secret: SECRET }, cacheSize: 1.5 }, /cacheSize must be a non-negative integer, got 1.5/],
    // Misspelt, an option would be ignored: a route meant to be open would still need a token, or the reverse.
    ['unknown option', { verifier: { secret: SECRET }, requird: false }, /^auth plugin: unknown option requird \(did you mean required\?\); the options are verifier, required, cacheSize, refusalLimit, now$/],
    ['unknown secret verifier key', { verifier: { secret: SECRET, issur: 'x' } }, /^auth plugin: unknown option verifier.issur \(did you mean verifier.issuer\?\); verifier takes secret, issuer, audience$/],
    ['misspelt secret', { verifier: { secrett: SECRET } }, /unknown option verifier.secrett \(did you mean verifier.secret\?\)/],
    ['unknown JWKS verifier key', { verifier: { jwksUrl: 'https://idp.example.com/jwks', ttl: 5 } }, /unknown option verifier.ttl; verifier takes jwksUrl, issuer, audience, algorithms, keyTtl, timeout, cooldown$/]
  ]
  for (const [name, opts, message] of cases) {
    const app = Fastify()
    await app.register(problem)
    await t.rejects(async () => { await app.register(auth, opts as never); await app.ready() }, { name: 'TypeError', message }, name)
    await app.close()
  }
  const secretInMessage = Fastify()
  await secretInMessage.register(problem)
  let message = ''
  try {
    await secretInMessage.register(auth, { verifier: { secret: 'hunter2-is-my-password' } })
    await secretInMessage.ready()
  } catch (err) {
    message = (err as Error).message
  }
  t.match(message, /got 22 bytes/)
  t.notMatch(message, 'hunter2', 'a secret is never printed')
  await secretInMessage.close()

  const app = Fastify()
  await app.register(problem)
  await app.register(auth, { verifier: { secret: SECRET } })
  t.teardown(() => app.close())
  const routes: Array<[string, unknown]> = [
    ['true', true],
    ['null', null],
    ['scopes not a list', { scopes: 'authors:read' }],
    ['scope with a space', { scopes: ['authors:read authors:write'] }],
    ['empty scope', { scopes: [''] }],
    ['scope with a quote', { scopes: ['a"b'] }]
  ]
  for (const [name, config] of routes) {
    t.throws(() => app.get(`/bad-${name.replace(/\W/g, '')}`, { config: { auth: config as never } }, async () => ({})), {
      name: 'TypeError',
      message: /config.auth of GET \/bad-\w+ must be false or \{ scopes: string\[\] \}/
    }, name)
  }
  t.doesNotThrow(() => app.get('/empty-scopes', { config: { auth: { scopes: [] } } }, async () => ({})), 'an empty list means: any valid token')
  await app.ready()
  const res = await app.inject({ url: '/empty-scopes', headers: bearer(hs256({ sub: 'u' })) })
  t.equal(res.statusCode, 200)
})
