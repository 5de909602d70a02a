import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ContextItem } from '../../schemas/problem.js'
import { invalidData, problems } from '../problem/index.js'
import { pathOf } from '../shared/url.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { parseEntityTags, type EntityTagList } from './entity-tags.js'
import { parseHttpDate } from './http-date.js'
import { evaluatePreconditions } from './evaluate.js'
import { preconditionProblem } from './refusal.js'
import { needs } from '../shared/dependencies.js'

/** Options of the `conditional` plugin (RFC 9110 §13, conventions: Method rules 1 and 13). */
export interface ConditionalPluginOptions {
  /**
   * Answer a GET/HEAD whose `If-None-Match` matches the response's `ETag` with 304 and no
   * body, for routes that set `ETag` but do not evaluate the header themselves. Default true.
   */
  notModified?: boolean
}

/** `routeOptions.config.conditional`; `false` ignores the conditional headers on the route. */
export interface ConditionalRouteConfig {
  /** PUT, PATCH and DELETE without `If-Match` get 428 (conventions: Method rules 13). Default false. */
  requireIfMatch?: boolean
  /**
   * With `requireIfMatch`, a PUT with `If-None-Match: *` (create only, RFC 9110 §13.1.2)
   * needs no `If-Match`, since there is no ETag to send for what does not exist. Default true.
   */
  createWithIfNoneMatch?: boolean
}

/** The parsed conditional headers of a request; null (or left out) where the header was not sent. */
export interface Preconditions {
  ifMatch: EntityTagList | null
  ifNoneMatch: EntityTagList | null
  /**
   * `If-Unmodified-Since` in milliseconds since the epoch (a whole second): evaluated only
   * without If-Match, against a modification date (RFC 9110 §13.1.4).
   */
  ifUnmodifiedSince?: number | null
}

// Where a request keeps its parsed headers, behind the `preconditions` accessor.
const kPreconditions = Symbol('svc-conditional.preconditions')

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Conditional requests on this route: `false` off, or its rules. */
    conditional?: false | ConditionalRouteConfig
  }
  interface FastifyRequest {
    /** `If-Match` / `If-None-Match` parsed; null on routes with `config.conditional = false`. */
    preconditions: Preconditions | null
    [kPreconditions]?: Preconditions | null
  }
}

const defaults = { notModified: true }
const OPTION_KEYS: OptionKeys<ConditionalPluginOptions> = { notModified: true }
const ROUTE_KEYS: OptionKeys<ConditionalRouteConfig> = { requireIfMatch: true, createWithIfNoneMatch: true }

const NONE: Preconditions = Object.freeze({ ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: null })
const WRITES = new Set(['PUT', 'PATCH', 'DELETE'])

function malformed (header: string, value: string): ContextItem {
  return {
    code: 'INPUT_INVALID',
    message: 'must be * or a comma-separated list of entity tags such as "abc" or W/"abc", as the ETag header gives them',
    field: header,
    source: 'header',
    value
  }
}

/**
 * Reads the three headers; a malformed one is a 400 with one context item per header. RFC 9110
 * §13.1.4 would have a malformed If-Unmodified-Since ignored; the convention refuses an
 * invalid header value (INPUT_INVALID), and a client that sent a condition learns it was not
 * understood rather than having its write go on unconditionally.
 */
export function parsePreconditions (request: FastifyRequest): Preconditions {
  const im = request.headers['if-match']
  const inm = request.headers['if-none-match']
  const ius = request.headers['if-unmodified-since']
  if (im === undefined && inm === undefined && ius === undefined) return NONE
  const items: ContextItem[] = []
  let ifMatch: EntityTagList | null = null
  let ifNoneMatch: EntityTagList | null = null
  if (im !== undefined) {
    ifMatch = parseEntityTags(im)
    if (ifMatch === null) items.push(malformed('If-Match', im))
  }
  if (inm !== undefined) {
    ifNoneMatch = parseEntityTags(inm)
    if (ifNoneMatch === null) items.push(malformed('If-None-Match', inm))
  }
  let ifUnmodifiedSince: number | null = null
  if (ius !== undefined) {
    ifUnmodifiedSince = parseHttpDate(ius)
    if (ifUnmodifiedSince === null) {
      items.push({ code: 'INPUT_INVALID', message: 'must be an HTTP date such as Sun, 06 Nov 1994 08:49:37 GMT, as the Last-Modified header and Date.toUTCString write it', field: 'If-Unmodified-Since', source: 'header', value: ius })
    }
  }
  if (items.length > 0) throw invalidData(items)
  return { ifMatch, ifNoneMatch, ifUnmodifiedSince }
}

/**
 * RFC 9110 §13.2.2 for a read of a representation whose current tag is `etag`, last modified
 * at `modified` (an ISO date-time or a Date; undefined: it has no modification date). Throws
 * 412 when `If-Match` or `If-Unmodified-Since` fails; returns true when `If-None-Match`
 * matches, i.e. the caller answers 304.
 */
export function evaluateRead (pre: Preconditions | null, etag: string, path: string, modified?: string | Date): boolean {
  const verdict = evaluatePreconditions(pre, etag, { read: true }, modified)
  if (verdict.kind === 'precondition-failed') throw preconditionProblem({ method: 'GET', path, header: verdict.header })
  return verdict.kind === 'not-modified'
}

/** Turns a 2xx reply into a 304: no body, no content headers, the ETag kept (RFC 9110 §15.4.5). */
export function notModified (reply: FastifyReply): FastifyReply {
  reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  return reply.code(304)
}

async function conditionalPlugin (fastify: FastifyInstance, opts: ConditionalPluginOptions): Promise<void> {
  refuseUnknownOptions('conditional', opts, OPTION_KEYS)
  const notModifiedOn = opts.notModified ?? defaults.notModified
  if (typeof notModifiedOn !== 'boolean') throw new TypeError(`conditional plugin: notModified must be a boolean, got ${shownValue(notModifiedOn)}`)

  // An accessor on the prototype, not a value: Fastify copies value decorators into the
  // contexts created after them only, while this plugin's hooks also run in the contexts
  // created before it (routes registered earlier, such as /health or the docs), where a
  // value decorator would leave the property undefined.
  // Guarded: a context registered below another one with its own options inherits it.
  if (!fastify.hasRequestDecorator('preconditions')) {
    fastify.decorateRequest('preconditions', {
      getter (this: FastifyRequest): Preconditions | null { return this[kPreconditions] ?? null },
      setter (this: FastifyRequest, value: Preconditions | null): void { this[kPreconditions] = value }
    })
  }

  fastify.addHook('onRoute', (route) => {
    const config: unknown = route.config?.conditional
    if (config === undefined || config === false) return
    const c = config as Record<string, unknown>
    if (typeof config !== 'object' || config === null ||
        (c.requireIfMatch !== undefined && typeof c.requireIfMatch !== 'boolean') ||
        (c.createWithIfNoneMatch !== undefined && typeof c.createWithIfNoneMatch !== 'boolean')) {
      throw new TypeError(`conditional plugin: config.conditional of ${String(route.method)} ${route.url} must be false or { requireIfMatch?: boolean, createWithIfNoneMatch?: boolean }, got ${JSON.stringify(config)}`)
    }
    // A misspelt rule (`requireIfMach`) would leave the route unguarded.
    refuseUnknownOptions('conditional', config, ROUTE_KEYS, { where: `route ${String(route.method)} ${route.url}: `, path: 'config.conditional.' })
  })

  // onRequest: a malformed header or a missing required If-Match is refused before the body is read.
  fastify.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config.conditional
    if (config === false) return
    const pre = parsePreconditions(request)
    request.preconditions = pre
    if (config?.requireIfMatch === true && pre.ifMatch === null && WRITES.has(request.method)) {
      const creating = request.method === 'PUT' && pre.ifNoneMatch === '*' && config.createWithIfNoneMatch !== false
      if (creating) return
      const path = pathOf(request.url)
      throw problems.preconditionRequired(
        `${request.method} ${path} requires the If-Match header; GET the resource and send its ETag in If-Match` +
        (request.method === 'PUT' && config.createWithIfNoneMatch !== false ? ', or send If-None-Match: * to create it.' : '.'),
        { instance: path }
      )
    }
  })

  if (notModifiedOn) {
    fastify.addHook('onSend', async (request, reply, payload) => {
      const pre = request.preconditions
      if (pre === null || pre.ifNoneMatch === null || reply.statusCode !== 200) return payload
      if (request.method !== 'GET' && request.method !== 'HEAD') return payload
      const etag = reply.getHeader('etag')
      // If-Match is the route's to evaluate (evaluateRead); this hook only answers 304.
      if (typeof etag !== 'string' || evaluatePreconditions(pre, etag, { read: true }).kind !== 'not-modified') return payload
      notModified(reply)
      // GET: no payload, so Fastify sends no body and no Content-Length. HEAD keeps the
      // payload its own onSend measures: the Content-Length of the 200 is allowed on a 304
      // (RFC 9110 §8.6), and Node writes no body for either.
      return request.method === 'GET' ? null : payload
    })
  }
}

export { evaluatePreconditions, writableTags, type PreconditionHeader, type PreconditionRules, type PreconditionVerdict, type WritableTags } from './evaluate.js'
export { preconditionProblem, type PreconditionFailure } from './refusal.js'
export { parseHttpDate } from './http-date.js'
export { parseEntityTags, strongMatch, weakMatch, strongTags, opaqueTags, type EntityTag, type EntityTagList } from './entity-tags.js'
// Its refusals are problems: the problem plugin renders them.
export default fp(needs('conditional', ['problem'], conditionalPlugin), { fastify: '5.x', name: 'svc-conditional' })
