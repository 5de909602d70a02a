// What the rules share: the client, what the document says, the pages read at the start, and
// the entities the check created (with --writes).
import type { HttpClient } from './http.js'
import type { Collection, ServiceModel } from './openapi.js'
import type { Exchange, VerdictKind } from './types.js'

export type Item = Record<string, unknown>

export interface Sample {
  collection: Collection
  /** The first page as the service answered it (no query parameters). */
  exchange: Exchange
  /** Its results when it had the envelope; else empty. */
  items: Item[]
}

export interface Created {
  collection: Collection
  id: string
  /** The item's path, relative to the base URL. */
  path: string
  /** The creating exchange (POST). */
  exchange: Exchange
  /** `deleted` once its DELETE was answered 2xx; `left behind` once listed as such, with the reason. */
  state: 'live' | 'deleted' | 'left behind'
}

export interface Context {
  http: HttpClient
  model: ServiceModel
  document: Record<string, unknown> | null
  hasToken: boolean
  /** Whether a limited token (accepted, lacking a permission) was given. */
  hasLimitedToken: boolean
  origin: string | undefined
  writes: boolean
  samples: Sample[]
  created: Created[]
  /** Why nothing was created, when --writes could not create anything. */
  createFailure: string | null
  /** Set by cleanup: what could not be removed. */
  leftBehind: string[]
  /** The key of the POST idempotency.replay sent, for idempotency.reuse. */
  usedKey: { key: string, collection: Collection, body: Record<string, unknown> } | null
}

export type Outcome =
  | { verdict: 'pass' }
  | { verdict: Exclude<VerdictKind, 'pass'>, reason: string, exchange?: Exchange }

export const pass = (): Outcome => ({ verdict: 'pass' })
export const fail = (reason: string, exchange?: Exchange): Outcome => exchange === undefined ? { verdict: 'fail', reason } : { verdict: 'fail', reason, exchange }
export const notApplicable = (reason: string): Outcome => ({ verdict: 'not applicable', reason })
export const notChecked = (reason: string): Outcome => ({ verdict: 'not checked', reason })

/** The path of one item of a collection. */
export function itemPath (collection: Collection, id: string): string {
  const encoded = encodeURIComponent(id)
  return collection.itemPath === null ? `${collection.path}/${encoded}` : collection.itemPath.replace(/\{[^}]+\}/, encoded)
}

/**
 * A probe refused for its credentials (401, 403) observes nothing of the rule it was sent for:
 * the rule is not checked, saying what it needs (`what` the token must be allowed to do). A
 * service may check the token before or after what the probe is about, and both follow the
 * convention.
 */
export function refusedCredentials (ctx: Context, ex: Exchange, what: 'read' | 'write'): Outcome | null {
  const { status } = ex.response
  if (status !== 401 && status !== 403) return null
  const answered = `${ex.request.method} ${ex.request.path} answers ${status}`
  if (status === 403) return notChecked(`${answered}: needs a token with ${what} scope`)
  return notChecked(ctx.hasToken ? `${answered}: the token is refused there` : `${answered}: needs --token`)
}

/** The first sample whose page has at least `min` items, the fullest first when none has. */
export function sampleWith (ctx: Context, min: number): Sample | undefined {
  return ctx.samples.find(s => s.items.length >= min)
}

/** A collection that answered its plain GET with 200, for probes of what every request must get. */
export function answering (ctx: Context): Sample | undefined {
  return ctx.samples.find(s => s.exchange.response.status === 200)
}

/** A collection that answered the envelope, for the probes of paging and ETags. */
export function enveloped (ctx: Context): Sample | undefined {
  return ctx.samples.find(s => s.exchange.response.status === 200 && isEnvelope(s.exchange.response.json))
}

export function isEnvelope (body: unknown): body is { results: Item[], paging: Record<string, unknown> } {
  return typeof body === 'object' && body !== null && Array.isArray((body as { results?: unknown }).results) &&
    typeof (body as { paging?: unknown }).paging === 'object' && (body as { paging?: unknown }).paging !== null
}

/** A random id no service holds, of the identifier characters every service accepts. */
export const missingId = (): string => `svc-check-missing-${Math.random().toString(36).slice(2, 10)}`

/** What is wrong with an answer that should be the problem of `status`, or null. */
export function problemFault (ex: Exchange, status?: number | readonly number[]): string | null {
  const res = ex.response
  const wanted = status === undefined ? null : Array.isArray(status) ? status : [status]
  if (wanted !== null && !wanted.includes(res.status)) return `expected ${wanted.join(' or ')}, got ${res.status}`
  if (ex.request.method === 'HEAD' || res.status === 304) return null
  if (!/^application\/problem\+json\b/i.test(res.headers['content-type'] ?? '')) return `expected Content-Type application/problem+json, got ${res.headers['content-type'] ?? 'none'}`
  const body = res.json as Record<string, unknown> | undefined
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body is not a JSON object'
  if (typeof body.title !== 'string' || body.title === '') return 'the problem has no title'
  if (body.status !== res.status) return `the problem's status is ${JSON.stringify(body.status)}, not the HTTP status ${res.status}`
  if (typeof body.requestId !== 'string' || body.requestId === '') return 'the problem has no requestId'
  return null
}

/** The context items of a problem answer. */
export function contextOf (ex: Exchange): Array<Record<string, unknown>> {
  const context = (ex.response.json as { context?: unknown } | undefined)?.context
  return Array.isArray(context) ? context.filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null) : []
}

/** A status as a reason shows it: 0 is a request that got no answer in time. */
export const statusShown = (status: number): string => status === 0 ? 'no answer in time' : String(status)

/** What is wrong with the status of an answer, or null (the body is `errors.problem-body`'s). */
export function statusFault (ex: Exchange, status: number | readonly number[]): string | null {
  const wanted = Array.isArray(status) ? status : [status]
  return wanted.includes(ex.response.status) ? null : `expected ${wanted.join(' or ')}, got ${statusShown(ex.response.status)}`
}
