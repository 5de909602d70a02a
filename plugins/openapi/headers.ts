import type { RouteFacts, DocConfig } from './facts.js'
import { essenceOf } from '../shared/media-type.js'

// Every header value has a bound (conventions: Limits); 8 KiB is what servers commonly accept.
const str = (description: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'string', maxLength: 8192, description, ...extra })
const INT32_MAX = 2147483647
const seconds = (description: string): Record<string, unknown> => ({ type: 'integer', minimum: 0, maximum: INT32_MAX, description })

type Facts = Pick<RouteFacts, 'methods' | 'config'>

// Safe methods (RFC 9110 §9.2.1) change nothing: no idempotency key, and a condition yields a 304.
const readOnlyRoute = (facts: Facts): boolean => facts.methods.every(m => m === 'GET' || m === 'HEAD' || m === 'OPTIONS')

// A route of the query plugin: a collection's GET, or its POST search.
const isCollection = (facts: Facts): boolean => facts.config.collection !== undefined && facts.config.collection !== false

// The convention's headers every operation may carry, named once: the document states them once (once.ts).
const USER_AGENT = 'user-agent'
const EXECUTION_CONTEXT = 'svc-execution-context'
const SERVICE = 'svc-service'
const CONTENT_LANGUAGE = 'content-language'

const IF_MATCH = { 'if-match': str('Only when the current ETag matches (strong comparison), else 412. A list of quoted entity tags, or `*`.') }
// One text for items and pages, so one shared component.
const IF_NONE_MATCH = { 'if-none-match': str('Only when the current ETag (of the entity, or of the page) does not match (weak comparison): a read answers 304 without a body, a write 412. A list of quoted entity tags, or `*`.') }

const IF_UNMODIFIED_SINCE = { 'if-unmodified-since': str('Without If-Match: only when the entity has not changed since this HTTP date, else 412.', { maxLength: 64 }) }

/**
 * The conditional request headers a route honours (RFC 9110 §13.1): all three on a route that can
 * fail a precondition (412: items), `If-None-Match` alone on a collection read (its ETag is
 * over the page, so only a 304 can come of it). A bulk request (a collection has no entity
 * tag) declares no 412, so it gets neither: its conditions travel in `operations[].ifMatch`.
 */
function conditionalHeaders (facts: Facts): Record<string, unknown> {
  const problems = facts.config.problems ?? []
  if (problems.includes(412)) {
    // Where If-Match is required (428), the date is never weighed: a request without If-Match
    // is refused first, and with it the date is ignored (RFC 9110 §13.2.2). Nor where the
    // representation has no modification date (`openapi.modificationDate: false`).
    const dated = !problems.includes(428) && facts.config.openapi?.modificationDate !== false
    return dated ? { ...IF_MATCH, ...IF_NONE_MATCH, ...IF_UNMODIFIED_SINCE } : { ...IF_MATCH, ...IF_NONE_MATCH }
  }
  if (isCollection(facts) && readOnlyRoute(facts)) return { ...IF_NONE_MATCH }
  return {}
}

/** A read that honours If-None-Match, so it sends an ETag and may answer 304. */
export function cacheableRead (facts: Facts): boolean {
  return readOnlyRoute(facts) && conditionalHeaders(facts)['if-none-match'] !== undefined
}

/** Whether the conventions plugin applies `rule` on a route: not when the route config switches all rules or that one off. */
export function ruleOn (config: DocConfig, rule: string): boolean {
  const own = config.conventions
  if (own === false) return false
  return typeof own !== 'object' || own === null || (own as Record<string, unknown>)[rule] !== false
}

/**
 * The request headers of the convention, documented on every operation where its rule
 * applies (conventions: Headers), and those the route's own checks read (a webhook's
 * signature, `config.openapi.headers`), required. Declared route headers win; read-only
 * methods get no idempotency key.
 */
export function conventionHeaders (facts: Pick<RouteFacts, 'methods' | 'config' | 'requestId'>, declared: Record<string, unknown> | undefined): Record<string, unknown> {
  const { config, requestId } = facts
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  if (ruleOn(config, 'userAgent')) {
    // The example fills the field of a viewer's "try it out" (a browser sends its own User-Agent, which the rule accepts).
    properties[USER_AGENT] = str('`<product>/<major-version> <comment>`; required (403 without it).', { pattern: '^\\S+/\\d', examples: ['my-client/1'] })
    required.push(USER_AGENT)
  }
  // Taken by the problem plugin on every route (conventions: Errors 4); one it cannot use as sent is refused.
  if (requestId !== null) properties[requestId.header] = str(`Correlation id; becomes the problem \`requestId\` and is echoed. 1 to ${requestId.maxLength} visible ASCII characters (spaces and tabs may separate them); another value is refused with 400, which carries a generated \`requestId\` and echoes nothing.`, { maxLength: requestId.maxLength })
  if (ruleOn(config, 'executionContext')) properties[EXECUTION_CONTEXT] = str('Data partition (`prod` when absent); echoed when sent.', { pattern: '^[a-z0-9_-]{1,100}$', maxLength: 100 })
  if (ruleOn(config, 'serviceHeader')) properties[SERVICE] = str('Calling service: `id=<uuid>; name=<name>`.')
  if (ruleOn(config, 'idempotencyKey') && !readOnlyRoute(facts)) properties['svc-idempotency-key'] = str('Client-generated key making a retry safe.', { pattern: '^[a-z0-9-]{20,255}$', maxLength: 255 })
  Object.assign(properties, conditionalHeaders(facts))
  const own = config.openapi?.headers ?? {}
  Object.assign(properties, own)
  required.push(...Object.keys(own))
  const base = (declared ?? {}) as { properties?: Record<string, unknown>, required?: string[] }
  return {
    type: 'object',
    properties: { ...properties, ...base.properties },
    required: [...new Set([...required, ...(base.required ?? [])])]
  }
}

const ETAG = { etag: str('Strong entity tag of the representation; send it in If-Match / If-None-Match.', { maxLength: 1024 }) }
// draft-ietf-httpapi-ratelimit-headers, as @fastify/rate-limit sends them (the rate-limit plugin).
const COUNTED = 'Sent on every answer the rate limit counted, not on a refusal before it (token, User-Agent, Accept, Content-Type).'
const RATE_LIMIT = {
  'ratelimit-limit': seconds(`Requests allowed in the window. ${COUNTED}`),
  'ratelimit-remaining': seconds('Requests left in the window; sent with RateLimit-Limit.'),
  'ratelimit-reset': seconds('Seconds until the window resets; sent with RateLimit-Limit.')
}
// One definition for both uses, so that the document states one Link header.
const LINK = str('Links (RFC 8288). On a 202: `<path of the job>; rel="monitor"`, where the job shows how the work goes (GET it until it has ended). On a `text/csv` page: the other pages, `<url>; rel="next"` and `<url>; rel="prev"`, the URLs a JSON page gives in `paging`.', { maxLength: 8000 })
const ACCEPTED = {
  link: LINK,
  'preference-applied': str('`respond-async`, when the request asked for it with `Prefer`.', { maxLength: 100 })
}
// RFC 9110 §10.2.3.
const RETRY_AFTER = { 'retry-after': seconds('Seconds to wait before retrying.') }
// Conventions, Authentication 6; set by the auth plugin once it accepts the token, and on
// OPTIONS answers by the methods and cors plugins (Method rules 12).
const CACHE_CONTROL = { 'cache-control': str('`no-store`: the answer is not kept by caches. Sent once the token is accepted, so on every answer but a refusal before it, and on every OPTIONS answer.', { maxLength: 100 }) }
// RFC 6750 §3: the auth plugin's challenges.
const CSV_LINK = { link: LINK }
const ACCEPT_PATCH = {
  'accept-patch': str('On the 415 of a PATCH: the media types it takes (RFC 5789 §2.2).', { maxLength: 1000 })
}

const CHALLENGE = {
  'www-authenticate': str('The Bearer challenge (RFC 6750 §3): `Bearer` without a usable Authorization header, `Bearer error="invalid_token"` for a refused token, `Bearer error="insufficient_scope", scope="…"` for a token without a scope the operation needs.', { maxLength: 1000 })
}

/**
 * Whether a refusal with `status` comes before the rate-limit plugin counts the request, so
 * without its headers. Fastify runs the instance `onRequest` hooks (conventions, CORS, methods,
 * auth) and then the route's own, and @fastify/rate-limit appends its counting hook after
 * those: 401 from the auth plugin, 403 (a token's scopes, the User-Agent rule, a route's own
 * onRequest check such as a webhook's HTTPS rule), 406, and 415 from the Content-Type rule.
 * A 401 or 415 of the route's own later checks (a webhook's signature) is counted.
 */
function refusedBeforeCounting (facts: RouteFacts, status: number): boolean {
  if (status === 401) return facts.authenticated
  if (status === 415) return facts.conventions !== null && facts.conventions.consumes !== null
  return status === 403 || status === 406
}

/**
 * The response headers of one status of a route (conventions: Headers; RFC 9110 §10.2), as
 * the plugins send them: the echoed `X-Request-ID` on every answer (problem plugin), the
 * echoed `Svc-Execution-Context` and `Content-Language` where the conventions plugin's rules
 * apply; `Cache-Control: no-store` on every answer to an authenticated
 * request, the challenge on a 401 (and on a 403 of a route with scopes); the `RateLimit-*`
 * headers on every answer the rate-limit plugin counted, `Retry-After` on a 429; `Location`
 * and `ETag` on a 201; `ETag` on a 200, 304 or 412 of a conditional read (item or
 * collection; the item routes send it before they evaluate the conditions), and on the 200 of
 * a collection's search.
 */
export function responseHeaders (facts: RouteFacts, status: number): Record<string, unknown> {
  const { config, conventions, requestId } = facts
  const headers: Record<string, unknown> = {}
  if (requestId !== null) headers[requestId.header] = str(`The \`${requestId.header}\` of the request, when it sent one of at most ${requestId.maxLength} characters.`, { maxLength: requestId.maxLength })
  // Echoed as sent, also on the 400 that refuses it: only the header limit (str's) bounds it.
  if (ruleOn(config, 'executionContext')) headers[EXECUTION_CONTEXT] = str('The `Svc-Execution-Context` of the request, when it sent one, as sent (also on the 400 that refuses it).')
  const language = conventions?.contentLanguage ?? null
  if (language !== null) headers[CONTENT_LANGUAGE] = str(`\`${language}\`: the language of the response's text (conventions plugin, \`contentLanguage\`).`, { maxLength: 100, examples: [language] })
  if (facts.authenticated && status !== 401) Object.assign(headers, CACHE_CONTROL)
  if (facts.authenticated && (status === 401 || (status === 403 && facts.scopes.length > 0))) Object.assign(headers, CHALLENGE)
  if (facts.rateLimited && !refusedBeforeCounting(facts, status)) Object.assign(headers, RATE_LIMIT)
  if (status === 429) Object.assign(headers, RETRY_AFTER)
  if (status === 201) Object.assign(headers, { location: str('Path of the created entity.', { format: 'uri-reference', maxLength: 2000 }) }, ETAG)
  if ((status === 200 || status === 304 || status === 412) && cacheableRead(facts)) Object.assign(headers, ETAG)
  // A search's page carries the ETag its GET would (query plugin), with no 304 to go with it.
  if (status === 200 && isCollection(facts) && !readOnlyRoute(facts)) Object.assign(headers, ETAG)
  // reply.accepted of the jobs plugin (conventions: 202; RFC 8288, RFC 7240 §3).
  if (status === 202) Object.assign(headers, ACCEPTED)
  // A CSV page has no envelope: the csv plugin sends its paging links in Link (RFC 8288).
  if (status === 200 && isCollection(facts) && facts.conventions?.accept?.produces.some(t => essenceOf(t) === 'text/csv') === true) Object.assign(headers, CSV_LINK)
  // RFC 5789 §2.2: a PATCH refused for its document's type names the types it takes.
  if (status === 415 && facts.methods.includes('PATCH') && facts.conventions?.consumes != null) Object.assign(headers, ACCEPT_PATCH)
  Object.assign(headers, config.openapi?.responseHeaders?.[String(status)])
  return headers
}

/**
 * The convention's headers that every request sends or may send (the User-Agent, the
 * correlation id, the execution context, the calling service) and that every answer carries
 * where their rule applies (those echoed, the language, `no-store`, the rate limit's): the
 * document states them once (once.ts), lowercase here.
 */
export function everyOperationHeaders (requestId: RouteFacts['requestId']): { request: string[], response: string[] } {
  const id = requestId === null ? [] : [requestId.header]
  return {
    request: [USER_AGENT, ...id, EXECUTION_CONTEXT, SERVICE],
    response: [...id, EXECUTION_CONTEXT, CONTENT_LANGUAGE, ...Object.keys(CACHE_CONTROL), ...Object.keys(RATE_LIMIT)]
  }
}
