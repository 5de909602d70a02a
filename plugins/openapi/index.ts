import fp from 'fastify-plugin'
import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { Problem } from '../../schemas/problem.js'
import { isErrorStatus } from '../problem/internal.js'
import { CursorPaging, OffsetPaging } from '../../schemas/collection.js'
import { BulkContextItem, BulkOperationResult, BulkResponse } from '../../schemas/bulk.js'
import { optionsOperation } from './allow.js'
import { exampleOf, shareComponents } from './components.js'
import { addPatterns, optionalBodies, uniqueOperationIds } from './document.js'
import { factsOf, unroutedFacts } from './facts.js'
import { nameOperation } from './naming.js'
import { everyOperationHeaders } from './headers.js'
import { caseHeaders, headerCase, hoistCommonParameters, omitDefaults, omitEchoedDescriptions, shareFormats, shareNullable, shareRepeated, shareSchemas, shareTitled } from './lean.js'
import { foldProblems, stateHeadersOnce } from './once.js'
import { DERIVED_PROBLEMS } from './statuses.js'
import { describeOperation, type DocumentContext } from './operation.js'
import { optionChecks, refuseUnknownOptions, shownValue, type OptionChecks, type OptionKeys } from '../shared/options.js'
import { once } from '../shared/dependencies.js'

type Json = Record<string, unknown>

export interface OpenApiPluginOptions {
  info?: { title: string, version: string, description?: string }
  servers?: Array<{ url: string, description?: string }>
  /** Path of the JSON document, or false to serve none. Default `/openapi.json`. */
  routePrefix?: string | false
  /** Problem statuses every route may answer. Default 400, 401, 403, 406, 429, 500. */
  commonProblems?: number[]
  /**
   * More named schemas shown as shared components; every copy in the document becomes a `$ref`.
   * The convention's paging and bulk shapes and each served resource's entity (`Author`) and
   * collection item (`AuthorSummary`) are components already. Default `{}`.
   */
  components?: Record<string, unknown>
  /** How a client gets a bearer token, shown with the `bearerAuth` security scheme (on the docs page's Authorize dialog). */
  tokenHelp?: string
  /**
   * What every operation shares is stated once: the problems any operation may answer (the
   * common ones, 404, 413, 415) as its `default` response, and the convention's headers of
   * every request and answer in the document's `x-request-headers` and `x-response-headers`.
   * `false` lists them on each operation, per status. Default true.
   */
  stateOnce?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the document is served (with the route prefix), or null when `routePrefix` is false; and its title. */
    openapiDocument: { path: string | null, title: string }
  }
  interface FastifyContextConfig {
    /** Extra problem statuses this route can answer (e.g. 409, 412, 428), for the document. */
    problems?: number[]
    /**
     * `internal: true` marks the operation `x-internal` (webhook consumers); `description` is
     * added to the operation's; `headers` are request headers the route's own checks require
     * (a webhook's signature), as JSON Schemas by lowercase name, documented only;
     * `responseHeaders` the headers the route sends besides the plugins' ones, by status;
     * `body` the request body a route reads itself (no `schema.body`), as a schema by media
     * type; `content` a response's schema by media type, by status, for a body that is not JSON;
     * `optionalBody: true` a body the route takes but does not require (`requestBody.required: false`);
     * `scopeAlternatives` the sets of scopes of which a route that checks them itself needs any
     * one, asked for when the document is made (`security`, one requirement per set);
     * `modificationDate: false` a representation without one, whose 412 comes of the ETag alone
     * (If-Unmodified-Since is not declared).
     */
    openapi?: { internal?: boolean, description?: string, headers?: Record<string, unknown>, responseHeaders?: Record<string, Record<string, unknown>>, body?: Record<string, unknown>, content?: Record<string, Record<string, unknown>>, optionalBody?: boolean, scopeAlternatives?: () => string[][], modificationDate?: boolean }
  }
}

const defaults = {
  info: { title: 'API', version: '1.0.0' },
  routePrefix: '/openapi.json' as string | false,
  commonProblems: [400, 401, 403, 406, 429, 500],
  components: {},
  stateOnce: true
}

/**
 * The convention's shared shapes (conventions: Collection response envelope, Bulk response
 * body). The page links are not among them: a nullable link is one merged schema, no copy.
 */
const CONVENTION_COMPONENTS: Record<string, unknown> = {
  CursorPaging,
  OffsetPaging,
  BulkResponse: {
    ...BulkResponse,
    examples: [{
      status: 'PARTIAL',
      operations: [
        { operationId: 'op-1', action: 'CREATE', entityId: '123e4567-e89b-42d3-a456-426614174000', entityRef: 'svc:document::123e4567-e89b-42d3-a456-426614174000', result: { status: 'SUCCEEDED' } },
        { operationId: '1', action: 'DELETE', entityId: 'c0ffee00-e89b-42d3-a456-426614174000', entityRef: 'svc:document::c0ffee00-e89b-42d3-a456-426614174000', result: { status: 'FAILED', detail: 'The ETag in ifMatch is not the current one; GET the document again.', context: null } }
      ]
    }]
  },
  BulkOperationResult,
  BulkContextItem
}

interface ServedDefinition { name: string, api: { entity: unknown, summary: unknown, bodies: { create: unknown, replace: unknown, patch: unknown } } }

/** The definitions the resource plugin serves, by collection; none without it. */
function servedDefinitions (fastify: FastifyInstance): Array<[string, ServedDefinition]> {
  const served = (fastify as unknown as { resources?: ReadonlyMap<string, { definition: ServedDefinition }> }).resources
  return [...served ?? []].map(([collection, s]) => [collection, s.definition])
}

/** The served collections and their entities (`authors` → `author`). */
function servedCollections (fastify: FastifyInstance): ReadonlyMap<string, string> {
  return new Map(servedDefinitions(fastify).map(([collection, def]) => [collection, def.name]))
}

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1)

/**
 * `Author` and `AuthorSummary` for each resource the resource plugin serves, with an example,
 * and its write bodies: `AuthorCreate` (POST), `AuthorReplacement` (PUT), `AuthorPatch` (merge patch).
 */
function resourceComponents (fastify: FastifyInstance): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [, def] of servedDefinitions(fastify)) {
    const entity = pascal(def.name)
    for (const [name, schema] of [[entity, def.api.entity], [`${entity}Summary`, def.api.summary]] as const) {
      const example = exampleOf(JSON.parse(JSON.stringify(schema)))
      out[name] = example === undefined ? schema : { ...schema as object, examples: [example] }
    }
    out[`${entity}Create`] = def.api.bodies.create
    out[`${entity}Replacement`] = def.api.bodies.replace
    out[`${entity}Patch`] = def.api.bodies.patch
  }
  return out
}

// HEAD is served wherever GET is (RFC 9110 §9.3.2): said once here, not as an operation per GET.
const HEAD_NOTE = '`HEAD` is served wherever `GET` is, and answers as it would, without a body.'

/** The document's info, saying so when the server serves HEAD (not with `exposeHeadRoutes: false`, where HEAD is no route). */
function withHead (info: NonNullable<OpenApiPluginOptions['info']>, served: boolean): NonNullable<OpenApiPluginOptions['info']> {
  if (!served) return info
  return { ...info, description: info.description === undefined ? HEAD_NOTE : `${info.description}\n\n${HEAD_NOTE}` }
}

/**
 * Builds the document with @fastify/swagger. The convention's parts that no route schema
 * states (problem responses, conventional headers, bearer security, `x-internal`) are
 * added in `transform`, so they shape the document only and cost nothing per request.
 */
const OPTION_KEYS: OptionKeys<OpenApiPluginOptions> = { info: true, servers: true, routePrefix: true, commonProblems: true, components: true, tokenHelp: true, stateOnce: true }

const fail: OptionChecks['fail'] = optionChecks('openapi plugin').fail

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nonEmptyString (value: unknown): boolean {
  return typeof value === 'string' && value !== ''
}

/** OpenAPI 3.1 §4.8.2: an Info Object has a title and a version; a bad one made a document no tool reads. */
function checkInfo (info: unknown): void {
  const rule = '{ title, version, description? } of strings'
  if (!isObject(info) || !nonEmptyString(info.title) || !nonEmptyString(info.version) || (info.description !== undefined && typeof info.description !== 'string')) fail('info', info, rule)
}

/** OpenAPI 3.1 §4.8.5: each Server Object has a url; without one the document failed on its first request. */
function checkServers (servers: unknown): void {
  const rule = 'an array of { url, description? } of strings'
  if (!Array.isArray(servers)) fail('servers', servers, rule)
  servers.forEach((server: unknown, i) => {
    if (!isObject(server) || !nonEmptyString(server.url) || (server.description !== undefined && typeof server.description !== 'string')) fail(`servers[${i}]`, server, '{ url, description? } of strings')
  })
}

async function openapiPlugin (fastify: FastifyInstance, opts: OpenApiPluginOptions): Promise<void> {
  refuseUnknownOptions('openapi', opts, OPTION_KEYS)
  if (opts.info !== undefined) checkInfo(opts.info)
  if (opts.servers !== undefined) checkServers(opts.servers)
  const common = opts.commonProblems ?? defaults.commonProblems
  if (!Array.isArray(common)) fail('commonProblems', common, 'an array of 4xx/5xx statuses')
  const routePrefix = opts.routePrefix ?? defaults.routePrefix
  const components = opts.components ?? defaults.components
  for (const s of common) if (!Number.isInteger(s) || s < 400 || s > 599) throw new TypeError(`openapi plugin: commonProblems must hold 4xx/5xx statuses, got ${shownValue(s)}`)
  if (typeof components !== 'object' || components === null || Array.isArray(components)) throw new TypeError(`openapi plugin: components must be an object of schemas by name, got ${shownValue(components)}`)
  if (routePrefix !== false && (typeof routePrefix !== 'string' || !routePrefix.startsWith('/'))) throw new TypeError(`openapi plugin: routePrefix must be a path or false, got ${shownValue(routePrefix)}`)
  if (opts.tokenHelp !== undefined && (typeof opts.tokenHelp !== 'string' || opts.tokenHelp === '')) throw new TypeError(`openapi plugin: tokenHelp must be a non-empty string, got ${shownValue(opts.tokenHelp)}`)
  const stateOnce = opts.stateOnce ?? defaults.stateOnce
  if (typeof stateOnce !== 'boolean') throw new TypeError(`openapi plugin: stateOnce must be a boolean, got ${shownValue(stateOnce)}`)

  // A route's own problem statuses become responses of the document: a bad one stops the boot,
  // naming the route, rather than a response the service never answers (`[999]`, `'409'`).
  fastify.addHook('onRoute', (route) => {
    const problems: unknown = route.config?.problems
    if (problems !== undefined && (!Array.isArray(problems) || !problems.every(isErrorStatus))) {
      fail(`route ${String(route.method)} ${route.url}: config.problems`, problems, 'an array of 4xx/5xx statuses')
    }
  })

  // The application's own @fastify/swagger would stop the boot below on its decorator, naming
  // neither plugin; this one builds the document with an instance of its own.
  if (fastify.hasDecorator('swagger')) throw new Error('openapi plugin: @fastify/swagger is registered already; remove that registration: this plugin registers it itself, serves the document at routePrefix and gives it as fastify.swagger() (and @fastify/swagger-ui, or the docs plugin, shows it)')

  fastify.addSchema(Problem)
  // For the docs page, which reads this document rather than a copy of its own.
  fastify.decorate('openapiDocument', { path: routePrefix === false ? null : `${fastify.prefix}${routePrefix}`, title: (opts.info ?? defaults.info).title })

  // Read when the document is built (at the first request for it): every route is registered by then.
  const context = (): DocumentContext => ({ commonProblems: common, collections: servedCollections(fastify) })

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // Fastify's initialConfig holds exposeHeadRoutes but does not type it.
      info: withHead(opts.info ?? defaults.info, (fastify.initialConfig as { exposeHeadRoutes?: boolean }).exposeHeadRoutes !== false),
      servers: opts.servers,
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', ...(opts.tokenHelp === undefined ? {} : { description: opts.tokenHelp }) } }
      },
      security: [{ bearerAuth: [] }]
    },
    // HEAD is served for every GET and answers as it would, without content (RFC 9110 §9.3.2);
    // the document's description says so, and OPTIONS lists it: an operation of its own would double the document.
    exposeHeadRoutes: false,
    refResolver: {
      // Shared schemas keep their $id as component name: `#/components/schemas/Problem`.
      // Only schemas added with addSchema (which requires an $id) reach this function.
      buildLocalReference: (json) => String(json.$id)
    },
    transform: ({ schema, url, route }) => ({ schema: describeOperation(route, schema as Json, factsOf(fastify, route), context()) as FastifySchema, url }),
    transformObject: (built) => {
      const openapiObject = (built as { openapiObject: Json }).openapiObject
      const doc = shareComponents(openapiObject, {
        // The problem's context item, as @fastify/swagger wrote it from Problem's nested $id:
        // the Problem component then refers to it.
        ContextItem: ((openapiObject.components as Json).schemas as Json).ContextItem,
        ...CONVENTION_COMPONENTS,
        ...resourceComponents(fastify),
        ...components
      })
      return finish(fastify, doc, context(), stateOnce) as ReturnType<SwaggerTransformObject>
    }
  })

  if (routePrefix !== false) {
    fastify.get(routePrefix, {
      schema: {
        summary: 'This OpenAPI document',
        response: { 200: { type: 'object', additionalProperties: true, description: 'The OpenAPI 3.1 document of every route of this service.' } }
      },
      // Public, like the service's address: a client reads it before it has a token. It is
      // JSON only, so an Accept without JSON is a 406 whatever the common problems are.
      config: { auth: false, problems: [406] }
    }, async (_request, reply) => {
      return await reply.type('application/json').send(fastify.swagger())
    })
  }
}

/**
 * The document once every operation is in it: an OPTIONS operation per path where the
 * methods plugin answers them, the convention formats' patterns, unique operationIds, what
 * every operation shares stated once (`stateOnce`), and the repeats as components.
 */
function finish (fastify: FastifyInstance, doc: Json, ctx: DocumentContext, stateOnce: boolean): Json {
  const paths = { ...doc.paths as Record<string, Json> }
  const allowedMethods = (fastify as { allowedMethods?: (path: string) => string[] | null }).allowedMethods
  if (allowedMethods !== undefined) {
    const facts = unroutedFacts(fastify)
    for (const [path, item] of Object.entries(paths)) {
      const allowed = allowedMethods(path)
      if (allowed === null || item.options !== undefined) continue
      const operationId = nameOperation('OPTIONS', path.replace(/\{([^}]+)\}/g, ':$1'), ctx.collections, false).operationId
      const options = optionsOperation(path, operationId, allowed, facts, fastify.hasPlugin('svc-cors'))
      // Beside the path's other operations in a viewer's groups (its tag, `authors`), and with the
      // path's parameters as they declare them (OpenAPI 3.1 §4.8.12.1: each template variable is declared).
      const siblings = Object.values(item) as Json[]
      const tags = siblings.map(op => op.tags).find(Array.isArray)
      if (tags !== undefined) options.tags = tags
      const pathParameters = (siblings.map(op => op.parameters).flat() as unknown[]).filter((p): p is Json => typeof p === 'object' && p !== null && (p as Json).in === 'path')
      options.parameters = [...new Map(pathParameters.map(p => [p.name, p])).values(), ...options.parameters as Json[]]
      paths[path] = { ...item, options }
    }
  }
  const patterned = addPatterns(paths) as Json
  optionalBodies(patterned)
  uniqueOperationIds(patterned)
  caseHeaders(patterned)
  omitDefaults(patterned)
  omitEchoedDescriptions(patterned)
  let once: Json = { ...doc, paths: patterned }
  if (stateOnce) {
    foldProblems(patterned, [...new Set([...ctx.commonProblems, ...DERIVED_PROBLEMS])])
    const every = everyOperationHeaders(unroutedFacts(fastify).requestId)
    once = stateHeadersOnce(once, { request: every.request.map(headerCase), response: every.response.map(headerCase) })
  }
  hoistCommonParameters(once.paths as Json)
  const components = doc.components as Json
  return shareRepeated(shareSchemas(shareNullable(shareTitled(shareFormats({ ...once, components: { ...components, schemas: addPatterns(components.schemas) } })))))
}

export default fp(once('openapi', openapiPlugin, { alsoBelow: true }), { fastify: '5.x', name: 'svc-openapi' })
