import fp from 'fastify-plugin'
import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { Problem, PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { ProblemError } from '../problem/errors.js'
import { CursorPaging, OffsetPaging } from '../../schemas/collection.js'
import { BulkContextItem, BulkOperationResult, BulkResponse } from '../../schemas/bulk.js'
import { exampleOf, shareComponents } from './components.js'
import { cacheableRead, conventionHeaders, responseHeaders } from './headers.js'

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
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Extra problem statuses this route can answer (e.g. 409, 412, 428), for the document. */
    problems?: number[]
    /** `internal: true` marks the operation `x-internal` (webhook consumers). */
    openapi?: { internal?: boolean }
  }
}

const defaults = {
  info: { title: 'API', version: '1.0.0' },
  routePrefix: '/openapi.json' as string | false,
  commonProblems: [400, 401, 403, 406, 429, 500],
  components: {}
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

interface ServedDefinition { name: string, entity: unknown, summaryEntity: unknown }

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1)

/** `Author` and `AuthorSummary` for each resource the resource plugin serves, with an example. */
function resourceComponents (fastify: FastifyInstance): Record<string, unknown> {
  const served = (fastify as unknown as { resources?: ReadonlyMap<string, { definition: ServedDefinition }> }).resources
  const out: Record<string, unknown> = {}
  for (const { definition: def } of served?.values() ?? []) {
    for (const [name, schema] of [[pascal(def.name), def.entity], [`${pascal(def.name)}Summary`, def.summaryEntity]] as const) {
      const example = exampleOf(JSON.parse(JSON.stringify(schema)))
      out[name] = example === undefined ? schema : { ...schema as object, examples: [example] }
    }
  }
  return out
}

type DocSchema = FastifySchema & Record<string, unknown>

/** Problem statuses a route can give, from what it declares. */
function statusesOf (route: RouteOptions, schema: DocSchema, common: number[]): number[] {
  const set = new Set(common)
  const config = (route.config ?? {}) as { auth?: unknown, problems?: number[] }
  if (config.auth === false) { set.delete(401); set.delete(403) }
  if (schema.params !== undefined || route.url.includes(':')) set.add(404)
  if (schema.body !== undefined) set.add(415)
  for (const s of config.problems ?? []) set.add(s)
  return [...set].sort((a, b) => a - b)
}

/**
 * Builds the document with @fastify/swagger. The convention's parts that no route schema
 * states (problem responses, conventional headers, bearer security, `x-internal`) are
 * added in `transform`, so they shape the document only and cost nothing per request.
 */
async function openapiPlugin (fastify: FastifyInstance, opts: OpenApiPluginOptions): Promise<void> {
  const common = opts.commonProblems ?? defaults.commonProblems
  const routePrefix = opts.routePrefix ?? defaults.routePrefix
  const components = opts.components ?? defaults.components
  for (const s of common) if (!Number.isInteger(s) || s < 400 || s > 599) throw new TypeError(`openapi plugin: commonProblems must hold 4xx/5xx statuses, got ${String(s)}`)
  if (typeof components !== 'object' || components === null || Array.isArray(components)) throw new TypeError(`openapi plugin: components must be an object of schemas by name, got ${String(components)}`)
  if (routePrefix !== false && (typeof routePrefix !== 'string' || !routePrefix.startsWith('/'))) throw new TypeError(`openapi plugin: routePrefix must be a path or false, got ${String(routePrefix)}`)

  fastify.addSchema(Problem)

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: opts.info ?? defaults.info,
      servers: opts.servers,
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }
      },
      security: [{ bearerAuth: [] }]
    },
    // HEAD is served for every GET (RFC 9110 §9.3.2) and honours the same conditions.
    exposeHeadRoutes: true,
    refResolver: {
      // Shared schemas keep their $id as component name: `#/components/schemas/Problem`.
      // Only schemas added with addSchema (which requires an $id) reach this function.
      buildLocalReference: (json) => String(json.$id)
    },
    transform: ({ schema, url, route }) => {
      const doc: DocSchema = { ...(schema as DocSchema) }
      const config = (route.config ?? {}) as { auth?: unknown, openapi?: { internal?: boolean }, conventions?: unknown }
      const response: Record<string, unknown> = { ...(doc.response as Record<string, unknown> | undefined) }
      for (const status of statusesOf(route, doc, common)) {
        if (response[status] !== undefined) continue
        response[status] = {
          description: new ProblemError(status, 'SVC_DOC').title,
          content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: 'Problem#' } } }
        }
      }
      doc.headers = conventionHeaders(route, doc.headers as Record<string, unknown> | undefined)
      // RFC 9110 §15.4.5: a read with a matching If-None-Match answers 304 without a body.
      if (cacheableRead(route) && response[200] !== undefined && response[304] === undefined) {
        response[304] = { type: 'null', description: 'Not Modified' }
      }
      for (const [status, r] of Object.entries(response)) {
        const headers = responseHeaders(route, Number(status))
        const own = (r as { headers?: Record<string, unknown> }).headers
        if (Object.keys(headers).length > 0) response[status] = { ...r as object, headers: { ...headers, ...own } }
      }
      doc.response = response
      if (config.auth === false) doc.security = []
      if (config.openapi?.internal === true) doc['x-internal'] = true
      return { schema: doc as FastifySchema, url }
    },
    transformObject: (built) => shareComponents((built as { openapiObject: Record<string, unknown> }).openapiObject, {
      ...CONVENTION_COMPONENTS,
      ...resourceComponents(fastify),
      ...components
    }) as ReturnType<SwaggerTransformObject>
  })

  if (routePrefix !== false) {
    fastify.get(routePrefix, {
      schema: { hide: true },
      config: { auth: false }
    }, async (_request, reply) => {
      return await reply.type('application/json').send(fastify.swagger())
    })
  }
}

export default fp(openapiPlugin, { fastify: '5.x', name: 'svc-openapi' })
