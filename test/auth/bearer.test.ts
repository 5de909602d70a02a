import t from 'tap'
import fc from 'fast-check'
import { bearerToken } from '../../plugins/auth/bearer.js'
import { ProblemError } from '../../plugins/problem/errors.js'
import { build, bodyOf } from './helper.js'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl'

// The custom verifier accepts any token, so these cases exercise the header rules only.
const acceptAll = { verifier: (token: string) => ({ sub: 'u1', scopes: [], claims: { token } }) }

t.test('header forms: exactly "Bearer <token>" passes, everything else is 401 Invalid Request', async t => {
  const app = await build(t, acceptAll)
  const table: Array<[string, string | undefined, number, RegExp | null]> = [
    ['a JWT', `Bearer ${TOKEN}`, 200, null],
    ['b64token characters with padding', 'Bearer abc-._~+/123==', 200, null],
    ['missing header', undefined, 401, /no Authorization header/],
    ['empty header', '', 401, /does not start with the Bearer scheme/],
    ['Basic', 'Basic dXNlcjpwYXNz', 401, /uses the Basic scheme/],
    ['lowercase bearer', `bearer ${TOKEN}`, 401, /capital B/],
    ['uppercase BEARER', `BEARER ${TOKEN}`, 401, /capital B/],
    ['bare token', TOKEN, 401, /does not start with the Bearer scheme/],
    ['scheme without token', 'Bearer', 401, /no token, or a malformed one/],
    ['two spaces', `Bearer  ${TOKEN}`, 401, /no token, or a malformed one/],
    ['tab instead of space', `Bearer\t${TOKEN}`, 401, /does not start with the Bearer scheme/],
    ['token with a space inside', 'Bearer abc def', 401, /no token, or a malformed one/],
    ['token with a character outside b64token', 'Bearer abc!def', 401, /no token, or a malformed one/],
    ['padding in the middle', 'Bearer ab=c', 401, /no token, or a malformed one/],
    ['an unknown long scheme-like word', `Abcdefghijklmnopqrstuvwxyz ${TOKEN}`, 401, /does not start with the Bearer scheme/]
  ]
  for (const [name, authorization, status, detail] of table) {
    const res = await app.inject({ url: '/me', headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, status, name)
    if (detail === null) {
      t.equal(bodyOf(res).principal.claims.token, authorization?.slice(7), `${name}: the token reaches the verifier`)
      continue
    }
    const body = bodyOf(res)
    t.equal(body.title, 'Invalid Request', `${name}: title`)
    t.equal(body.status, 401)
    t.match(body.detail, detail, `${name}: detail names the reason`)
    t.match(body.detail, /Bearer <access token>|exactly as issued/, `${name}: detail says how to fix it`)
    t.notMatch(body.detail, TOKEN, `${name}: the token is never echoed`)
    t.equal(res.headers['www-authenticate'], 'Bearer', `${name}: RFC 6750 challenge without error code`)
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
    t.equal(res.headers['cache-control'], undefined, `${name}: no principal, no no-store`)
  }
})

t.test('property: a b64token after "Bearer " is returned unchanged', async t => {
  const b64token = fc.tuple(
    fc.stringMatching(/^[A-Za-z0-9\-._~+/]{1,80}$/),
    fc.stringMatching(/^={0,2}$/)
  ).map(([body, pad]) => body + pad)
  fc.assert(fc.property(b64token, (token) => bearerToken(`Bearer ${token}`) === token))
  t.pass('held for every generated token')
})

t.test('property: any other header is refused, and the token part is never echoed', async t => {
  const secretish = fc.stringMatching(/^[A-Za-z0-9._~+/-]{24,60}$/)
  const wrongScheme = fc.oneof(
    fc.constantFrom('bearer', 'BEARER', 'Basic', 'Token', 'DPoP', 'Bearer:', 'Bearer,'),
    fc.stringMatching(/^[A-Za-z]{1,30}$/).filter((s) => s !== 'Bearer')
  )
  const header = fc.oneof(
    fc.tuple(wrongScheme, secretish).map(([scheme, token]) => ({ header: `${scheme} ${token}`, token })),
    secretish.map((token) => ({ header: token, token })),
    secretish.map((token) => ({ header: `Bearer  ${token}`, token })),
    secretish.map((token) => ({ header: `Bearer ${token} extra`, token }))
  )
  fc.assert(fc.property(header, ({ header, token }) => {
    try {
      bearerToken(header)
      return false
    } catch (err) {
      return err instanceof ProblemError && err.statusCode === 401 && err.title === 'Invalid Request' &&
        !(err.detail ?? '').includes(token)
    }
  }))
  t.pass('held for every generated header')
})
