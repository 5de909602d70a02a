import { createRequire } from 'node:module'
import type { FastifyRateLimitOptions, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { problems } from '../problem/index.js'

/** What @fastify/rate-limit asks of a store (its `store` option): a count per key, and a store per route. */
interface CountingStore {
  incr: (key: string, cb: (err: Error | null, result: { current: number, ttl: number } | null) => void, timeWindow: number, max: number) => void
  child: (routeOptions: RouteStoreOptions) => CountingStore
}
interface RouteStoreOptions { continueExceeding: boolean, exponentialBackoff: boolean, routeInfo: { method: string, url: string } }
type RedisStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => CountingStore

// The library's own Redis store (its Lua script, keys and expiry), which its entry point does not export.
const LibraryRedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass

/**
 * A store that counts with another and turns its failures (Redis down, unreachable, too slow)
 * into a 503 problem saying the limit cannot be checked now, instead of the raw error, which
 * the problem plugin could only call an unexpected 500.
 */
class UnavailableAware implements CountingStore {
  readonly #inner: CountingStore

  constructor (inner: CountingStore) {
    this.#inner = inner
  }

  incr (key: string, cb: (err: Error | null, result: { current: number, ttl: number } | null) => void, timeWindow: number, max: number): void {
    this.#inner.incr(key, (err, result) => {
      if (err === null) cb(null, result)
      else cb(problems.unavailable('The rate limit cannot be checked now; retry later.', { cause: err, headers: { 'retry-after': 1 } }), null)
    }, timeWindow, max)
  }

  child (routeOptions: RouteStoreOptions): CountingStore {
    return new UnavailableAware(this.#inner.child(routeOptions))
  }
}

/**
 * The `store` option for @fastify/rate-limit: its own Redis store (Lua script, keys, expiry)
 * on `redis`, failing with a 503 when Redis cannot count. For `skipOnError: false`, where
 * such a failure refuses the request.
 */
export function redisStoreOf (redis: Redis, nameSpace: string): FastifyRateLimitStoreCtor {
  class RedisStore extends UnavailableAware {
    // The library builds its store with its resolved options, where both flags are booleans.
    constructor (params: FastifyRateLimitOptions & { continueExceeding?: boolean, exponentialBackoff?: boolean }) {
      super(new LibraryRedisStore(params.continueExceeding === true, params.exponentialBackoff === true, redis, nameSpace))
    }
  }
  // Its typings leave out the window and maximum the library passes to incr.
  return RedisStore as unknown as FastifyRateLimitStoreCtor
}
