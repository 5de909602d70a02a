import type { RouteOptions } from 'fastify'

// Every header value has a bound (conventions: Limits); 8 KiB is what servers commonly accept.
const str = (description: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'string', maxLength: 8192, description, ...extra })
const INT32_MAX = 2147483647
const seconds = (description: string): Record<string, unknown> => ({ type: 'integer', minimum: 0, maximum: INT32_MAX, description })

interface DocConfig {
  conventions?: unknown
  problems?: number[]
  collection?: unknown
}

function methodsOf (route: RouteOptions): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map(m => m.toUpperCase())
}

const readOnlyRoute = (route: RouteOptions): boolean => methodsOf(route).every(m => m === 'GET' || m === 'HEAD')

/**
 * The conditional request headers a route honours (RFC 9110 §13.1): both on a route that can
 * fail a precondition (412: items, bulk), `If-None-Match` alone on a collection read (its
 * ETag is over the page, so only a 304 can come of it).
 */
function conditionalHeaders (route: RouteOptions, config: DocConfig): Record<string, unknown> {
  const tags = 'A list of quoted entity tags, or `*`.'
  if ((config.problems ?? []).includes(412)) {
    return {
      'if-match': str(`Only when the current ETag matches (strong comparison), else 412. ${tags}`),
      'if-none-match': str(`Only when the current ETag does not match (weak comparison): a read answers 304, a write 412. ${tags}`)
    }
  }
  if (config.collection !== undefined && config.collection !== false && readOnlyRoute(route)) {
    return { 'if-none-match': str(`304 without a body when the page's ETag matches. ${tags}`) }
  }
  return {}
}

/** A read that honours If-None-Match, so it sends an ETag and may answer 304. */
export function cacheableRead (route: RouteOptions): boolean {
  return readOnlyRoute(route) && conditionalHeaders(route, (route.config ?? {}) as DocConfig)['if-none-match'] !== undefined
}

/** Whether the conventions plugin applies `rule` on a route: not when the route config switches all rules or that one off. */
function ruleOn (config: DocConfig, rule: string): boolean {
  const own = config.conventions
  if (own === false) return false
  return typeof own !== 'object' || own === null || (own as Record<string, unknown>)[rule] !== false
}

/**
 * The request headers of the convention, documented on every operation where its rule
 * applies (conventions: Headers). Declared route headers win; read-only methods get no
 * idempotency key.
 */
export function conventionHeaders (route: RouteOptions, declared: Record<string, unknown> | undefined): Record<string, unknown> {
  const config = (route.config ?? {}) as DocConfig
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  if (config.conventions !== false) {
    if (ruleOn(config, 'userAgent')) {
      properties['user-agent'] = str('`<product>/<major-version> <comment>`; required (403 without it).', { pattern: '^\\S+/\\d' })
      required.push('user-agent')
    }
    properties['x-request-id'] = str('Correlation id; becomes the problem `requestId` and is echoed.', { maxLength: 200 })
    if (ruleOn(config, 'executionContext')) properties['svc-execution-context'] = str('Data partition (`prod` when absent); echoed when sent.', { pattern: '^[a-z0-9_-]{1,100}$', maxLength: 100 })
    if (ruleOn(config, 'serviceHeader')) properties['svc-service'] = str('Calling service: `id=<uuid>; name=<name>`.')
    if (ruleOn(config, 'idempotencyKey') && !readOnlyRoute(route)) properties['svc-idempotency-key'] = str('Client-generated key making a retry safe.', { pattern: '^[a-z0-9-]{20,255}$', maxLength: 255 })
  }
  Object.assign(properties, conditionalHeaders(route, config))
  const base = (declared ?? {}) as { properties?: Record<string, unknown>, required?: string[] }
  return {
    type: 'object',
    properties: { ...properties, ...base.properties },
    required: [...new Set([...required, ...(base.required ?? [])])]
  }
}

const ECHOED = {
  'x-request-id': str('The `X-Request-ID` of the request, when it sent one.', { maxLength: 200 }),
  'svc-execution-context': str('The `Svc-Execution-Context` of the request, when it sent one.', { maxLength: 100 })
}
const ETAG = { etag: str('Strong entity tag of the representation; send it in If-Match / If-None-Match.', { maxLength: 1024 }) }
// draft-ietf-httpapi-ratelimit-headers, as the rate-limit plugin sends them; RFC 9110 §10.2.3.
const RATE_LIMITED = {
  'retry-after': seconds('Seconds to wait before retrying.'),
  'ratelimit-limit': seconds('Requests allowed in the window.'),
  'ratelimit-remaining': seconds('Requests left in the window.'),
  'ratelimit-reset': seconds('Seconds until the window resets.')
}

/**
 * The response headers of one status of a route (conventions: Headers; RFC 9110 §10.2):
 * the echoed correlation headers on every answer of a convention route, `Location` and `ETag`
 * on a 201, `ETag` on a 200 or 304 of a conditional read (item or collection), the rate-limit headers on 429.
 */
export function responseHeaders (route: RouteOptions, status: number): Record<string, unknown> {
  const config = (route.config ?? {}) as DocConfig
  const headers: Record<string, unknown> = config.conventions === false ? {} : { ...ECHOED }
  if (!ruleOn(config, 'executionContext')) delete headers['svc-execution-context']
  if (status === 201) Object.assign(headers, { location: str('Path of the created entity.', { format: 'uri-reference', maxLength: 2000 }) }, ETAG)
  if ((status === 200 || status === 304) && cacheableRead(route)) Object.assign(headers, ETAG)
  if (status === 429) Object.assign(headers, RATE_LIMITED)
  return headers
}
