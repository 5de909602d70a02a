import fp from 'fastify-plugin'
import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { problems, type ProblemError } from '../problem/index.js'
import { pathOf } from '../shared/url.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'
import { needs } from '../shared/dependencies.js'
import { markCorsRoute } from '../shared/unmatched.js'

export interface CorsPluginOptions {
  /**
   * Origins allowed to call cross-origin: exact serialized origins (`https://app.example.com`,
   * no path, no trailing slash) or RegExps anchored with `^…$`. Never `*`. Default `[]`: every
   * cross-origin preflight is refused.
   */
  origins?: Array<string | RegExp>
  /** Methods a preflight may ask for (exact, case-sensitive, never `*`). Default GET, HEAD, POST, PUT, PATCH, DELETE. */
  methods?: string[]
  /** Request headers a preflight may ask for (case-insensitive, never `*`). Default: the headers of the convention. */
  allowedHeaders?: string[]
  /** Response headers a cross-origin script may read (never `*`). Default: the convention's response headers. */
  exposedHeaders?: string[]
  /** `Access-Control-Max-Age` of an accepted preflight, in seconds, at most 7200. Default 600. */
  maxAge?: number
  /** Send `Access-Control-Allow-Credentials: true` (cookies, client certificates). Default false. */
  credentials?: boolean
}

const OPTION_KEYS: OptionKeys<CorsPluginOptions> = { origins: true, methods: true, allowedHeaders: true, exposedHeaders: true, maxAge: true, credentials: true }

export const DEFAULT_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

// The convention's request headers, Prefer (RFC 7240) for asynchronous requests
// (`respond-async`), and Content-Disposition, which names an uploaded file.
export const DEFAULT_ALLOWED_HEADERS = [
  'Authorization', 'Content-Type', 'Content-Language', 'Accept', 'X-Request-ID', 'If-Match', 'If-None-Match',
  'If-Unmodified-Since', 'Svc-Execution-Context', 'Svc-Service', 'Svc-Idempotency-Key', 'User-Agent', 'Prefer',
  'Content-Disposition'
]

// The convention's response headers; rate-limit headers as named by
// draft-ietf-httpapi-ratelimit-headers, Retry-After of a 429 and a 503; what a 202 sends (the
// monitor in Link, Preference-Applied), the pages of a CSV listing in Link, a download's
// Content-Disposition, and the Allow of a 405.
export const DEFAULT_EXPOSED_HEADERS = [
  'ETag', 'Location', 'X-Request-ID', 'Svc-Execution-Context', 'Svc-Service', 'Content-Language',
  'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After',
  'Link', 'Preference-Applied', 'Content-Disposition', 'Allow'
]

const defaults = {
  origins: [] as Array<string | RegExp>,
  methods: DEFAULT_METHODS,
  allowedHeaders: DEFAULT_ALLOWED_HEADERS,
  exposedHeaders: DEFAULT_EXPOSED_HEADERS,
  maxAge: 600,
  credentials: false
}

/** Convention, Headers: Access-Control-Max-Age should not exceed 7200 seconds. */
const MAX_AGE_LIMIT = 7200

// The methods of the convention's method table; custom methods are not used.
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

const HEADER_NAME = /^[A-Za-z0-9-]+$/

const fail: OptionChecks['fail'] = optionChecks('cors plugin').fail

function list<T> (value: unknown, name: string): T[] {
  if (!Array.isArray(value)) fail(name, value, 'an array')
  return value as T[]
}

function checkOrigin (origin: unknown, name: string): void {
  if (origin instanceof RegExp) {
    // An unanchored pattern lets https://app.example.com.evil.net through.
    if (!origin.source.startsWith('^') || !origin.source.endsWith('$')) fail(name, origin, 'anchored with ^ and $')
    return
  }
  // A serialized origin round-trips through URL unchanged; `*`, `null`, paths and trailing slashes do not.
  const ok = typeof origin === 'string' && URL.canParse(origin) && new URL(origin).origin === origin
  if (!ok) fail(name, origin, 'an exact origin such as https://app.example.com (never *) or a RegExp')
}

/**
 * The pattern held to the whole origin: `^a|b$` anchors each branch at one end only, so as
 * written it would let `https://a.example.com.evil.net` through its first branch.
 */
function wholeMatch (re: RegExp): RegExp {
  // Without g and y, test() keeps no lastIndex between requests.
  return new RegExp(`^(?:${re.source})$`, re.flags.replace(/[gy]/g, ''))
}

function checkHeaders (value: unknown, name: string): string[] {
  const headers = list<string>(value, name)
  headers.forEach((h, i) => { if (typeof h !== 'string' || !HEADER_NAME.test(h)) fail(`${name}[${i}]`, h, 'a header name (never *)') })
  return headers
}

function appendVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) {
    reply.header('vary', field)
  } else if (!String(current).toLowerCase().split(/\s*,\s*/).includes(field.toLowerCase())) {
    reply.header('vary', `${String(current)}, ${field}`)
  }
}

/** Takes `field` out of the response's `Vary`, leaving the other fields as they were written. */
function dropVary (reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) return
  const kept = String(current).split(',').filter((f) => f.trim().toLowerCase() !== field.toLowerCase())
  if (kept.every((f) => f.trim() === '')) reply.removeHeader('vary')
  // Trimmed: `Origin, Accept` leaves `Accept`, not ` Accept`.
  else reply.header('vary', kept.join(',').trim())
}

/** Request values named in a detail are cut short. */
function short (value: string): string {
  return value.length > 100 ? `${value.slice(0, 100)}…` : value
}

const REFUSED_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'

async function corsPlugin (fastify: FastifyInstance, opts: CorsPluginOptions): Promise<void> {
  refuseUnknownOptions('cors', opts, OPTION_KEYS)
  // A second @fastify/cors throws outside the boot's promise, from its decorator below the first
  // or from its catch-all OPTIONS route beside one in a sibling context with the same prefix: the
  // process died on an uncaught exception instead of a refused registration.
  if (fastify.hasPlugin('@fastify/cors')) {
    throw new Error('cors plugin: @fastify/cors is registered already, here or above; register the cors plugin instead, with every origin, and not beside @fastify/cors')
  }
  // The library's catch-all route: `*` under a prefix, stored as `/*` without one.
  if (fastify.hasRoute({ method: 'OPTIONS', url: fastify.prefix === '' ? '/*' : `${fastify.prefix}*` })) {
    throw new Error(`cors plugin: an OPTIONS route for every path under the prefix ${JSON.stringify(fastify.prefix)} is declared already (the cors plugin or @fastify/cors in a sibling context?), and the library declares its own; register the cors plugin once in the parent, with every origin, or give each context a prefix of its own`)
  }
  const origins = list<string | RegExp>(opts.origins ?? defaults.origins, 'origins')
  origins.forEach((o, i) => checkOrigin(o, `origins[${i}]`))
  const methods = list<string>(opts.methods ?? defaults.methods, 'methods')
  if (methods.length === 0) fail('methods', methods, 'a non-empty array of methods')
  methods.forEach((m, i) => { if (!KNOWN_METHODS.has(m)) fail(`methods[${i}]`, m, `one of ${[...KNOWN_METHODS].join(', ')} (never *)`) })
  const allowedHeaders = checkHeaders(opts.allowedHeaders ?? defaults.allowedHeaders, 'allowedHeaders')
  const exposedHeaders = checkHeaders(opts.exposedHeaders ?? defaults.exposedHeaders, 'exposedHeaders')
  const maxAge = opts.maxAge ?? defaults.maxAge
  if (!Number.isInteger(maxAge) || maxAge < 0 || maxAge > MAX_AGE_LIMIT) fail('maxAge', maxAge, `an integer of seconds from 0 to ${MAX_AGE_LIMIT}`)
  const credentials = opts.credentials ?? defaults.credentials
  if (typeof credentials !== 'boolean') fail('credentials', credentials, 'a boolean')

  const exact = new Set(origins.filter((o): o is string => typeof o === 'string'))
  const patterns = origins.filter((o): o is RegExp => o instanceof RegExp).map(wholeMatch)
  const allowedMethods = new Set(methods)
  const allowedHeaderSet = new Set(allowedHeaders.map((h) => h.toLowerCase()))

  function isAllowed (origin: string): boolean {
    if (exact.has(origin)) return true
    return patterns.some((re) => re.test(origin))
  }

  // Explicit lists only (convention, Headers: Access-Control-*); computed once.
  // Method rules 12: an OPTIONS answer is not for HTTP caches (Access-Control-Max-Age, not
  // Cache-Control, is what a browser's preflight cache follows).
  const preflightHeaders: Record<string, string> = {
    'access-control-allow-methods': methods.join(', '),
    'access-control-max-age': String(maxAge),
    'cache-control': 'no-store'
  }
  if (credentials) preflightHeaders['access-control-allow-credentials'] = 'true'
  if (allowedHeaders.length > 0) preflightHeaders['access-control-allow-headers'] = allowedHeaders.join(', ')

  // Preflights are answered or refused here, before auth (a preflight carries no Authorization
  // header) and before @fastify/cors, which never refuses a preflight with 403 and never checks
  // the requested method and headers. Registered before the library, so its hook runs first.
  fastify.addHook('onRequest', async function corsPreflight (request, reply) {
    const origin = request.headers.origin
    const requestedMethod = request.headers['access-control-request-method']
    if (request.method !== 'OPTIONS' || origin === undefined || requestedMethod === undefined) return
    if (origins.length > 0) appendVary(reply, 'Origin')
    const path = pathOf(request.url)
    const refuse = (reason: string, detail: string): ProblemError => problems.forbidden(`The CORS preflight for ${path} was refused: ${detail}.`, {
      instance: path,
      headers: { 'svc-cors-error': reason, vary: REFUSED_VARY }
    })
    if (!isAllowed(origin)) throw refuse('bad origin', `the origin ${short(origin)} is not allowed to call this service`)
    // Fetch: the method match is case-sensitive.
    if (!allowedMethods.has(requestedMethod)) throw refuse('bad method', `the method ${short(requestedMethod)} is not allowed; use one of ${methods.join(', ')}`)
    const requestedHeaders = (request.headers['access-control-request-headers'] ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '')
    const badHeader = requestedHeaders.find((h) => !allowedHeaderSet.has(h.toLowerCase()))
    if (badHeader !== undefined) throw refuse('bad header', `the header ${short(badHeader)} is not allowed`)
    // Answered: the hooks after this one (the library's, auth) do not run.
    return reply.code(204).header('access-control-allow-origin', origin).headers(preflightHeaders).send()
  })

  // Every route of this context from here on, the library's catch-all among them: plugins above
  // this context see which preflights are this plugin's (shared/unmatched.ts).
  fastify.addHook('onRoute', markCorsRoute)

  // Actual cross-origin requests: @fastify/cors writes Access-Control-Allow-Origin for an allowed
  // origin (never `*`), the exposed headers and credentials, and `Vary: Origin` on every response
  // of a route it serves (not `config.cors: false`). Its own preflight handling is off; its
  // catch-all OPTIONS route is treated by the methods plugin as no route.
  await fastify.register(fastifyCors, libraryOptions(origins, isAllowed, credentials, exposedHeaders))

  // A response to a request without Origin varies by Origin too (a cross-origin request to the
  // same URL gets Access-Control-* headers): `Vary: Origin` keeps a shared cache from serving it
  // to another origin (Fetch, §3.2.5). But one with `Cache-Control: no-store` (every
  // authenticated response) is never stored, so there the header would change nothing and is
  // left off. Only known as the response leaves, so decided here, after the library (which adds
  // it as the request arrives) and any handler that set Vary itself.
  if (origins.length > 0) {
    fastify.addHook('onSend', async function corsOnSend (request, reply, payload) {
      if ((request.routeOptions.config as { cors?: unknown }).cors === false) return payload
      const origin = request.headers.origin
      if (origin === undefined) {
        if (noStore(reply)) dropVary(reply, 'Origin')
        else appendVary(reply, 'Origin')
      } else if (!reply.hasHeader('access-control-allow-origin') && request.headers['access-control-request-method'] === undefined && isAllowed(origin)) {
        // A hook registered before this plugin (auth's 401, a conventions refusal) answered
        // before the library's onRequest hook ran: without Access-Control-Allow-Origin the page
        // cannot read that problem, so an allowed origin's answer gets the library's headers here.
        reply.header('access-control-allow-origin', origin)
        if (credentials) reply.header('access-control-allow-credentials', 'true')
        if (exposedHeaders.length > 0) reply.header('access-control-expose-headers', exposedHeaders.join(', '))
        appendVary(reply, 'Origin')
      }
      return payload
    })
  }
}

/** Whether the response says no cache may keep it (RFC 9111 §5.2.2.5). */
function noStore (reply: FastifyReply): boolean {
  const value = reply.getHeader('cache-control')
  if (value === undefined) return false
  // What the auth plugin sets; anything else is read directive by directive.
  if (value === 'no-store') return true
  return String(value).split(',').some((directive) => directive.trim().toLowerCase() === 'no-store')
}

/** @fastify/cors's options: it answers actual requests only, for the origins allowed here. */
function libraryOptions (origins: Array<string | RegExp>, isAllowed: (origin: string) => boolean, credentials: boolean, exposedHeaders: string[]): FastifyCorsOptions {
  return {
    // An allowed origin is echoed; a same-origin request (no Origin) or another origin gets no
    // CORS headers at all (only `Vary: Origin`).
    origin: origins.length > 0
      ? (origin: string | undefined, cb: (err: Error | null, allow: string | false) => void) => { cb(null, origin !== undefined && isAllowed(origin) ? origin : false) }
      : false,
    credentials,
    // @fastify/cors writes any value it is given, even an empty or undefined one.
    ...(exposedHeaders.length > 0 ? { exposedHeaders: exposedHeaders.join(', ') } : {}),
    preflight: false,
    hideOptionsRoute: true
  }
}

// Its refusals are problems: the problem plugin renders them.
export default fp(needs('cors', ['problem'], corsPlugin, { alsoBelow: true }), { fastify: '5.x', name: 'svc-cors' })
