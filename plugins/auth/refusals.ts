/**
 * Requests the auth plugin refused (401), counted per client address in fixed windows, so
 * an address that keeps presenting bad tokens is stopped before its next token is checked:
 * guessing tokens costs a window per `max` guesses. Kept in memory, per instance; the
 * addresses tracked are bounded, the oldest dropped first.
 */
export class RefusalCounter {
  private readonly windows = new Map<string, { count: number, resetAt: number }>()

  readonly max: number
  readonly windowMs: number
  private readonly maxTracked: number

  constructor (max: number, windowMs: number, maxTracked = 100_000) {
    this.max = max
    this.windowMs = windowMs
    this.maxTracked = maxTracked
  }

  /** Seconds until `key` may try again, or 0 when it may now. */
  waitFor (key: string, now: number): number {
    const entry = this.windows.get(key)
    if (entry === undefined || entry.count < this.max) return 0
    if (entry.resetAt <= now) {
      this.windows.delete(key)
      return 0
    }
    return Math.ceil((entry.resetAt - now) / 1000)
  }

  /** Counts one refusal of `key`. */
  add (key: string, now: number): void {
    const entry = this.windows.get(key)
    if (entry !== undefined && entry.resetAt > now) {
      entry.count++
      return
    }
    this.windows.delete(key)
    if (this.windows.size >= this.maxTracked) this.windows.delete(this.windows.keys().next().value as string)
    this.windows.set(key, { count: 1, resetAt: now + this.windowMs })
  }

  /** Addresses tracked now (for tests and metrics). */
  get size (): number {
    return this.windows.size
  }
}

/**
 * Refusal counts kept outside the process, so that every instance of a service counts the same
 * refusals: N instances then allow `max` guesses per window, not N times as many. Each key
 * counts in a fixed window that starts with its first refusal.
 */
export interface SharedRefusalCounts {
  /** Counts one refusal of `key`: a new window of `windowMs` when none is running at `now`. */
  add: (key: string, windowMs: number, now: number) => Promise<void>
  /** The refusals of `key` in its running window and the milliseconds left of it (0 and 0 without one). */
  read: (key: string, now: number) => Promise<{ count: number, resetInMs: number }>
}

/** What `redisRefusalCounts` needs of an ioredis client. */
export interface RedisScripts {
  eval: (script: string, numKeys: number, ...args: Array<string | number>) => Promise<unknown>
}

// One round trip each, atomic: the first refusal of a window sets its expiry.
const ADD_SCRIPT = "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n"
const READ_SCRIPT = "local n = tonumber(redis.call('GET', KEYS[1]) or '0') if n == 0 then return {0, 0} end return {n, redis.call('PTTL', KEYS[1])}"

/**
 * Shared counts in Redis (an ioredis client, yours to open and close): one key per address
 * under `prefix`, which expires with its window. Redis's clock decides the windows.
 */
export function redisRefusalCounts (redis: RedisScripts, prefix = 'svc-auth-refusals:'): SharedRefusalCounts {
  return {
    async add (key, windowMs) {
      await redis.eval(ADD_SCRIPT, 1, prefix + key, windowMs)
    },
    async read (key) {
      const [count, ttl] = await redis.eval(READ_SCRIPT, 1, prefix + key) as [number, number]
      return { count, resetInMs: Math.max(ttl, 0) }
    }
  }
}
