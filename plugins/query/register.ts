import type { FastifyContextConfig, FastifyInstance, FastifySchema, RouteHandlerMethod } from 'fastify'
import type { CollectionConfig } from './route.js'
import { SEARCH_SUFFIX } from './route.js'

/** The collection routes of `registerCollection`. */
export interface CollectionRoutesOptions {
  /** Path of the collection, e.g. `/v1/authors/:authorId/documents`. */
  url: string
  collection: CollectionConfig
  /** Answers both forms from `request.collectionQuery`, with `reply.sendCollection(page)`. */
  handler: RouteHandlerMethod
  /** Route schema parts (response, params, tags …); the plugin adds the query string or body. */
  schema?: FastifySchema
  /** Other route config (auth scopes …). */
  config?: Omit<FastifyContextConfig, 'collection'>
  /** Also register `POST <url>/search` (conventions: "Search by POST"). Default true. */
  search?: boolean
}

/**
 * Registers `GET <url>` (Fastify adds its HEAD) and `POST <url>/search` with one
 * configuration and one handler, so both answer the same query with the same envelope.
 */
export function registerCollection (fastify: FastifyInstance, options: CollectionRoutesOptions): void {
  const config = { ...options.config, collection: options.collection }
  fastify.route({ method: 'GET', url: options.url, schema: options.schema, config, handler: options.handler })
  if (options.search === false) return
  const url = (options.url.endsWith('/') ? options.url.slice(0, -1) : options.url) + SEARCH_SUFFIX
  fastify.route({ method: 'POST', url, schema: options.schema, config, handler: options.handler })
}
