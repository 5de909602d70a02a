import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Page } from '../../../model/query.js'
import { Collection } from '../../../schemas/collection.js'
import { Id } from '../../../schemas/types.js'
import type { PageScope } from '../../../store/table/index.js'
import { problems } from '../../problem/index.js'
import { collectionQueryOf, registerCollection } from '../../query/index.js'
import { unavailableProblem } from '../../problem/index.js'
import { withArticle } from '../../shared/article.js'
import type { Served } from './served.js'

/**
 * `GET <collection>` and `POST <collection>/search` (and the same under the parent for a child
 * collection) through the query plugin: the request's collection query is read from the
 * resource's table, scoped by execution context (and parent), the summary's fields only.
 */
export function registerCollectionRoutes (fastify: FastifyInstance, s: Served, parentServed: Served | null): void {
  const { def, store, table, rep } = s
  const fields = def.storage.fields
  const defaultOrdering = def.storage.defaultOrdering
  // Titled, so the document writes the page once for the collection's GET and search, and clients get one type for it.
  const response = { 200: Collection(def.api.summary, { title: `${def.name.charAt(0).toUpperCase()}${def.name.slice(1)}Page` }) }
  // `csv`: the GET also answers text/csv where the csv plugin is registered (its POST search stays JSON).
  const config = { auth: { scopes: [...def.api.scopes.read] }, csv: true } as Omit<FastifyContextConfig, 'collection'>

  async function pageOf (request: FastifyRequest, scope: PageScope): Promise<Page<Record<string, unknown>>> {
    try {
      return await table.page(store, collectionQueryOf(request), fields, scope)
    } catch (err) {
      throw unavailableProblem(err)
    }
  }

  function send (reply: FastifyReply, page: Page<Record<string, unknown>>): FastifyReply {
    // The page is finished on the rows: completing them into entities adds no sort key.
    for (const row of page.items) rep.toEntity(row)
    return reply.sendCollection(page)
  }

  registerCollection(fastify, {
    url: def.path,
    collection: { fields, defaultOrdering },
    schema: { tags: [def.collection], summary: `List ${def.collection}`, response },
    config,
    handler: async function (request, reply) {
      return await send(reply, await pageOf(request, { ctx: request.executionContext }))
    }
  })

  const parent = def.parent
  if (parent === null || parentServed === null) return
  const p = parent.resource
  registerCollection(fastify, {
    url: `${p.path}/:${p.idParam}/${def.collection}`,
    collection: { fields, defaultOrdering },
    schema: { tags: [def.collection], summary: `List the ${def.collection} of ${withArticle(p.name)}`, params: Type.Object({ [p.idParam]: Id() }), response },
    config: { ...config, problems: [404] } as Omit<FastifyContextConfig, 'collection'>,
    handler: async function (request, reply) {
      const parentId = (request.params as Record<string, string>)[p.idParam] as string
      const ctx = request.executionContext
      let page: Page<Record<string, unknown>> | null
      try {
        // Rows of the parent show that it exists (each references it, a foreign key): only an
        // empty page has the database look for it, in the same statement.
        page = await table.childPage(store, collectionQueryOf(request), fields, { ctx, parent: { field: parent.field, id: parentId } }, parentServed.table)
      } catch (err) {
        throw unavailableProblem(err)
      }
      // Conventions, Common errors 404: a missing parent is named in detail and instance.
      if (page === null) {
        const parentPath = s.itemPath(p, parentId)
        throw problems.notFound(`No ${p.name} exists at ${parentPath}; check the ${p.name} id.`, { instance: parentPath })
      }
      return await send(reply, page)
    }
  })
}
