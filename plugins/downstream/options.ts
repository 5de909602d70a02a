import { setTimeout as timeout } from 'node:timers/promises'
import type { Dispatcher } from 'undici'
import { formatServiceHeader } from '../shared/service-header.js'
import { isValidUserAgent } from '../shared/user-agent.js'
import { after, type After } from '../shared/after.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'

/** Retries of failed calls (429, 503, connection failures); `false` never retries. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  attempts?: number
  /** Backoff before the second attempt, in ms; it doubles after each. Default 200. */
  base?: number
  /** The longest backoff, in ms. Default 5000. */
  cap?: number
  /** The longest `Retry-After` waited for, in ms; a longer one ends the retries. Default 30 000. */
  maxRetryAfter?: number
}

/** Options of `createDownstream` and of the `downstream` plugin. */
export interface DownstreamOptions {
  /** This service, sent as `Svc-Service: id=<id>; name=<name>` (conventions: Svc-Service). */
  service: { id: string, name: string }
  /** Sent as `User-Agent: <product>/<version> (<comment>)` (conventions: User-Agent). */
  userAgent: { product: string, version: number | string, comment?: string }
  /** Resolves relative URLs of calls. Default: calls give absolute URLs. */
  baseUrl?: string
  /**
   * Per call, in ms: `headers` until the answer's headers, `body` the longest pause inside the
   * body, `total` the whole call, its retries and the waits between them included (a body sent
   * a byte at a time never pauses long). Each at most 2 147 483 647 (about 24.8 days, the
   * longest a timer waits). Default 10 000 / 30 000 / 60 000.
   */
  timeouts?: { headers?: number, body?: number, total?: number }
  /** The largest answer body read, in bytes. Default 1 MiB. */
  maxResponseBytes?: number
  retry?: RetryOptions | false
  /** The execution context that is not sent ("absent header means production"). Default `'prod'`. */
  defaultExecutionContext?: string
  /** An undici Dispatcher (an Agent with an SSRF-safe lookup, a MockAgent); it stays the caller's to close. Default: an Agent of the client's own. */
  dispatcher?: Dispatcher
  /**
   * Waits between attempts. A call aborted meanwhile (its caller's signal, or its deadline) ends
   * at once whether the wait does or not; `signal` then aborts, to end the wait too (a timer
   * left running would keep the process alive). Default: a timer that does.
   */
  sleep?: Sleep
  /**
   * Arms the call's deadline (`timeouts.total`): calls `fn` after `ms` without keeping the
   * process alive, and returns what cancels it, called once the call is done. Tests fire it by
   * hand, or never. Default: `setTimeout`. (`headers` and `body` are undici's own timers.)
   */
  after?: After
  /** The time, in ms since the epoch, for `Retry-After` dates. Default `Date.now`. */
  now?: () => number
  /** A number in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number
}

/** The options checked, defaults applied. */
export interface Settings {
  baseUrl: URL | null
  headers: Record<string, string>
  timeouts: { headers: number, body: number, total: number }
  maxResponseBytes: number
  retry: Required<RetryOptions>
  defaultExecutionContext: string
  dispatcher: Dispatcher | null
  sleep: Sleep
  after: After
  now: () => number
  random: () => number
}

export const defaults = {
  timeouts: { headers: 10_000, body: 30_000, total: 60_000 },
  maxResponseBytes: 1024 * 1024,
  retry: { attempts: 3, base: 200, cap: 5000, maxRetryAfter: 30_000 },
  defaultExecutionContext: 'prod'
} as const

const OPTION_KEYS: OptionKeys<DownstreamOptions> = {
  service: true, userAgent: true, baseUrl: true, timeouts: true, maxResponseBytes: true, retry: true, defaultExecutionContext: true, dispatcher: true, sleep: true, after: true, now: true, random: true
}
const SERVICE_KEYS: OptionKeys<DownstreamOptions['service']> = { id: true, name: true }
const USER_AGENT_KEYS: OptionKeys<DownstreamOptions['userAgent']> = { product: true, version: true, comment: true }
const TIMEOUT_KEYS: OptionKeys<NonNullable<DownstreamOptions['timeouts']>> = { headers: true, body: true, total: true }
const RETRY_KEYS: OptionKeys<RetryOptions> = { attempts: true, base: true, cap: true, maxRetryAfter: true }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SERVICE_NAME = /^[a-z0-9-]{1,60}$/
const EXECUTION_CONTEXT = /^[a-z0-9_-]{1,100}$/

const checks = optionChecks('downstream plugin')
const fail: OptionChecks['fail'] = checks.fail

function object (name: string, value: unknown, keys: Readonly<Record<string, true>>): Record<string, unknown> {
  refuseUnknownOptions('downstream', value, keys, name === '' ? {} : { path: `${name}.` })
  return value as Record<string, unknown>
}

function integer (name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) fail(name, value, `an integer of ${min} or more`)
  return value
}

/** A timeout: a timer's delay (`total` is the deadline's `setTimeout`; `headers` and `body`, undici's timers). */
function timeoutOf (name: string, value: unknown, fallback: number): number {
  return value === undefined ? fallback : checks.timerMillis(name, value)
}

function fn<T> (name: string, value: unknown, fallback: T): T {
  if (value === undefined) return fallback
  if (typeof value !== 'function') fail(name, value, 'a function')
  return value as T
}

/** A wait between attempts of a call, told by `signal` when the call is aborted meanwhile. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>

const timer: Sleep = async (ms, signal) => { await timeout(ms, undefined, { signal }) }

function userAgent (value: unknown): string {
  const ua = object('userAgent', value, USER_AGENT_KEYS)
  const { product, version, comment } = ua
  if (typeof product !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(product)) fail('userAgent.product', product, 'a token such as "orders-service"')
  if (!/^\d+$/.test(String(version)) || (typeof version !== 'number' && typeof version !== 'string')) fail('userAgent.version', version, 'the major version, digits only')
  const text = `${product}/${String(version)}${comment === undefined ? '' : ` (${String(comment)})`}`
  if (!isValidUserAgent(text, { strictVersion: true })) fail('userAgent.comment', comment, 'text without parentheses or control characters')
  return text
}

function retry (value: unknown): Required<RetryOptions> {
  if (value === false) return { ...defaults.retry, attempts: 1 }
  if (value === undefined) return { ...defaults.retry }
  const r = object('retry', value, RETRY_KEYS)
  // No timer bound here: a wait is made only when it ends before the call's deadline
  // (timeouts.total, itself at most a timer's longest), so a longer one is never slept.
  const base = integer('retry.base', r.base, defaults.retry.base, 1)
  const cap = integer('retry.cap', r.cap, Math.max(defaults.retry.cap, base), 1)
  if (cap < base) fail('retry.cap', cap, `at least retry.base (${base})`)
  return {
    attempts: integer('retry.attempts', r.attempts, defaults.retry.attempts, 1),
    base,
    cap,
    maxRetryAfter: integer('retry.maxRetryAfter', r.maxRetryAfter, defaults.retry.maxRetryAfter, 0)
  }
}

function dispatcher (value: unknown): Dispatcher | null {
  if (value === undefined) return null
  if (typeof value !== 'object' || value === null || typeof (value as { dispatch?: unknown }).dispatch !== 'function') fail('dispatcher', value, 'an undici Dispatcher (Agent, Pool, MockAgent…)')
  return value as Dispatcher
}

/** Checks every option, naming the first bad one; the plugin and `createDownstream` both call it. */
export function resolveOptions (opts: unknown): Settings {
  const o = object('', opts, OPTION_KEYS) as Partial<DownstreamOptions>
  if (o.service === undefined) fail('service', undefined, 'this service\'s { id, name }')
  const { id, name } = object('service', o.service, SERVICE_KEYS)
  if (typeof id !== 'string' || !UUID.test(id)) fail('service.id', id, 'a UUID')
  if (typeof name !== 'string' || !SERVICE_NAME.test(name)) fail('service.name', name, '1 to 60 characters among a-z, 0-9 and -')
  if (o.userAgent === undefined) fail('userAgent', undefined, '{ product, version } such as { product: "orders-service", version: 2 }')
  let baseUrl: URL | null = null
  if (o.baseUrl !== undefined) {
    baseUrl = typeof o.baseUrl === 'string' && URL.canParse(o.baseUrl) ? new URL(o.baseUrl) : null
    if (baseUrl === null || !/^https?:$/.test(baseUrl.protocol)) fail('baseUrl', o.baseUrl, 'an http:// or https:// URL')
  }
  const timeouts = o.timeouts === undefined ? {} : object('timeouts', o.timeouts, TIMEOUT_KEYS)
  const context = o.defaultExecutionContext ?? defaults.defaultExecutionContext
  if (typeof context !== 'string' || !EXECUTION_CONTEXT.test(context)) fail('defaultExecutionContext', context, '1 to 100 characters among a-z, 0-9, _ and -')
  return {
    baseUrl,
    headers: {
      'user-agent': userAgent(o.userAgent),
      accept: 'application/json',
      'svc-service': formatServiceHeader({ id, name })
    },
    timeouts: {
      headers: timeoutOf('timeouts.headers', timeouts.headers, defaults.timeouts.headers),
      body: timeoutOf('timeouts.body', timeouts.body, defaults.timeouts.body),
      total: timeoutOf('timeouts.total', timeouts.total, defaults.timeouts.total)
    },
    maxResponseBytes: integer('maxResponseBytes', o.maxResponseBytes, defaults.maxResponseBytes, 1),
    retry: retry(o.retry),
    defaultExecutionContext: context,
    dispatcher: dispatcher(o.dispatcher),
    sleep: fn('sleep', o.sleep, timer),
    after: fn('after', o.after, after),
    now: fn('now', o.now, Date.now),
    random: fn('random', o.random, Math.random)
  }
}
