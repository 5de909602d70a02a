import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { Problem, PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { ProblemError } from '../problem/errors.js'
import { conventionHeaders } from './headers.js'

export interface OpenApiPluginOptions {
  info?: { title: string, version: string, description?: string }
  servers?: Array<{ url: string, description?: string }>
  /** Path of the JSON document, or false to serve none. Default `/openapi.json`. */
  routePrefix?: string | false
  /** Problem statuses every route may answer. Default 400, 401, 403, 406, 429, 500. */
  commonProblems?: number[]
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
  commonProblems: [400, 401, 403, 406, 429, 500]
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
  for (const s of common) if (!Number.isInteger(s) || s < 400 || s > 599) throw new TypeError(`openapi plugin: commonProblems must hold 4xx/5xx statuses, got ${String(s)}`)
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
      doc.response = response
      doc.headers = conventionHeaders(route, doc.headers as Record<string, unknown> | undefined)
      if (config.auth === false) doc.security = []
      if (config.openapi?.internal === true) doc['x-internal'] = true
      return { schema: doc as FastifySchema, url }
    }
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
