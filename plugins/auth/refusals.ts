/**
 * Requests the auth plugin refused (401), counted per client address in fixed windows, so
 * an address that keeps presenting bad tokens is stopped before its next token is checked:
 * guessing tokens costs a window per `max` guesses. Kept in memory, per instance; the
 * addresses tracked are bounded, the oldest dropped first.
 */
export class RefusalCounter {
  private readonly windows = new Map<string, { count: number, resetAt: number }>()

  constructor (readonly max: number, readonly windowMs: number, private readonly maxTracked = 100_000) {}

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
