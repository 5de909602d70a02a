import t from 'tap'
import { redisStoreOf, type RedisClient } from '../../plugins/rate-limit/redis-store.js'
import { isProblemError } from '../../plugins/problem/errors.js'

// The counting store on a stand-in for ioredis (it defines its script with
// `defineCommand('svcRateLimit', …)` and then calls `svcRateLimit(key, window, cb)`), so that
// its contract holds on a machine without redis-server too: counts pass through, a failure to
// count becomes a 503 problem, and per-route stores keep both. redis.test.ts runs the same store
// against a real Redis server when one can be started.

interface Counted { current: number, ttl: number }
type Incr = (key: string, cb: (err: Error | null, result: Counted | null) => void, timeWindow: number, max: number) => void
interface Store { incr: Incr, child: (options: { continueExceeding: boolean, exponentialBackoff: boolean, routeInfo: { method: string, url: string } }) => Store }
type Reply = (err: Error | null, result: [number, number] | null) => void

function fakeRedis (answer: (cb: Reply, current: number, windowMs: number) => void = (cb, current, windowMs) => { cb(null, [current, windowMs]) }): { redis: RedisClient, keys: string[], defined: string[] } {
  const counts = new Map<string, number>()
  const keys: string[] = []
  const defined: string[] = []
  const redis: RedisClient & Record<string, unknown> = {
    defineCommand (name: string, definition: { numberOfKeys: number, lua: string }) {
      defined.push(`${name}/${definition.numberOfKeys}`)
      redis[name] = function (this: unknown, key: string, windowMs: number, cb: Reply) {
        if (this !== redis) throw new Error('called without its client')
        keys.push(key)
        const current = (counts.get(key) ?? 0) + 1
        counts.set(key, current)
        answer(cb, current, windowMs)
      }
    }
  }
  return { redis, keys, defined }
}

function storeOf (redis: RedisClient): Store {
  const Ctor = redisStoreOf(redis, 'ns-') as unknown as new (params: object) => Store
  return new Ctor({})
}

const incr = async (store: Store, key: string): Promise<{ err: Error | null, result: Counted | null }> =>
  await new Promise((resolve) => { store.incr(key, (err, result) => { resolve({ err, result }) }, 60_000, 5) })

t.test('counts pass through, per key and per route, under the store\'s name space', async t => {
  const { redis, keys, defined } = fakeRedis()
  const store = storeOf(redis)
  storeOf(redis)
  t.strictSame(defined, ['svcRateLimit/1'], 'the script is defined once per client')
  t.strictSame(await incr(store, '10.0.0.1'), { err: null, result: { current: 1, ttl: 60_000 } })
  t.strictSame(await incr(store, '10.0.0.1'), { err: null, result: { current: 2, ttl: 60_000 } })
  t.strictSame(await incr(store, '10.0.0.2'), { err: null, result: { current: 1, ttl: 60_000 } })
  const route = store.child({ continueExceeding: false, exponentialBackoff: false, routeInfo: { method: 'GET', url: '/own' } })
  t.strictSame(await incr(route, '10.0.0.1'), { err: null, result: { current: 1, ttl: 60_000 } }, 'a route counts apart')
  t.strictSame(keys, ['ns-10.0.0.1', 'ns-10.0.0.1', 'ns-10.0.0.2', 'ns-GET/own-10.0.0.1'])
})

t.test('a failure to count is a 503 problem with Retry-After, the cause kept for the log', async t => {
  const down = new Error('connect ECONNREFUSED 127.0.0.1:6379')
  const answers: Array<[string, (cb: Reply) => void, unknown]> = [
    ['an error', (cb) => { cb(down, null) }, down],
    ['no result', (cb) => { cb(null, null) }, null]
  ]
  for (const [name, answer, cause] of answers) {
    const { redis } = fakeRedis(answer)
    const store = storeOf(redis)
    for (const s of [store, store.child({ continueExceeding: true, exponentialBackoff: false, routeInfo: { method: 'POST', url: '/x' } })]) {
      const { err, result } = await incr(s, '10.0.0.1')
      t.equal(result, null, name)
      t.ok(isProblemError(err), name)
      t.match(err, { statusCode: 503, detail: 'The rate limit cannot be checked now; retry later.', headers: { 'retry-after': 1 } }, name)
      t.equal((err as Error).cause, cause, name)
      t.notMatch(String((err as Error).message), /ECONNREFUSED/, 'the problem says nothing of the connection')
    }
  }
})
