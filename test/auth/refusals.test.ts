import t from 'tap'
import Fastify, { type InjectOptions } from 'fastify'
import auth from '../../plugins/auth/index.js'
import problem from '../../plugins/problem/index.js'
import { RefusalCounter } from '../../plugins/auth/refusals.js'
import { SECRET, bodyOf, build, hs256 } from './helper.js'

t.test('RefusalCounter: fixed windows per address, bounded', async t => {
  const c = new RefusalCounter(2, 1000, 3)
  t.equal(c.waitFor('a', 0), 0, 'nothing counted')
  c.add('a', 0)
  t.equal(c.waitFor('a', 10), 0, 'under the limit')
  c.add('a', 10)
  t.equal(c.waitFor('a', 10), 1, 'at the limit: the seconds left, rounded up')
  t.equal(c.waitFor('a', 999), 1)
  t.equal(c.waitFor('b', 999), 0, 'another address is apart')
  t.equal(c.waitFor('a', 1000), 0, 'the window is over')
  t.equal(c.size, 0, 'and forgotten')
  c.add('a', 1000)
  c.add('a', 2000)
  t.equal(c.waitFor('a', 2000), 0, 'a refusal after the window starts a new one')
  for (const key of ['b', 'c', 'd']) c.add(key, 2000)
  t.equal(c.size, 3, 'at most maxTracked addresses')
  t.equal(c.waitFor('a', 2000), 0, 'the oldest was dropped')
})

t.test('refusalLimit: after max refusals an address gets 429 before any token is checked', async t => {
  const app = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 3, timeWindow: 60_000 } })
  const from = (remoteAddress: string, authorization?: string): InjectOptions =>
    ({ url: '/v1/authors', remoteAddress, headers: authorization === undefined ? {} : { authorization } })
  const valid = `Bearer ${hs256({ sub: 'u', scope: 'authors:read' })}`
  const refusals: Array<[string, string | undefined]> = [['a bad token', 'Bearer not.a.token'], ['an empty header', ''], ['another scheme', 'Basic eDp5']]
  for (let i = 0; i < 5; i++) t.equal((await app.inject(from('10.0.0.1'))).statusCode, 401, 'no header: refused, not counted')
  t.equal((await app.inject(from('10.0.0.1', valid))).statusCode, 200, 'anonymous requests guess nothing: a valid token still passes')
  for (const [name, header] of refusals) t.equal((await app.inject(from('10.0.0.1', header))).statusCode, 401, name)
  const stopped = await app.inject(from('10.0.0.1', valid))
  t.equal(stopped.statusCode, 429, 'even a valid token waits: a right guess is worth nothing now')
  t.match(bodyOf(stopped), { title: 'Too Many Requests', status: 429, detail: /refused authentication; retry after 60 seconds/ })
  t.equal(stopped.headers['retry-after'], '60')
  t.equal((await app.inject(from('10.0.0.2', valid))).statusCode, 200, 'another address is not affected')
  const forbidden = await app.inject({ method: 'POST', url: '/v1/authors', remoteAddress: '10.0.0.3', headers: { authorization: valid } })
  t.equal(forbidden.statusCode, 403)
  for (let i = 0; i < 4; i++) await app.inject({ method: 'POST', url: '/v1/authors', remoteAddress: '10.0.0.3', headers: { authorization: valid } })
  t.equal((await app.inject(from('10.0.0.3', valid))).statusCode, 200, 'a 403 (a valid token without the scope) is no refusal of authentication')
  t.equal((await app.inject({ url: '/health', remoteAddress: '10.0.0.1' })).statusCode, 200, 'a route without auth still answers')
})

t.test('refusalLimit: an IPv6 client is counted by its /64, an IPv4-mapped one by its IPv4 address', async t => {
  const app = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 3, timeWindow: 60_000 } })
  const from = (remoteAddress: string, authorization: string): InjectOptions => ({ url: '/v1/authors', remoteAddress, headers: { authorization } })
  const valid = `Bearer ${hs256({ sub: 'u', scope: 'authors:read' })}`
  for (const address of ['2001:db8:1:2::a', '2001:db8:1:2::b', '2001:db8:1:2:ffff::c']) t.equal((await app.inject(from(address, 'Bearer bad'))).statusCode, 401, address)
  t.equal((await app.inject(from('2001:db8:1:2::d', valid))).statusCode, 429, 'another address of the /64 is stopped')
  t.equal((await app.inject(from('2001:db8:1:3::d', valid))).statusCode, 200, 'the next /64 is not')
  for (const address of ['::ffff:10.0.0.9', '10.0.0.9', '::ffff:10.0.0.9']) await app.inject(from(address, 'Bearer bad'))
  t.equal((await app.inject(from('10.0.0.9', valid))).statusCode, 429, 'one IPv4 client, whichever way its address came')
})

t.test('refusalLimit: a custom async verifier is counted too, and the window ends', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register((await import('../../plugins/problem/index.js')).default)
  let at = 0
  await app.register(auth, { verifier: async (token) => token === 'good' ? { sub: 'u', scopes: [], claims: {} } : null, refusalLimit: { max: 2, timeWindow: 100 }, now: () => at })
  app.get('/me', async (request) => ({ sub: request.principal?.sub }))
  const get = async (token: string): Promise<number> => (await app.inject({ url: '/me', headers: { authorization: `Bearer ${token}` } })).statusCode
  t.equal(await get('bad'), 401)
  t.equal(await get('bad'), 401)
  t.equal(await get('good'), 429)
  at = 99
  t.equal(await get('good'), 429, 'until the window ends')
  at = 100
  t.equal(await get('good'), 200, 'a new window')
})

t.test('now must be a clock', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register((await import('../../plugins/problem/index.js')).default)
  await t.rejects(async () => { await app.register(auth, { verifier: { secret: SECRET }, now: 5 as never }); await app.ready() }, /auth plugin: now must be a function returning milliseconds, got 5/)
})

t.test('refusalLimit is checked at registration; off by default', async t => {
  const bad: unknown[] = [{ max: 0, timeWindow: 1000 }, { max: 1 }, { max: 1, timeWindow: 1.5 }, true, 'yes']
  for (const refusalLimit of bad) {
    await t.rejects(async () => { await Fastify().register(problem).register(auth, { verifier: { secret: SECRET }, refusalLimit } as never).ready() }, { name: 'TypeError', message: /refusalLimit must be false or \{ max, timeWindow \}/ }, JSON.stringify(refusalLimit))
  }
  const app = await build(t, { verifier: { secret: SECRET } })
  for (let i = 0; i < 20; i++) await app.inject({ url: '/v1/authors', headers: { authorization: 'Bearer bad' } })
  t.equal((await app.inject({ url: '/v1/authors', headers: { authorization: `Bearer ${hs256({ sub: 'u', scope: 'authors:read' })}` } })).statusCode, 200)
})

t.test('refusalLimit: a 401 an async verifier rejects with (as the JWKS verifier does for a bad token) is counted as a null answer is', async t => {
  const { problems } = await import('../../plugins/problem/index.js')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(auth, {
    verifier: async (token) => {
      if (token === 'good') return { sub: 'u', scopes: [], claims: {} }
      throw problems.unauthorized('The access token has expired; obtain a new token and retry.')
    },
    refusalLimit: { max: 2, timeWindow: 60_000 }
  })
  app.get('/me', async (request) => ({ sub: request.principal?.sub }))
  const get = async (token: string): Promise<number> => (await app.inject({ url: '/me', headers: { authorization: `Bearer ${token}` } })).statusCode
  t.equal(await get('expired'), 401)
  t.equal(await get('expired'), 401)
  t.equal(await get('good'), 429)
})
