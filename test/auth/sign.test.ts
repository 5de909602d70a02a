import t from 'tap'
import { createDecoder } from 'fast-jwt'
import { signToken } from '../../plugins/auth/index.js'
import { SECRET, build, bodyOf } from './helper.js'

const decode = createDecoder({ complete: true })
const now = (): number => Math.floor(Date.now() / 1000)

t.test('signToken mints HS256 tokens the { secret } verifier accepts', async t => {
  // exp is the signing second plus the lifetime: between the clock read before and after.
  const lo = now()
  const token = signToken({ secret: SECRET, sub: 'user-1', scope: ['authors:read', 'authors:write'], expiresIn: '15m', issuer: 'svc', audience: 'svc-api' })
  const hi = now()
  const { header, payload } = decode(token)
  t.equal(header.alg, 'HS256')
  t.equal(payload.sub, 'user-1')
  t.equal(payload.scope, 'authors:read authors:write')
  t.equal(payload.iss, 'svc')
  t.equal(payload.aud, 'svc-api')
  t.ok(lo + 900 <= payload.exp && payload.exp <= hi + 900, 'exp 15 minutes ahead')

  const app = await build(t, { verifier: { secret: SECRET, issuer: 'svc', audience: 'svc-api' } })
  const res = await app.inject({ method: 'POST', url: '/v1/authors', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
})

t.test('defaults, seconds and expired tokens', async t => {
  let lo = now()
  const plain = decode(signToken({ secret: SECRET, sub: 'u' })).payload
  let hi = now()
  t.equal(plain.scope, undefined, 'no scope claim when none is granted')
  t.ok(lo + 3600 <= plain.exp && plain.exp <= hi + 3600, 'default lifetime one hour')
  t.equal(plain.iss, undefined)
  lo = now()
  const seconds = decode(signToken({ secret: SECRET, sub: 'u', scope: 'a b', expiresIn: 120 })).payload
  hi = now()
  t.equal(seconds.scope, 'a b')
  t.ok(lo + 120 <= seconds.exp && seconds.exp <= hi + 120, 'a number is seconds')

  const expired = signToken({ secret: SECRET, sub: 'u', expiresIn: -60 })
  const app = await build(t, { verifier: { secret: SECRET } })
  const res = await app.inject({ url: '/me', headers: { authorization: `Bearer ${expired}` } })
  t.equal(res.statusCode, 401)
  t.match(bodyOf(res).detail, /has expired/)
})

t.test('signToken validates its options', async t => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['short secret', { secret: 'x', sub: 'u' }, /signToken secret must be a string of at least 32 bytes/],
    ['no sub', { secret: SECRET }, /sub must be a non-empty string, got undefined/],
    ['empty sub', { secret: SECRET, sub: '' }, /sub must be a non-empty string, got ""/],
    ['zero lifetime', { secret: SECRET, sub: 'u', expiresIn: 0 }, /expiresIn must be a non-zero number of seconds .* got 0/],
    ['infinite lifetime', { secret: SECRET, sub: 'u', expiresIn: Infinity }, /got Infinity/]
  ]
  for (const [name, opts, message] of cases) {
    t.throws(() => signToken(opts as never), { name: 'TypeError', message }, name)
  }
})
