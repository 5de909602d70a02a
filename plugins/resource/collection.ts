import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Collection } from '../../schemas/collection.js'
import { Id } from '../../schemas/types.js'
import { problems } from '../problem/errors.js'
import { collectionQueryOf, registerCollection } from '../query/index.js'
import { defaultColumn, fieldsFromSchema } from '../query/fields.js'
import { finishPage } from '../query/paging.js'
import type { FieldMap } from '../query/model.js'
import { compileSql, countStatement, selectStatement } from '../../store/sql-query.js'
import { quoteIdent } from '../../store/quote.js'
import type { Store } from '../../store/types.js'
import type { ResourceDefinition } from './define.js'
import type { Repository } from './repository.js'
import type { ItemPaths } from './paths.js'
import { selectList, type Representation } from './representation.js'
import { unavailableProblem } from '../shared/unavailable.js'
import { withArticle } from '../shared/article.js'

type Row = Record<string, unknown>

const JSON_TYPE = 'application/json; charset=utf-8'

export interface CollectionContext {
  def: ResourceDefinition
  store: Store
  rep: Representation
  /** The parent's repository, for a child collection (`parent` in the definition); else null. */
  parentRepo: Repository | null
  /** Item paths under the plugin's route prefix. */
  itemPath: ItemPaths
}

/** The filterable and sortable paths of a resource, mapped onto its table's columns. */
export function fieldMapOf (def: ResourceDefinition): FieldMap {
  const stored = new Set(['id', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', ...def.columns.map(c => c.field)])
  return fieldsFromSchema(def.summaryEntity, {
    filterable: [...def.filterable],
    sortable: [...def.sortable],
    // `ref` and derived fields are computed, not stored: they have no column to filter on.
    column: (path, type) => stored.has(path.split('.')[0] as string) ? defaultColumn(path, type) : undefined
  })
}

/**
 * `GET <collection>` and `POST <collection>/search` (and the same under the parent for a child
 * collection) through the query plugin: the request's collection query is compiled to one
 * parameterized statement over the resource's table, scoped by execution context (and parent),
 * selecting only the summary's columns.
 */
export function registerCollections (fastify: FastifyInstance, cc: CollectionContext): void {
  const { def, store, rep } = cc
  const fields = fieldMapOf(def)
  const table = `${quoteIdent(def.table)} t`
  const summary = selectList({ ...def, columns: def.columns.filter(c => !def.summaryOmit.includes(c.field)) })
  const response = { 200: Collection(def.summaryEntity) }
  const config = { auth: { scopes: [...def.scopes.read] } } as Omit<FastifyContextConfig, 'collection'>

  async function page (request: FastifyRequest, reply: FastifyReply, where: string, params: unknown[]): Promise<FastifyReply> {
    const q = collectionQueryOf(request)
    const sql = compileSql(q, fields, { paramStart: params.length + 1 })
    try {
      const statement = selectStatement(sql, { select: summary, from: table, where, params })
      const { rows } = await store.query<Row>(statement.text, statement.params)
      const result = finishPage(rows.map(r => rep.toEntity(r)), q.paging, q.ordering)
      // Summaries read with the select list are written alike by the native serializer, with a
      // fraction of the time and garbage (plain-json.ts); a page with any other, such as a
      // stored document holding a property the schema no longer has, keeps the schema's.
      if (result.items.every(rep.plainSummary)) reply.serializer(JSON.stringify).type(JSON_TYPE)
      if (q.paging.kind === 'offset' && q.paging.totalCount) {
        const count = countStatement(sql, { from: table, where, params })
        const total = await store.query<{ totalCount: number }>(count.text, count.params)
        // count(*) always answers one row.
        return await reply.sendCollection({ ...result, totalCount: (total.rows[0] as { totalCount: number }).totalCount })
      }
      return await reply.sendCollection(result)
    } catch (err) {
      throw unavailableProblem(err)
    }
  }

  registerCollection(fastify, {
    url: def.path,
    collection: { fields },
    schema: { tags: [def.collection], summary: `List ${def.collection}`, response },
    config,
    handler: async function (request, reply) {
      return await page(request, reply, 't.ctx = $1', [request.executionContext])
    }
  })

  const parent = def.parent
  if (parent === null) return
  const p = parent.resource
  const parentRepo = cc.parentRepo as Repository
  registerCollection(fastify, {
    url: `${p.path}/:${p.idParam}/${def.collection}`,
    collection: { fields },
    schema: { tags: [def.collection], summary: `List the ${def.collection} of ${withArticle(p.name)}`, params: Type.Object({ [p.idParam]: Id() }), response },
    config: { ...config, problems: [404] } as Omit<FastifyContextConfig, 'collection'>,
    handler: async function (request, reply) {
      const parentId = (request.params as Record<string, string>)[p.idParam] as string
      const ctx = request.executionContext
      let exists: string | null
      try {
        exists = await parentRepo.etagOf(store, ctx, parentId)
      } catch (err) {
        throw unavailableProblem(err)
      }
      // Conventions, Common errors 404: a missing parent is named in detail and instance.
      if (exists === null) {
        const parentPath = cc.itemPath(p, parentId)
        throw problems.notFound(`No ${p.name} exists at ${parentPath}; check the ${p.name} id.`, { instance: parentPath })
      }
      return await page(request, reply, `t.ctx = $1 AND t.${quoteIdent(parent.field)} = $2`, [ctx, parentId])
    }
  })
}
