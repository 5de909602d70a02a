import t, { type Test } from 'tap'
import Fastify from 'fastify'
import rateLimit, { type RateLimitPluginOptions } from '../../plugins/rate-limit/index.js'
import problem from '../../plugins/problem/index.js'
import { bearer, bodyOf, build } from './helper.js'

const ALICE = bearer('alice')
const BOB = bearer('bob')

/**
 * Date.now held still for the rest of the test, and moved only by `advance`: the in-memory store
 * of @fastify/rate-limit reads it on each request to place the request in its window.
 */
function heldClock (t: Test): { advance: (ms: number) => void } {
  const realNow = Date.now
  let now = realNow()
  Date.now = () => now
  t.teardown(() => { Date.now = realNow })
  return { advance: (ms) => { now += ms } }
}

t.test('keyed by the token\'s subject: each caller has its own budget, whatever its address', async t => {
  const app = await build(t, { max: 2 })
  const get = async (authorization: string, ip = '203.0.113.7'): Promise<number> =>
    (await app.inject({ url: '/things', headers: { authorization, 'x-forwarded-for': ip } })).statusCode
  t.strictSame([await get(ALICE), await get(ALICE, '198.51.100.1'), await get(ALICE, '198.51.100.2')], [200, 200, 429], 'alice from three addresses')
  t.strictSame([await get(BOB), await get(BOB)], [200, 200], 'bob from the same address is not affected')
  const anonymous = await app.inject({ url: '/things', headers: { 'x-forwarded-for': '203.0.113.7' } })
  t.equal(anonymous.statusCode, 200, 'nor a caller without a token from that address')
})

t.test('in memory: the most recent memoryCallers callers are kept, 100,000 by default, on a route with its own limit too', async t => {
  const sequence = async (opts: RateLimitPluginOptions, others: number, url: string): Promise<number[]> => {
    const app = await build(t, { max: 2, timeWindow: '1 hour', ...opts }, { routes: (app) => { app.get('/own', { config: { rateLimit: { max: 2 } } }, async () => ({})) } })
    const from = async (ip: string): Promise<number> => (await app.inject({ url, headers: { 'x-forwarded-for': ip } })).statusCode
    const first = [await from('203.0.113.7'), await from('203.0.113.7'), await from('203.0.113.7')]
    for (let i = 0; i < others; i++) await from(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
    return [...first, await from('203.0.113.7')]
  }
  for (const url of ['/things', '/own']) {
    // More callers in a window than @fastify/rate-limit's own default keeps (5,000), also in the
    // store it makes for a route's own limit.
    t.strictSame(await sequence({}, 5001, url), [200, 200, 429, 429], `${url}: still limited after 5,001 other callers`)
    t.strictSame(await sequence({ memoryCallers: 3 }, 3, url), [200, 200, 429, 200], `${url}: forgotten after memoryCallers others: a new window`)
  }
})

t.test('without a token: keyed by the client address, through the trusted proxy', async t => {
  const app = await build(t, { max: 1 })
  const from = async (ip: string): Promise<number> => (await app.inject({ url: '/things', headers: { 'x-forwarded-for': ip } })).statusCode
  t.strictSame([await from('198.51.100.1'), await from('198.51.100.1')], [200, 429])
  t.equal(await from('198.51.100.2'), 200, 'another address')
  t.equal((await app.inject({ url: '/things', headers: { authorization: ALICE, 'x-forwarded-for': '198.51.100.1' } })).statusCode, 200, 'a token from the exhausted address has its own budget')
  t.strictSame([await from('2001:db8:1:2::1'), await from('2001:db8:1:2::2')], [200, 429], 'an IPv6 client by its /64: it may send from any address of it')
  t.equal(await from('2001:db8:1:3::1'), 200, 'the next /64')
})

t.test('counted after auth, whatever the registration order; refused tokens are not counted', async t => {
  for (const rateLimitFirst of [false, true]) {
    const app = await build(t, { max: 2 }, { rateLimitFirst })
    for (let i = 0; i < 4; i++) {
      t.equal((await app.inject({ url: '/things', headers: { authorization: 'Bearer not-a-token' } })).statusCode, 401)
    }
    const first = await app.inject({ url: '/things', headers: { authorization: ALICE } })
    t.equal(first.statusCode, 200, `rate limit ${rateLimitFirst ? 'before' : 'after'} auth: not exhausted by refused requests`)
    t.strictSame(bodyOf(first), { sub: 'alice' })
    t.equal(first.headers['ratelimit-remaining'], '1', 'alice\'s own count')
    t.equal((await app.inject({ url: '/things' })).headers['ratelimit-remaining'], '1', 'the address has its own count')
  }
})

t.test('headers on every answer; a 429 problem with the throttling values and Retry-After', async t => {
  const clock = heldClock(t)
  const app = await build(t, { max: 2, timeWindow: '1 minute' })
  const ok = await app.inject({ url: '/things', headers: { authorization: ALICE } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['ratelimit-limit'], '2')
  t.equal(ok.headers['ratelimit-remaining'], '1')
  t.equal(ok.headers['ratelimit-reset'], '60')
  t.equal(ok.headers['retry-after'], undefined)
  t.equal(ok.headers['x-ratelimit-limit'], undefined, 'the draft names only')
  // The window runs from the first request: the reset counts down from it, in whole seconds rounded up.
  clock.advance(1_500)
  await app.inject({ url: '/things', headers: { authorization: ALICE } })
  const res = await app.inject({ url: '/things', headers: { authorization: ALICE, 'x-request-id': 'req-429' } })
  t.equal(res.statusCode, 429)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.equal(res.headers['ratelimit-limit'], '2')
  t.equal(res.headers['ratelimit-remaining'], '0')
  t.equal(res.headers['ratelimit-reset'], '59')
  t.equal(res.headers['retry-after'], res.headers['ratelimit-reset'])
  const body = bodyOf(res)
  t.strictSame(body, {
    title: 'Too Many Requests',
    status: 429,
    requestId: 'req-429',
    detail: `The limit of 2 requests per 1 minute is used up; retry after ${String(res.headers['retry-after'])} seconds.`
  })
})

t.test('the window resets', async t => {
  const clock = heldClock(t)
  const app = await build(t, { max: 1, timeWindow: 1500 })
  t.equal((await app.inject({ url: '/things' })).statusCode, 200)
  const res = await app.inject({ url: '/things' })
  t.equal(res.statusCode, 429)
  t.equal(bodyOf(res).detail, 'The limit of 1 request per 1500 milliseconds is used up; retry after 2 seconds.')
  clock.advance(1_499)
  const last = await app.inject({ url: '/things' })
  t.equal(last.statusCode, 429, 'the last millisecond of the window')
  t.equal(bodyOf(last).detail, 'The limit of 1 request per 1500 milliseconds is used up; retry after 1 second.')
  clock.advance(1)
  t.equal((await app.inject({ url: '/things' })).statusCode, 200, 'a new window')
})

t.test('exempt routes and routes with their own limit', async t => {
  const app = await build(t, { max: 2 }, {
    routes: (app) => {
      app.get('/health', { config: { rateLimit: false } }, async () => ({ status: 'UP' }))
      app.get('/search', { config: { rateLimit: { max: 4 } } }, async () => ({ results: [] }))
      app.get('/export', { config: { rateLimit: { max: 1, timeWindow: '2 hours' } } }, async () => ({ ok: true }))
      app.get('/slow', { config: { rateLimit: { timeWindow: 90_000 } } }, async () => ({ ok: true }))
    }
  })
  const statuses = async (url: string, n: number): Promise<number[]> => {
    const out: number[] = []
    for (let i = 0; i < n; i++) out.push((await app.inject({ url })).statusCode)
    return out
  }
  const health = await app.inject({ url: '/health' })
  t.equal(health.headers['ratelimit-limit'], undefined, 'an exempt route has no rate-limit headers')
  t.strictSame(await statuses('/health', 5), [200, 200, 200, 200, 200], 'exempt')
  t.strictSame(await statuses('/things', 3), [200, 200, 429], 'the global limit, not consumed by the exempt route')
  t.strictSame(await statuses('/search', 5), [200, 200, 200, 200, 429], 'its own max, counted apart')
  const exported = await statuses('/export', 2)
  t.strictSame(exported, [200, 429])
  const last = await app.inject({ url: '/export' })
  t.match(bodyOf(last).detail, /^The limit of 1 request per 2 hours is used up; retry after \d+ seconds\.$/)
  t.equal(last.headers['ratelimit-limit'], '1')
  await statuses('/slow', 2)
  t.match(bodyOf(await app.inject({ url: '/slow' })).detail, /^The limit of 2 requests per 90 seconds/, 'the global max with its own window')
})

t.test('options are checked at registration', async t => {
  const cases: Array<[RateLimitPluginOptions, RegExp]> = [
    [{ max: 0 }, /rate-limit plugin: max must be a positive integer of requests, got 0/],
    [{ max: 1.5 }, /max must be .* got 1.5/],
    [{ max: '100' as unknown as number }, /max must be .* got "100"/],
    [{ timeWindow: 0 }, /timeWindow must be a positive integer of milliseconds or a duration such as "1 minute", got 0/],
    [{ timeWindow: 'soon' }, /timeWindow must be .* got "soon"/],
    [{ timeWindow: '5 fortnights' }, /timeWindow must be .* got "5 fortnights"/],
    [{ timeWindow: '0.0001 s' }, /timeWindow must be .* got "0.0001 s"/],
    [{ timeWindow: (() => 1000) as never }, /timeWindow must be .* got a function/],
    [{ redis: 'http://cache:6379' }, /redis must be a redis:\/\/ or rediss:\/\/ URL or an ioredis client, got a string of 17 characters/],
    [{ redis: 'http://:hunter2@cache' }, /got a string of 21 characters$/],
    [{ redis: {} as never }, /redis must be .* got \{\}/],
    [{ nameSpace: '' }, /nameSpace must be a non-empty string, got ""/],
    [{ skipOnError: 'yes' as unknown as boolean }, /skipOnError must be a boolean, got "yes"/],
    [{ memoryCallers: 0 }, /^rate-limit plugin: memoryCallers must be a positive integer of callers, got 0$/],
    [{ memoryCallers: 1.5 }, /memoryCallers must be a positive integer of callers, got 1.5$/],
    [{ timewindow: 1000 } as never, /^rate-limit plugin: unknown option timewindow \(did you mean timeWindow\?\); the options are max, timeWindow, redis, nameSpace, skipOnError, memoryCallers$/]
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await t.rejects(async () => { await app.register(rateLimit, opts); await app.ready() }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
})

t.test('route configs are checked at registration, naming the route', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [true, /route GET \/r: config.rateLimit must be false or \{ max\?, timeWindow\? \}, got true/],
    [null, /config.rateLimit must be false or .* got null/],
    [{ ban: 3 }, /route GET \/r: config.rateLimit.ban is not supported; use max and timeWindow/],
    [{ errorResponseBuilder: () => ({}) }, /config.rateLimit.errorResponseBuilder is not supported/],
    [{ max: -1 }, /route GET \/r: config.rateLimit.max must be a positive integer of requests, got -1/],
    [{ timeWindow: 'later' }, /route GET \/r: config.rateLimit.timeWindow must be .* got "later"/]
  ]
  for (const [config, message] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await app.register(rateLimit)
    t.throws(() => app.get('/r', { config: { rateLimit: config as false } }, async () => ({})), { name: 'TypeError', message }, JSON.stringify(config) ?? 'undefined')
  }
})

t.test('defaults: 1000 per minute', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(rateLimit)
  app.get('/x', async () => ({}))
  const res = await app.inject({ url: '/x' })
  t.equal(res.headers['ratelimit-limit'], '1000')
  t.equal(res.headers['ratelimit-reset'], '60')
})
