import type {
  FastifyBaseLogger, FastifyContextConfig, FastifyInstance, FastifySchema, FastifyTypeProvider, FastifyTypeProviderDefault,
  RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerBase, RawServerDefault, RouteGenericInterface, RouteHandlerMethod
} from 'fastify'
import type { CollectionConfig } from './route.js'
import { SEARCH_SUFFIX } from './route.js'

/**
 * The collection routes of `registerCollection`. Generic like Fastify's own route options: with
 * a type provider (`withTypeProvider<TypeBoxTypeProvider>()`) the handler's `request.params`
 * and the reply are typed from `schema`.
 */
export interface CollectionRoutesOptions<
  Schema extends FastifySchema = FastifySchema,
  TypeProvider extends FastifyTypeProvider = FastifyTypeProviderDefault,
  RawServer extends RawServerBase = RawServerDefault,
  Logger extends FastifyBaseLogger = FastifyBaseLogger
> {
  /** Path of the collection, e.g. `/v1/authors/:authorId/documents`. */
  url: string
  collection: CollectionConfig
  /** Answers both forms from `request.collectionQuery`, with `reply.sendCollection(page)`. */
  handler: RouteHandlerMethod<RawServer, RawRequestDefaultExpression<RawServer>, RawReplyDefaultExpression<RawServer>, RouteGenericInterface, FastifyContextConfig, Schema, TypeProvider, Logger>
  /** Route schema parts (response, params, tags …); the plugin adds the query string or body. */
  schema?: Schema
  /** Other route config (auth scopes …). */
  config?: Omit<FastifyContextConfig, 'collection'>
  /** Also register `POST <url>/search` (conventions: "Search by POST"). Default true. */
  search?: boolean
}

/**
 * Registers `GET <url>` (Fastify adds its HEAD) and `POST <url>/search` with one
 * configuration and one handler, so both answer the same query with the same envelope.
 */
export function registerCollection<
  const Schema extends FastifySchema = FastifySchema,
  TypeProvider extends FastifyTypeProvider = FastifyTypeProviderDefault,
  RawServer extends RawServerBase = RawServerDefault,
  Logger extends FastifyBaseLogger = FastifyBaseLogger
> (
  fastify: FastifyInstance<RawServer, RawRequestDefaultExpression<RawServer>, RawReplyDefaultExpression<RawServer>, Logger, TypeProvider>,
  options: CollectionRoutesOptions<Schema, TypeProvider, RawServer, Logger>
): void {
  const config: FastifyContextConfig = { ...options.config, collection: options.collection }
  const { schema, handler } = options
  fastify.route({ method: 'GET', url: options.url, schema, config, handler })
  if (options.search === false) return
  const url = (options.url.endsWith('/') ? options.url.slice(0, -1) : options.url) + SEARCH_SUFFIX
  fastify.route({ method: 'POST', url, schema, config, handler })
}
