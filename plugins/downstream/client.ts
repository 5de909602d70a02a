import { randomUUID } from 'node:crypto'
import type { Agent, Dispatcher } from 'undici'
import { answerOf, readBody, type DownstreamResponse } from './answer.js'
import { CallAbort } from './call-abort.js'
import { follow } from './follow.js'
import { DownstreamConnectionError, DownstreamError, DownstreamTimeoutError, type CallTarget } from './errors.js'
import { resolveOptions, type DownstreamOptions, type Settings } from './options.js'
import { CONNECTION_FAILURES, IDEMPOTENT_METHODS, RETRY_STATUSES, backoff, retryAfter } from './retry.js'
import { optionChecks } from '../shared/options.js'

/** What a call carries from the request that makes it (conventions: X-Request-ID, Svc-Execution-Context). */
export interface PropagatedContext {
  requestId?: string | undefined
  /** Sent unless it is the default (production) context. */
  executionContext?: string | undefined
}

/** One outgoing call. */
export interface DownstreamCall {
  /** Default `GET`. */
  method?: string
  /** Absolute, or relative to the client's `baseUrl`. */
  url: string | URL
  query?: Record<string, string | number | boolean | ReadonlyArray<string | number | boolean>>
  /** Added to (and replacing) the client's headers. */
  headers?: Record<string, string>
  /** A body sent as JSON (`Content-Type: application/json` unless `headers` names one). */
  json?: unknown
  /** A body sent as it is; give its `content-type` in `headers`. */
  body?: string | Uint8Array
  /** `Svc-Idempotency-Key`: a key, or `true` for a new UUID, the same on every retry. A POST or PATCH with one is retried. */
  idempotencyKey?: string | true
  /** This call's timeouts, in ms, in place of the client's. */
  timeouts?: { headers?: number, body?: number, total?: number }
  /** This call's cap on the answer's body, in place of the client's. */
  maxResponseBytes?: number
  /** `false`: one attempt only. */
  retry?: false
  signal?: AbortSignal
}

type Shortcut = <T = unknown>(url: string | URL, call?: Omit<DownstreamCall, 'url' | 'method'>) => Promise<DownstreamResponse<T>>

/** The client: every outgoing call of a service, carrying the convention's headers. */
export interface Downstream {
  /** Resolves with a 1xx–3xx answer; rejects with a `DownstreamError` (a `DownstreamProblemError` for a problem answer). */
  request: <T = unknown>(call: DownstreamCall) => Promise<DownstreamResponse<T>>
  get: Shortcut
  post: Shortcut
  put: Shortcut
  patch: Shortcut
  delete: Shortcut
  /** The same client, its calls carrying `context` (a function is read at each call). */
  with: (context: PropagatedContext | (() => PropagatedContext)) => Downstream
}

/** The client as created: it owns its connections until closed. */
export interface DownstreamClient extends Downstream {
  /** Closes the client's own connections (a `dispatcher` given in the options stays open). */
  close: () => Promise<void>
}

const IDEMPOTENCY_KEY = /^[a-z0-9-]{20,255}$/

function targetUrl (settings: Settings, call: DownstreamCall): URL {
  const url = new URL(call.url, settings.baseUrl ?? undefined)
  for (const [name, value] of Object.entries(call.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v))
  }
  return url
}

function headersOf (settings: Settings, call: DownstreamCall, context: PropagatedContext): Record<string, string> {
  // Copied key by key, not spread: V8 gives an object spread and then added to a shape of its
  // own each time, and every property access on it after, here and in undici, misses its cache.
  const headers: Record<string, string> = {}
  for (const name in settings.headers) headers[name] = settings.headers[name] as string
  if (context.requestId !== undefined && context.requestId !== '') headers['x-request-id'] = context.requestId
  const ctx = context.executionContext
  if (ctx !== undefined && ctx !== '' && ctx !== settings.defaultExecutionContext) headers['svc-execution-context'] = ctx
  if (call.json !== undefined) headers['content-type'] = 'application/json'
  for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value
  let key = call.idempotencyKey === true ? randomUUID() : call.idempotencyKey
  key ??= headers['svc-idempotency-key']
  if (key !== undefined) {
    if (!IDEMPOTENCY_KEY.test(key)) throw new TypeError(`downstream: idempotencyKey must be 20 to 255 characters among a-z, 0-9 and - (a UUID), got ${JSON.stringify(key)}`)
    headers['svc-idempotency-key'] = key
  }
  return headers
}

/** undici's and the system's errors as the client's own; anything else (an abort) as it is. */
function failureOf (err: unknown, target: CallTarget, timeouts: Settings['timeouts']): unknown {
  if (err instanceof DownstreamError) return err
  const code = (Object(err) as { code?: unknown }).code
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new DownstreamTimeoutError('headers', timeouts.headers, target, err)
  if (code === 'UND_ERR_BODY_TIMEOUT') return new DownstreamTimeoutError('body', timeouts.body, target, err)
  if (typeof code === 'string' && CONNECTION_FAILURES.has(code)) return new DownstreamConnectionError(code, target, err)
  return err
}

/**
 * Whether a failed attempt of a retryable call is tried again: a broken connection always;
 * a timeout only for an idempotent method, since a POST sent in full may still be at work
 * on the other side, and a second one would race it; the call's own deadline never.
 */
function retriesAfter (failure: unknown, method: string): boolean {
  if (failure instanceof DownstreamConnectionError) return true
  return failure instanceof DownstreamTimeoutError && failure.phase !== 'total' && IDEMPOTENT_METHODS.has(method)
}

const callChecks = optionChecks('downstream call')

/** A call's own timeout, checked as the client's are: past a timer's longest, it would fire at once. */
function callTimeout (phase: 'headers' | 'body' | 'total', value: unknown, fallback: number): number {
  return value === undefined ? fallback : callChecks.timerMillis(`timeouts.${phase}`, value)
}

/** The dispatcher calls go through (an undici Agent, or the caller's). */
interface Transport { dispatcher: Dispatcher }

async function call<T> (settings: Settings, transport: () => Promise<Transport>, c: DownstreamCall, context: PropagatedContext): Promise<DownstreamResponse<T>> {
  const method = (c.method ?? 'GET').toUpperCase()
  const url = targetUrl(settings, c)
  const headers = headersOf(settings, c, context)
  const body = c.json !== undefined ? JSON.stringify(c.json) : c.body
  const timeouts = { headers: callTimeout('headers', c.timeouts?.headers, settings.timeouts.headers), body: callTimeout('body', c.timeouts?.body, settings.timeouts.body), total: callTimeout('total', c.timeouts?.total, settings.timeouts.total) }
  const limit = c.maxResponseBytes ?? settings.maxResponseBytes
  const retryable = c.retry !== false && (IDEMPOTENT_METHODS.has(method) || headers['svc-idempotency-key'] !== undefined)
  const { attempts, base, cap, maxRetryAfter } = settings.retry
  const shown = `${url.origin}${url.pathname}`
  const { dispatcher } = await transport()
  const path = `${url.pathname}${url.search}`
  // The call's deadline: it aborts an attempt in flight; a wait that would end past it is not made.
  const started = settings.now()
  const signal = new CallAbort()
  const cancelDeadline = settings.after(timeouts.total, () => { signal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')) })
  // The caller's signal aborts the call through the same one (follow.ts).
  const caller = c.signal
  const unfollow = caller === undefined ? null : follow(caller, signal)
  const fits = (wait: number): boolean => settings.now() - started + wait < timeouts.total
  const attempt = async (n: number): Promise<DownstreamResponse<T>> => {
    const target: CallTarget = { method, url: shown, attempts: n }
    const canRetry = retryable && n < attempts
    let delay: number | null = null
    try {
      // The dispatcher's own request, with one literal: undici's top-level request() spreads
      // its options into a new object, which costs the shape above again.
      const res = await dispatcher.request({ origin: url.origin, path, method: method as Dispatcher.HttpMethod, headers, body, headersTimeout: timeouts.headers, bodyTimeout: timeouts.body, signal })
      if (canRetry && RETRY_STATUSES.has(res.statusCode)) {
        const after = retryAfter(res.headers['retry-after'], settings.now())
        const wait = after ?? backoff(n, base, cap, settings.random)
        // A longer wait than allowed, or one past the deadline, is not shortened: the caller gets the answer instead.
        if ((after === null || after <= maxRetryAfter) && fits(wait)) {
          await res.body.dump()
          delay = wait
        }
      }
      if (delay === null) {
        const bytes = await readBody(res.body, res.statusCode, res.headers, limit, target)
        return answerOf<T>({ status: res.statusCode, headers: res.headers, bytes }, target)
      }
    } catch (err) {
      // The caller's abort stays the caller's, even when the deadline came at the same time.
      const failure = signal.aborted && caller?.aborted !== true ? new DownstreamTimeoutError('total', timeouts.total, target, err) : failureOf(err, target, timeouts)
      if (!canRetry || !retriesAfter(failure, method)) throw failure
      const wait = backoff(n, base, cap, settings.random)
      if (!fits(wait)) throw failure
      delay = wait
    }
    // An abort while waiting ends the call then, as it ends an attempt in flight.
    await signal.wait(settings.sleep, delay)
    if (signal.aborted) throw caller?.aborted === true ? signal.reason : new DownstreamTimeoutError('total', timeouts.total, target, signal.reason)
    return await attempt(n + 1)
  }
  try {
    return await attempt(1)
  } finally {
    cancelDeadline()
    unfollow?.()
  }
}

function view (settings: Settings, transport: () => Promise<Transport>, context: () => PropagatedContext): Downstream {
  const request = async <T>(c: DownstreamCall): Promise<DownstreamResponse<T>> => await call<T>(settings, transport, c, context())
  const shortcut = (method: string): Shortcut => async (url, c = {}) => await request({ ...c, method, url })
  return {
    request,
    get: shortcut('GET'),
    post: shortcut('POST'),
    put: shortcut('PUT'),
    patch: shortcut('PATCH'),
    delete: shortcut('DELETE'),
    with: (next) => view(settings, transport, typeof next === 'function' ? next : () => next)
  }
}

const none = (): PropagatedContext => ({})

/**
 * A client for calls made outside a request (jobs, start-up), or the root of the plugin's
 * per-request views. Throws a TypeError naming the first bad option.
 */
export function createDownstream (options: DownstreamOptions): DownstreamClient {
  const settings = resolveOptions(options)
  // undici is loaded by the first call, not by importing the suite: a service that makes no
  // outgoing calls never pays for it.
  let own: Agent | null = null
  let loaded: Promise<Transport> | null = null
  const transport = async (): Promise<Transport> => await (loaded ??= import('undici').then((undici) => {
    if (settings.dispatcher === null) own = new undici.Agent()
    return { dispatcher: settings.dispatcher ?? own as Agent }
  }))
  return {
    ...view(settings, transport, none),
    close: async () => {
      if (loaded === null) return
      await loaded
      await own?.close()
    }
  }
}
