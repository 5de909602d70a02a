import t from 'tap'
import type { Redis } from 'ioredis'
import { redisStoreOf } from '../../plugins/rate-limit/redis-store.js'
import { isProblemError } from '../../plugins/problem/errors.js'

// The store wrapper on a stand-in for ioredis (the library's own Redis store calls
// `defineCommand('rateLimit', …)` and then `rateLimit(key, window, max, …, cb)`), so that its
// contract holds on a machine without redis-server too: counts pass through unchanged, a
// failure to count becomes a 503 problem, and per-route stores keep both. redis.test.ts runs the
// same store against a real Redis server when one can be started.

interface Counted { current: number, ttl: number }
type Incr = (key: string, cb: (err: Error | null, result: Counted | null) => void, timeWindow: number, max: number) => void
interface Store { incr: Incr, child: (options: { continueExceeding: boolean, exponentialBackoff: boolean, routeInfo: { method: string, url: string } }) => Store }

function fakeRedis (failWith: Error | null = null): { redis: Redis, keys: string[] } {
  const counts = new Map<string, number>()
  const keys: string[] = []
  const redis = {
    // The library defines its script only on a client without the command.
    defineCommand () { throw new Error('rateLimit is defined already') },
    rateLimit (key: string, timeWindow: number, _max: number, _continueExceeding: boolean, _exponentialBackoff: boolean, cb: (err: Error | null, result: [number, number] | null) => void) {
      keys.push(key)
      if (failWith !== null) { cb(failWith, null); return }
      const current = (counts.get(key) ?? 0) + 1
      counts.set(key, current)
      cb(null, [current, timeWindow])
    }
  }
  return { redis: redis as unknown as Redis, keys }
}

function storeOf (redis: Redis): Store {
  const Ctor = redisStoreOf(redis, 'ns-') as unknown as new (params: { continueExceeding: boolean, exponentialBackoff: boolean }) => Store
  return new Ctor({ continueExceeding: false, exponentialBackoff: false })
}

const incr = async (store: Store, key: string): Promise<{ err: Error | null, result: Counted | null }> =>
  await new Promise((resolve) => { store.incr(key, (err, result) => { resolve({ err, result }) }, 60_000, 5) })

t.test('counts pass through, per key and per route, under the store\'s name space', async t => {
  const { redis, keys } = fakeRedis()
  const store = storeOf(redis)
  t.same(await incr(store, '10.0.0.1'), { err: null, result: { current: 1, ttl: 60_000 } })
  t.same(await incr(store, '10.0.0.1'), { err: null, result: { current: 2, ttl: 60_000 } })
  t.same(await incr(store, '10.0.0.2'), { err: null, result: { current: 1, ttl: 60_000 } })
  const route = store.child({ continueExceeding: false, exponentialBackoff: false, routeInfo: { method: 'GET', url: '/own' } })
  t.same(await incr(route, '10.0.0.1'), { err: null, result: { current: 1, ttl: 60_000 } }, 'a route counts apart')
  t.same(keys, ['ns-10.0.0.1', 'ns-10.0.0.1', 'ns-10.0.0.2', 'ns-GET/own-10.0.0.1'])
})

t.test('a failure to count is a 503 problem with Retry-After, the cause kept for the log', async t => {
  const down = new Error('connect ECONNREFUSED 127.0.0.1:6379')
  const { redis } = fakeRedis(down)
  const store = storeOf(redis)
  for (const s of [store, store.child({ continueExceeding: true, exponentialBackoff: false, routeInfo: { method: 'POST', url: '/x' } })]) {
    const { err, result } = await incr(s, '10.0.0.1')
    t.equal(result, null)
    t.ok(isProblemError(err))
    t.match(err, { statusCode: 503, detail: 'The rate limit cannot be checked now; retry later.', headers: { 'retry-after': 1 }, cause: down })
    t.notMatch(String((err as Error).message), /ECONNREFUSED/, 'the problem says nothing of the connection')
  }
})
