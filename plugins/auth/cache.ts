import type { Principal } from './verifiers.js'

/** Longest a verified token is trusted without checking its signature again. */
export const MAX_CACHE_MS = 10 * 60 * 1000

interface Entry { principal: Principal, until: number }

/** Until when a verified principal may be trusted without a new check: its `exp`, at most 10 minutes. */
export function trustedUntil (principal: Principal, now: number): number {
  // The built-in verifiers require a numeric exp (fast-jwt checks it before we get here).
  return Math.min((principal.claims.exp as number) * 1000, now + MAX_CACHE_MS)
}

/**
 * Verified tokens by their exact text, kept until the token's `exp` (at most 10 minutes):
 * a repeated token costs one Map lookup, no hashing and no signature check. Bounded, the
 * oldest entry leaving first (a Map iterates in insertion order).
 */
export class PrincipalCache {
  readonly #entries = new Map<string, Entry>()
  readonly #size: number

  /** `size` ≥ 1; a cache of size 0 is simply not built. */
  constructor (size: number) {
    this.#size = size
  }

  get (token: string, now: number): Principal | undefined {
    const entry = this.#entries.get(token)
    if (entry === undefined) return undefined
    if (entry.until <= now) {
      this.#entries.delete(token)
      return undefined
    }
    return entry.principal
  }

  set (token: string, principal: Principal, now: number): void {
    const until = trustedUntil(principal, now)
    if (this.#entries.size >= this.#size) {
      const oldest = this.#entries.keys().next().value as string
      this.#entries.delete(oldest)
    }
    this.#entries.set(token, { principal, until })
  }
}
