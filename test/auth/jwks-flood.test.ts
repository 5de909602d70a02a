import t from 'tap'
import { build, forge, jwksServer, keyPair } from './helper.js'

/*
 * A JWKS that cannot be turned against the service (issue 24): tokens naming key ids the
 * identity provider does not publish, sent in a flood, must not make one JWKS request each.
 * The figures (fetches per 1,000 such requests) are printed for the record.
 */

const published = keyPair('rsa', 'published')
const stranger = keyPair('rsa', 'stranger')
const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` })
const unknownKid = (kid: string): string => forge({ alg: 'RS256', typ: 'JWT', kid }, { sub: 'intruder', exp: Math.floor(Date.now() / 1000) + 60 }, 'x')

/** `n` requests, `width` at a time, each with the token `tokenOf(i)`; the statuses seen. */
async function flood (app: Awaited<ReturnType<typeof build>>, n: number, width: number, tokenOf: (i: number) => string): Promise<Map<number, number>> {
  const statuses = new Map<number, number>()
  for (let i = 0; i < n; i += width) {
    const batch = await Promise.all(Array.from({ length: Math.min(width, n - i) }, async (_, j) => await app.inject({ url: '/me', headers: bearer(tokenOf(i + j)) })))
    for (const res of batch) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  }
  return statuses
}

t.test('1,000 tokens with unknown key ids: the JWKS is fetched about once, not once each', async (t) => {
  const jwks = await jwksServer(t, [published.jwk])
  // The default cooldown, far longer than the flood takes on any machine.
  const app = await build(t, { verifier: { jwksUrl: jwks.url } })
  // Each token names a key id of its own (the key is looked up before any signature is checked).
  const statuses = await flood(app, 1000, 50, (i) => unknownKid(`unknown-${i}`))
  t.strictSame([...statuses], [[401, 1000]], 'every one refused as an invalid token')
  t.comment(`JWKS fetches for 1,000 requests with distinct unknown key ids: ${jwks.hits}`)
  t.ok(jwks.hits <= 2, `at most two fetches (${jwks.hits})`)
  const same = stranger.sign({ sub: 'intruder' })
  const before = jwks.hits
  await flood(app, 1000, 50, () => same)
  t.comment(`JWKS fetches for 1,000 more requests with one unknown key id: ${jwks.hits - before}`)
  t.equal(jwks.hits, before, 'the same unknown key id again: no fetch within the cooldown')
  const res = await app.inject({ url: '/me', headers: bearer(published.sign({ sub: 'user' })) })
  t.equal(res.statusCode, 200, 'a token signed with a published key is served meanwhile')
})

t.test('after the cooldown an unknown key id may cause one fetch again (a key that was just rotated in)', async (t) => {
  const cooldown = 30_000
  const jwks = await jwksServer(t, [published.jwk])
  const app = await build(t, { verifier: { jwksUrl: jwks.url, cooldown } })
  const next = keyPair('rsa', 'next')
  const token = next.sign({ sub: 'u' })
  t.equal((await app.inject({ url: '/me', headers: bearer(token) })).statusCode, 401, 'not published yet')
  jwks.keys = [published.jwk, next.jwk]
  // jose times the cooldown with Date.now from the end of its last fetch: the clock is moved
  // past it rather than waited out (a timer may fire before Date.now shows its delay passed).
  const realNow = Date.now
  Date.now = () => realNow() + cooldown
  t.teardown(() => { Date.now = realNow })
  const hits = jwks.hits
  t.equal((await app.inject({ url: '/me', headers: bearer(token) })).statusCode, 200, 'published now: fetched once more and accepted')
  t.equal(jwks.hits, hits + 1)
})

t.test('a JWKS that does not answer: the fetch is aborted at the timeout, and waits are shared', async (t) => {
  const jwks = await jwksServer(t, [published.jwk])
  jwks.hang = true
  // A timeout long enough that all twenty reach the verifier while the first fetch is pending,
  // however busy the machine: one that ended before the last arrived would start a second.
  const app = await build(t, { verifier: { jwksUrl: jwks.url, timeout: 1000 } })
  const statuses = await flood(app, 20, 20, (i) => unknownKid(`k-${i}`))
  t.strictSame([...statuses], [[503, 20]], 'a 503 for each')
  for (let i = 0; i < 200 && jwks.abandoned === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25))
  t.equal(jwks.abandoned, 1, 'one request to the JWKS for twenty tokens, and it was given up (the connection closed)')
})
