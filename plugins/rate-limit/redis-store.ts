import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { problems } from '../problem/index.js'

/**
 * What the plugin asks of a Redis client: ioredis's `defineCommand` (an `ioredis` client fits).
 * Described here rather than imported, so that ioredis, an optional peer, is needed only by
 * those who count in Redis.
 */
export interface RedisClient {
  defineCommand: (name: string, definition: { numberOfKeys: number, lua: string }) => void
}

type Counted = { current: number, ttl: number }
type IncrCallback = (err: Error | null, result: Counted | null) => void
type CountCommand = (key: string, windowMs: number, cb: (err: Error | null, result: [number, number] | null) => void) => void

/** What @fastify/rate-limit passes to a store's `child` (its documented store contract). */
interface RouteStoreOptions { routeInfo: { method: string, url: string } }

const COMMAND = 'svcRateLimit'

// One round trip per request: count, start the window on the first request, and report how
// much of it is left. A key found without an expiry (written by something else) is given one,
// so a count never outlives its window.
const COUNT_LUA = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`

/** The client's counting command, defined on it once (ioredis runs it with EVALSHA). */
function countCommand (redis: RedisClient): CountCommand {
  const commands = redis as unknown as Record<string, CountCommand | undefined>
  if (typeof commands[COMMAND] !== 'function') redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: COUNT_LUA })
  const count = commands[COMMAND] as CountCommand
  return (key, windowMs, cb) => { count.call(redis, key, windowMs, cb) }
}

/**
 * A store in @fastify/rate-limit's store contract (its `store` option: `incr` and `child`),
 * counting in Redis. When Redis cannot count (down, unreachable, too slow) it fails with a 503
 * problem saying the limit cannot be checked now, instead of the raw error, which the problem
 * plugin could only call an unexpected 500. For `skipOnError: false`; with `skipOnError: true`
 * the library's own Redis store serves.
 */
class RedisCountingStore {
  readonly #count: CountCommand
  readonly #prefix: string

  constructor (count: CountCommand, prefix: string) {
    this.#count = count
    this.#prefix = prefix
  }

  incr (key: string, cb: IncrCallback, timeWindow: number): void {
    this.#count(this.#prefix + key, timeWindow, (err, result) => {
      if (err !== null || result === null) cb(problems.unavailable('The rate limit cannot be checked now; retry later.', { cause: err, headers: { 'retry-after': 1 } }), null)
      else cb(null, { current: Number(result[0]), ttl: Number(result[1]) })
    })
  }

  /** A route with a limit of its own counts apart, under its method and path. */
  child (routeOptions: RouteStoreOptions): RedisCountingStore {
    return new RedisCountingStore(this.#count, `${this.#prefix}${routeOptions.routeInfo.method}${routeOptions.routeInfo.url}-`)
  }
}

/** The `store` option for @fastify/rate-limit: counts on `redis` under `nameSpace`. */
export function redisStoreOf (redis: RedisClient, nameSpace: string): FastifyRateLimitStoreCtor {
  const count = countCommand(redis)
  class RedisStore extends RedisCountingStore {
    constructor () {
      super(count, nameSpace)
    }
  }
  // The library's typings leave out the window and maximum it passes to incr.
  return RedisStore as unknown as FastifyRateLimitStoreCtor
}
