import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { CollectionQuery } from '../../model/query.js'
import { createCursorCodec, type CursorCodec, type CursorSecret } from './cursor.js'
import { resolveFiqlLimits, type FiqlLimits } from './fiql.js'
import { checkLimit, resolveRoute, SEARCH_SUFFIX, type CollectionConfig, type CollectionRoute } from './route.js'
import { readQueryString, readSearchBody, readSearchQueryString, type RequestParams } from './read.js'
import { resolveQuery } from './resolve.js'
import { buildEnvelope, type CollectionPage } from './envelope.js'
import { collectionEtag, ifNoneMatch } from './etag.js'
import { querystringSchema, searchBodySchema } from './docs.js'
import { kCollection, type CollectionState } from './state.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { needs } from '../shared/dependencies.js'
import { parsePreconditions } from '../conditional/index.js'

/** Options of the `query` plugin: paging, filtering and ordering of collection routes. */
export interface QueryPluginOptions {
  /**
   * HMAC-SHA256 key sealing cursors, at least 16 bytes (32 random bytes recommended), or a list
   * of keys: the first signs, every one verifies, so that a new key can be put first while
   * cursors signed with the old one still work. Required. A key taken out voids the cursors it
   * signed: their clients start from the first page.
   */
  cursorSecret: CursorSecret | readonly CursorSecret[]
  /** Page size when a request gives no `limit`. Default 20. */
  defaultLimit?: number
  /** Largest page size; a larger `limit` gets this one and `paging.limit` says so. Default 100. */
  maxLimit?: number
  /**
   * Limits of FIQL expressions: `maxLength` 2000, `maxDepth` 10, `maxListSize` 100,
   * `maxComparisons` 50 by default. `maxListSize` also bounds how often a parameter repeats.
   */
  fiql?: Partial<FiqlLimits>
}

const defaults = {
  defaultLimit: 20,
  maxLimit: 100
}
const OPTION_KEYS: OptionKeys<QueryPluginOptions> = { cursorSecret: true, defaultLimit: true, maxLimit: true, fiql: true }
const FIQL_KEYS: OptionKeys<FiqlLimits> = { maxLength: true, maxDepth: true, maxListSize: true, maxComparisons: true }

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Makes the route a collection: a GET (and its HEAD) reads the query string, a POST
     * on `<collection>/search` reads the same parameters from its JSON body. `false`: not one.
     */
    collection?: CollectionConfig | false
  }
  interface FastifyRequest {
    /** The query of a collection request (filter, ordering, paging); null on other routes. */
    collectionQuery: CollectionQuery | null
    /** What `reply.sendCollection` needs to write the envelope; null on other routes. */
    [kCollection]: CollectionState | null
  }
  interface FastifyReply {
    /** Sends a page in the collection envelope, with its links (status 200, also when empty). */
    sendCollection: <T>(page: CollectionPage<T>) => FastifyReply
  }
}

function hooksOf<H> (value: H | H[] | undefined): H[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/**
 * Fills the request with its query, or throws the 400 that lists every violation. A `limit`
 * sent is replaced by the one applied where the route's schema checks it next: any integer
 * above the maximum is lowered, while the schema states a 32-bit integer (conventions:
 * "Integer"), which the applied one always is.
 */
function applyQuery (request: FastifyRequest, route: CollectionRoute, codec: CursorCodec, params: RequestParams, search: boolean): void {
  const resolved = resolveQuery(params, route, codec, () => route.scope(request))
  request.collectionQuery = resolved.query
  request[kCollection] = { route, resolved, codec, search }
  if (params.limit !== undefined) {
    // A limit was read, so a search body has a paging object holding it.
    const holder = search ? (request.body as { paging: Record<string, unknown> }).paging : request.query as Record<string, unknown>
    holder.limit = resolved.query.paging.limit
  }
}

/**
 * A strong ETag over the page as sent (conventions: "ETags with collections"), set on a 200
 * that has none: a route that sets its own keeps it and answers for it. Returns the body to
 * send, encoded once for the hash and for the socket alike; undefined when it set no tag.
 */
function tagPage (reply: FastifyReply, payload: unknown): Buffer | undefined {
  if (reply.statusCode !== 200 || reply.hasHeader('etag') || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return undefined
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload
  reply.header('etag', collectionEtag(body))
  return body
}

/**
 * onSend of GET/HEAD collection routes: the page's ETag, and 304 when `If-None-Match`
 * matches it (RFC 9110 §13.1.2, §15.4.5).
 */
async function collectionEtagHook (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const body = tagPage(reply, payload)
  if (body === undefined) return payload
  if (!ifNoneMatch(request.headers['if-none-match'], reply.getHeader('etag') as string)) return body
  reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  reply.code(304)
  // GET: no body. HEAD keeps its payload, which Fastify only measures (RFC 9110 §8.6).
  return request.method === 'HEAD' ? body : null
}

/**
 * onSend of a POST search: the same ETag as the GET of the same page. A POST is no
 * conditional read, so `If-None-Match` is not evaluated (RFC 9110 §13.1.2).
 */
async function searchEtagHook (_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  return tagPage(reply, payload) ?? payload
}

async function queryPlugin (fastify: FastifyInstance, opts: QueryPluginOptions): Promise<void> {
  refuseUnknownOptions('query', opts, OPTION_KEYS)
  let codec: CursorCodec
  try {
    codec = createCursorCodec({ secret: opts.cursorSecret })
  } catch (err) {
    throw new TypeError(`query plugin: cursorSecret: ${(err as Error).message}`)
  }
  const maxLimit = opts.maxLimit === undefined ? defaults.maxLimit : checkLimit('query plugin', 'maxLimit', opts.maxLimit)
  const defaultLimit = opts.defaultLimit === undefined ? Math.min(defaults.defaultLimit, maxLimit) : checkLimit('query plugin', 'defaultLimit', opts.defaultLimit)
  if (defaultLimit > maxLimit) throw new TypeError(`query plugin: defaultLimit (${defaultLimit}) must not exceed maxLimit (${maxLimit})`)
  if (opts.fiql !== undefined) refuseUnknownOptions('query', opts.fiql, FIQL_KEYS, { path: 'fiql.' })
  let limits: Readonly<FiqlLimits>
  try {
    limits = resolveFiqlLimits(opts.fiql)
  } catch (err) {
    throw new TypeError(`query plugin: fiql: ${(err as Error).message}`)
  }

  // The suite's validation plugin knows the convention's formats; Fastify's default Ajv refuses them.
  const formats = fastify.hasPlugin('svc-validation')

  // Guarded: a context registered below another one with its own options inherits them.
  if (!fastify.hasRequestDecorator('collectionQuery')) {
    fastify.decorateRequest('collectionQuery', null)
    fastify.decorateRequest(kCollection, null)
  }
  fastify.decorateReply('sendCollection', function <T>(this: FastifyReply, page: CollectionPage<T>): FastifyReply {
    return this.send(buildEnvelope(this.request, page))
  })

  // Everything about a route is resolved here, once: the request hooks only parse.
  fastify.addHook('onRoute', (options: RouteOptions) => {
    const config: unknown = options.config?.collection
    if (config === undefined || config === false) return
    const methods = Array.isArray(options.method) ? options.method : [options.method]
    const where = `query plugin: config.collection of ${methods.join(',')} ${options.url}`
    const search = methods.includes('POST')
    if (search ? methods.length > 1 || !options.url.endsWith(SEARCH_SUFFIX) : methods.some((m) => m !== 'GET' && m !== 'HEAD')) {
      throw new TypeError(`${where}: a collection route is a GET (with its HEAD), or a POST of its own on <collection>${SEARCH_SUFFIX}`)
    }
    const route = resolveRoute(config, options.url, where, { defaultLimit, maxLimit, limits })
    // New arrays and a new schema object: the HEAD route Fastify adds for a GET copies the original options.
    if (search) {
      options.preValidation = [...hooksOf(options.preValidation), async function collectionSearch (request: FastifyRequest) {
        const params = readSearchBody(request.body, route)
        params.faults.unshift(...readSearchQueryString(request.url, route))
        applyQuery(request, route, codec, params, true)
      }]
      if (route.etag) options.onSend = [searchEtagHook, ...hooksOf(options.onSend)]
      options.schema = { ...options.schema, body: options.schema?.body ?? searchBodySchema(route, formats) }
    } else {
      options.preValidation = [...hooksOf(options.preValidation), async function collectionQuery (request: FastifyRequest) {
        // The page's 304 reads If-None-Match: malformed, it is refused as the conditional plugin
        // refuses it, which has read it already when it is registered.
        if (route.etag && (request as { preconditions?: unknown }).preconditions === undefined) parsePreconditions(request)
        applyQuery(request, route, codec, readQueryString(request.url, route), false)
      }]
      // First of the route's onSend hooks: on the HEAD route Fastify adds, its last hook drops the payload.
      if (route.etag) options.onSend = [collectionEtagHook, ...hooksOf(options.onSend)]
      options.schema = { ...options.schema, querystring: options.schema?.querystring ?? querystringSchema(route, formats) }
    }
  })
}

export type { CursorSecret } from './cursor.js'
export type { CollectionConfig } from './route.js'
export type { CollectionPage, CollectionEnvelope, CursorPagingBody, OffsetPagingBody } from './envelope.js'
export { buildEnvelope, collectionQueryOf } from './envelope.js'
export { registerCollection, type CollectionRoutesOptions } from './register.js'
export { fieldsFromSchema, createFieldMap } from '../../model/fields.js'
export { queryMemory } from '../../store/memory-query.js'
export { parseFiql } from './fiql.js'
export type { FieldDescriptor, FieldMap, FieldType, CollectionQuery, Filter, OrderingTerm, Paging, Page } from '../../model/query.js'
// Its refusals are problems: the problem plugin renders them.
export default fp(needs('query', ['problem'], queryPlugin), { fastify: '5.x', name: 'svc-query' })
