import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import { fieldsFromSchema } from '../../../model/fields.js'
import { caseFolding, type CaseFolding } from '../../../store/case-folding.js'
import { queryMemory } from '../../../store/memory-query.js'
import { Collection } from '../../../schemas/collection.js'
import { Id } from '../../../schemas/types.js'
import { invalidData, problems, unavailableProblem } from '../../problem/index.js'
import { collectionQueryOf, registerCollection } from '../../query/index.js'
import { withArticle } from '../../shared/article.js'
import type { SubCollection } from '../definition/options.js'
import { writeForm } from '../write-schemas.js'
import { NoQuery } from '../../shared/no-query.js'
import { repeatedKeyItems } from '../repeated-keys.js'
import type { Served } from './served.js'
import { itemOp, newEtagHeader, refuseInvalid, writeItem } from './writes.js'

type Row = Record<string, unknown>

const NO_CONTENT = Type.Null({ description: 'No Content' })

/**
 * An array field served as a collection of its own (conventions: "PUT on a collection replaces
 * the whole collection"): `GET <item>/<field>` pages its items in the collection envelope,
 * ordered by their key (cursor and offset paging, as other collections); `PUT <item>/<field>`
 * with `{ "results": [...] }` replaces all of them through the write path, under the parent's
 * `If-Match`, and changes the parent's ETag.
 */
export function registerSubCollectionRoutes (fastify: FastifyInstance, s: Served): void {
  for (const sub of s.def.api.subCollections) registerOne(fastify, s, sub)
}

function registerOne (fastify: FastifyInstance, s: Served, sub: SubCollection): void {
  const { def } = s
  const url = `${def.path}/:${def.idParam}/${sub.field}`
  const params = Type.Object({ [def.idParam]: Id() })
  const fields = fieldsFromSchema(sub.item, { filterable: [sub.key], sortable: [sub.key], idField: sub.key })
  const tags = [def.collection]
  const idOf = (params: unknown): string => (params as Record<string, string>)[def.idParam] as string

  registerCollection(fastify, {
    url,
    search: false,
    collection: { fields, idField: sub.key, defaultOrdering: [{ field: sub.key, direction: 'asc' }] },
    schema: { tags, summary: `List the ${sub.field} of ${withArticle(def.name)}`, params, response: { 200: Collection(sub.item) } },
    // `csv`: also answered as text/csv where the csv plugin is registered.
    config: { auth: { scopes: [...def.api.scopes.read] }, problems: [404], csv: true } as Omit<FastifyContextConfig, 'collection'>,
    handler: async function (request, reply) {
      const id = idOf(request.params)
      const query = collectionQueryOf(request)
      let row: Row | null
      // The items' case-insensitive filters fold case as the store's own collections do.
      let folding: CaseFolding
      try {
        row = await s.table.get(s.store, request.executionContext, id)
        folding = await caseFolding(s.store, query.filter)
      } catch (err) {
        throw unavailableProblem(err)
      }
      const path = s.itemPath(def, id)
      if (row === null) throw problems.notFound(`No ${def.name} exists at ${path}; check the ${def.name} id.`, { instance: path })
      return await reply.sendCollection(queryMemory((row[sub.field] ?? []) as Row[], query, fields, { folding }))
    }
  })

  const body = Type.Object({
    results: Type.Array(writeForm(sub.item) as unknown as TSchema, { ...(sub.maxItems === undefined ? {} : { maxItems: sub.maxItems }), description: `Every item of the ${sub.field}, in any order; each ${sub.key} once.` })
  }, { additionalProperties: false })
  fastify.put(url, {
    schema: { tags, summary: `Replace all the ${sub.field} of ${withArticle(def.name)}`, querystring: NoQuery, params, body, response: { 204: NO_CONTENT } },
    attachValidation: true,
    config: { auth: { scopes: [...def.api.scopes.write] }, problems: def.api.requireIfMatch ? [404, 409, 412, 428] : [404, 409, 412], conditional: { requireIfMatch: def.api.requireIfMatch, createWithIfNoneMatch: false }, openapi: { responseHeaders: newEtagHeader(204) } } as FastifyContextConfig
  }, async (request, reply) => {
    refuseInvalid(s, request)
    const id = idOf(request.params)
    const results = (request.body as { results: Row[] }).results
    const repeated = repeatedKeyItems(results, sub.key, (i) => `results[${i}]`)
    if (repeated.length > 0) throw invalidData(repeated, `Each ${sub.key} appears once among the ${sub.field}; see context for each repeated one.`)
    const row = await writeItem(s, request, itemOp(request, 'change', id, { [sub.field]: results }), s.itemPath(def, id), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })
}
