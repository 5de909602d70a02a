/*
 * When a failed attempt is tried again, and after how long. RFC 9110 §9.2.2: GET, HEAD, PUT,
 * DELETE and OPTIONS are idempotent, so repeating one is safe; a POST or PATCH is repeated only
 * with a Svc-Idempotency-Key, which the other service uses to apply it once (conventions:
 * Svc-Idempotency-Key).
 */

export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])

/** The statuses that say "try again later" (conventions: 429 is retriable; 503 is an overload). */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503])

/** Failures before any answer where the request was not taken up, or the connection broke. */
export const CONNECTION_FAILURES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  // undici: the other side closed the connection (a socket hang-up), or the connect timed out.
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED'
])

/**
 * The wait before attempt `attempt + 1` (`attempt` ≥ 1): exponential from `base`, at most `cap`,
 * "equal jitter" so that callers that failed together do not come back together, yet each
 * waits at least half the step: within [step / 2, step].
 */
export function backoff (attempt: number, base: number, cap: number, random: () => number): number {
  const step = Math.min(cap, base * 2 ** (attempt - 1))
  return Math.round(step / 2 + random() * (step / 2))
}

/**
 * `Retry-After` in ms from `now` (RFC 9110 §10.2.3: delay-seconds or an HTTP-date); a date in
 * the past is 0. Null when absent or unreadable: the backoff applies instead.
 */
export function retryAfter (value: string | string[] | undefined, now: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (text === undefined || text === '') return null
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  if (!/[a-z]/i.test(text) || Number.isNaN(date)) return null
  return Math.max(0, date - now)
}
