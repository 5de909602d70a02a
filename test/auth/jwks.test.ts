import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import auth from '../../plugins/auth/index.js'
import { build, bodyOf, forge, jwksServer, keyPair } from './helper.js'

const rsa = keyPair('rsa', 'rsa-1')
const ec = keyPair('ec', 'ec-1')
const { publicKey: rsaPublic, privateKey: rsaPrivate } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const now = (): number => Math.floor(Date.now() / 1000)
const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` })

t.test('RS256 and ES256 tokens verify against the JWKS', async t => {
  const jwks = await jwksServer(t, [rsa.jwk, ec.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url, issuer: 'https://idp.example.com' } })
  for (const key of [rsa, ec]) {
    const res = await app.inject({ url: '/v1/authors', headers: bearer(key.sign({ sub: `user-${key.alg}`, scope: 'authors:read', iss: 'https://idp.example.com' })) })
    t.equal(res.statusCode, 200, key.alg)
    t.strictSame(bodyOf(res), { sub: `user-${key.alg}` })
    t.equal(res.headers['cache-control'], 'no-store')
  }
  const wrongIssuer = await app.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u', iss: 'https://other.example.com' })) })
  t.equal(wrongIssuer.statusCode, 401)
  t.match(bodyOf(wrongIssuer).detail, /iss claim is not accepted/)
})

t.test('refused asymmetric tokens: 401 Invalid Token, algorithm allow-list first', async t => {
  const jwks = await jwksServer(t, [rsa.jwk, ec.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url } })
  const claims = { sub: 'u', exp: now() + 60 }
  const otherRsa = keyPair('rsa', 'rsa-1')
  const table: Array<[string, string, RegExp]> = [
    ['HS256 signed with the RSA public key as secret', forge({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' }, claims, rsa.publicPem), /does not accept; use a token signed with RS256 or ES256/],
    ['alg none', forge({ alg: 'none', typ: 'JWT', kid: 'rsa-1' }, claims), /does not accept/],
    ['expired', rsa.sign({ sub: 'u', exp: now() - 5 }), /has expired/],
    ['not yet valid', ec.sign({ sub: 'u', nbf: now() + 300 }), /not valid yet/],
    ['same kid, another private key', otherRsa.sign({ sub: 'u' }), /signature does not verify/],
    ['ES256 header naming the RSA key', forge({ alg: 'ES256', typ: 'JWT', kid: 'rsa-1' }, claims, 'x'), /signed with a key the identity provider does not publish/]
  ]
  for (const [name, token, detail] of table) {
    const res = await app.inject({ url: '/me', headers: bearer(token) })
    t.equal(res.statusCode, 401, `${name}: status`)
    t.equal(bodyOf(res).title, 'Invalid Token', `${name}: title`)
    t.match(bodyOf(res).detail, detail, `${name}: detail`)
    t.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"', `${name}: challenge`)
  }
  const hitsBefore = jwks.hits
  await app.inject({ url: '/me', headers: bearer(forge({ alg: 'HS256', typ: 'JWT', kid: 'unknown' }, claims, 'k')) })
  t.equal(jwks.hits, hitsBefore, 'a refused algorithm never causes a JWKS fetch')
})

t.test('algorithms option narrows the allow-list', async t => {
  const jwks = await jwksServer(t, [rsa.jwk, ec.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url, algorithms: ['ES256'] } })
  t.equal((await app.inject({ url: '/me', headers: bearer(ec.sign({ sub: 'u' })) })).statusCode, 200)
  const res = await app.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })
  t.equal(res.statusCode, 401)
  t.match(bodyOf(res).detail, /use a token signed with ES256\./)
})

t.test('key rotation: an unknown kid is 401 until the JWKS publishes it and the cooldown has passed', async t => {
  const cooldown = 30_000
  const jwks = await jwksServer(t, [rsa.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url, cooldown } })
  const next = keyPair('rsa', 'rsa-2')
  const token = next.sign({ sub: 'u' })
  t.equal((await app.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })).statusCode, 200, 'old key works')
  const before = await app.inject({ url: '/me', headers: bearer(token) })
  t.equal(before.statusCode, 401)
  t.equal(bodyOf(before).title, 'Invalid Token')
  t.match(bodyOf(before).detail, /signed with a key the identity provider does not publish/)
  t.equal(before.headers['www-authenticate'], 'Bearer error="invalid_token"')
  jwks.keys = [rsa.jwk, next.jwk]
  t.equal((await app.inject({ url: '/me', headers: bearer(token) })).statusCode, 401, 'published, but not fetched again within the cooldown')
  // jose times the cooldown with Date.now from the end of its last fetch: the clock is moved
  // past it rather than waited out (a timer may fire before Date.now shows its delay passed).
  const realNow = Date.now
  Date.now = () => realNow() + cooldown
  t.teardown(() => { Date.now = realNow })
  const after = await app.inject({ url: '/me', headers: bearer(token) })
  t.equal(after.statusCode, 200, 'the new kid is fetched and the refusal was not cached')
  t.equal(bodyOf(after).principal.sub, 'u')
})

t.test('the JWKS server being down is a 503 problem without internals', async t => {
  const jwks = await jwksServer(t, [rsa.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url } })
  await jwks.close()
  const res = await app.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })
  t.equal(res.statusCode, 503)
  const body = bodyOf(res)
  t.equal(body.title, 'Service Unavailable')
  t.match(body.detail, /signing keys of the identity provider could not be fetched.* retry later\./)
  t.notMatch(res.body, /127\.0\.0\.1|ECONNREFUSED|fetch failed/, 'no internals')
  t.equal(res.headers['www-authenticate'], undefined, 'not a credentials problem')
})

t.test('a JWKS answering with an error, or not at all, is a 503 too', async t => {
  const jwks = await jwksServer(t, [rsa.jwk])
  const wrongPath = await build(t, { verifier: { jwksUrl: jwks.url.replace('jwks.json', 'nothing.json') } })
  t.equal((await wrongPath.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })).statusCode, 503, 'JWKS 404')
  jwks.hang = true
  const slow = await build(t, { verifier: { jwksUrl: jwks.url, timeout: 100 } })
  const started = Date.now()
  const res = await slow.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })
  t.equal(res.statusCode, 503, 'timeout')
  // The default timeout is 5 s and the server never answers: an answer well before 5 s shows
  // this timeout aborted the fetch, with room to spare for a loaded machine.
  t.ok(Date.now() - started < 4_000, 'answers after its own timeout, not the default one')
})
t.test('the verifier cache avoids a second signature check of the same token', async t => {
  // keyTtl 1 ms: jose holds the key set fresh while Date.now is below its fetch time + 1, so with
  // Date.now stepped past that after each request, every signature check fetches the JWKS once.
  const realNow = Date.now
  let offset = 0
  Date.now = () => realNow() + offset
  t.teardown(() => { Date.now = realNow })
  const jwks = await jwksServer(t, [rsa.jwk])
  const cached = await build(t, { verifier: { jwksUrl: jwks.url, keyTtl: 1 } })
  const token = rsa.sign({ sub: 'u' })
  for (let i = 0; i < 3; i++) {
    t.equal((await cached.inject({ url: '/me', headers: bearer(token) })).statusCode, 200)
    offset += 2
  }
  t.equal(jwks.hits, 1, 'one check for three requests')
  await cached.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'someone-else' })) })
  t.equal(jwks.hits, 2, 'another token is checked')

  const uncached = await build(t, { verifier: { jwksUrl: jwks.url, keyTtl: 1 }, cacheSize: 0 })
  for (let i = 0; i < 3; i++) {
    t.equal((await uncached.inject({ url: '/me', headers: bearer(token) })).statusCode, 200)
    offset += 2
  }
  t.equal(jwks.hits, 5, 'cacheSize 0: every request is checked again')
})

t.test('JWKS option validation at registration', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['jwksUrl not a URL', { jwksUrl: 'not a url' }, /verifier.jwksUrl must be an http\(s\) URL, got "not a url"/],
    ['jwksUrl not http', { jwksUrl: 'file:///etc/jwks.json' }, /verifier.jwksUrl must be an http\(s\) URL/],
    ['jwksUrl not a string', { jwksUrl: 42 }, /verifier.jwksUrl must be an http\(s\) URL, got 42/],
    ['HS256 in algorithms', { jwksUrl: 'https://idp.example.com/jwks', algorithms: ['RS256', 'HS256'] }, /verifier.algorithms must list asymmetric algorithms .* got \["RS256","HS256"\]/],
    ['none in algorithms', { jwksUrl: 'https://idp.example.com/jwks', algorithms: ['none'] }, /verifier.algorithms/],
    ['empty algorithms', { jwksUrl: 'https://idp.example.com/jwks', algorithms: [] }, /verifier.algorithms/],
    ['algorithms not a list', { jwksUrl: 'https://idp.example.com/jwks', algorithms: 'RS256' }, /verifier.algorithms/],
    ['zero timeout', { jwksUrl: 'https://idp.example.com/jwks', timeout: 0 }, /^auth plugin: verifier\.timeout must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 0$/],
    // Node takes a longer timer delay as 1 ms: every JWKS fetch would be aborted at once (503).
    ['timeout past the longest timer', { jwksUrl: 'https://idp.example.com/jwks', timeout: 2147483648 }, /^auth plugin: verifier\.timeout must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    ['fractional keyTtl', { jwksUrl: 'https://idp.example.com/jwks', keyTtl: 0.5 }, /verifier.keyTtl must be a positive integer of milliseconds, got 0.5/],
    ['negative cooldown', { jwksUrl: 'https://idp.example.com/jwks', cooldown: -1 }, /verifier.cooldown must be a positive integer of milliseconds, got -1/],
    ['bad issuer', { jwksUrl: 'https://idp.example.com/jwks', issuer: [1] }, /verifier.issuer/]
  ]
  for (const [name, verifier, message] of cases) {
    const app = Fastify()
    await app.register(problem)
    await t.rejects(async () => { await app.register(auth, { verifier: verifier as never }); await app.ready() }, { name: 'TypeError', message }, name)
    await app.close()
  }
})

t.test('the JWKS timeout may be the longest a timer waits; keyTtl and cooldown, only compared with the time, longer', async t => {
  const jwks = await jwksServer(t, [rsa.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url, timeout: 2147483647, keyTtl: 2147483648 * 10, cooldown: 2147483648 * 10 } })
  t.equal((await app.inject({ url: '/me', headers: bearer(rsa.sign({ sub: 'u' })) })).statusCode, 200)
})

t.test('a token without kid: the one key of its algorithm, else 401', async t => {
  const claims = { sub: 'u', exp: now() + 60 }
  const signer = createSigner({ key: rsaPrivate.export({ format: 'pem', type: 'pkcs8' }) as string, algorithm: 'RS256' })
  const single = await jwksServer(t, [{ ...rsaPublic.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' }, ec.jwk])
  const one = await build(t, { verifier: { jwksUrl: single.url } })
  t.equal((await one.inject({ url: '/me', headers: bearer(signer(claims)) })).statusCode, 200, 'one RSA key: it is the one')
  const several = await jwksServer(t, [{ ...rsaPublic.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' }, rsa.jwk])
  const two = await build(t, { verifier: { jwksUrl: several.url } })
  const res = await two.inject({ url: '/me', headers: bearer(signer(claims)) })
  t.equal(res.statusCode, 401, 'two RSA keys and no kid: which one is not said')
  t.match(bodyOf(res).detail, /signed with a key the identity provider does not publish/)
})
