import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { Id } from '../../../schemas/types.js'
import { ForeignKeyViolation } from '../../../store/errors.js'
import { constraintNames } from '../../../store/table/index.js'
import { evaluateRead, notModified } from '../../conditional/index.js'
import { invalidData, problems } from '../../problem/index.js'
import { withArticle } from '../../shared/article.js'
import { storeProblem } from '../problems.js'
import { NoQuery } from '../../shared/no-query.js'
import type { Served } from './served.js'
import { itemOp, newEtagHeader, preconditionsOf, refuseInvalid, refuseRepeatedKeys, writeItem } from './writes.js'
import { lastChanged } from '../write/decide.js'

type Row = Record<string, unknown>

const PATCH_TYPES = ['application/merge-patch+json', 'application/json']

function config (scopes: readonly string[], extra: Record<string, unknown>): FastifyContextConfig {
  return { auth: { scopes: [...scopes] }, ...extra } as FastifyContextConfig
}

const NO_CONTENT = Type.Null({ description: 'No Content' })

/** Registers the item routes of one resource (and the POST of its child collection). */
export function registerItemRoutes (fastify: FastifyInstance, s: Served): void {
  const { def } = s
  const idOf = (r: FastifyRequest): string => (r.params as Record<string, string>)[def.idParam] as string
  const itemUrl = `${def.path}/:${def.idParam}`
  const params = Type.Object({ [def.idParam]: Id() })
  const { entity, bodies, scopes } = def.api
  const conditional = { requireIfMatch: def.api.requireIfMatch }
  // 428 only where If-Match is required: a client generated from the document meets no other.
  const writeProblems = def.api.requireIfMatch ? [409, 412, 428] : [409, 412]
  const schema = (x: FastifySchema): FastifySchema => ({ tags: [def.collection], ...x })

  async function create (request: FastifyRequest, reply: FastifyReply, values: Row): Promise<Row | undefined> {
    const id = randomUUID()
    const path = s.itemPath(def, id)
    const row = await writeItem(s, request, { action: 'create', id, values, ifMatch: null, ifNoneMatch: null }, path, 201)
    // The key answers for an earlier POST: replayStatus has thrown its 409 already.
    const created = s.rep.toEntity(row as Row)
    reply.code(201).header('location', path).header('etag', created.etag as string)
    return created
  }

  fastify.post(def.path, {
    schema: schema({ querystring: NoQuery, summary: `Create ${withArticle(def.name)}`, body: bodies.create, response: { 201: entity } }),
    attachValidation: true,
    config: config(scopes.write, { problems: [409] })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    refuseRepeatedKeys(s, request.body as Row)
    return await create(request, reply, { ...(request.body as Row) })
  })

  const readOptions = {
    schema: schema({ querystring: NoQuery, summary: `Get ${withArticle(def.name)}`, params, response: { 200: entity } }),
    attachValidation: true,
    config: config(scopes.read, { problems: [404, 412] })
  }
  const read = async (request: FastifyRequest, reply: FastifyReply): Promise<Row | undefined> => {
    refuseInvalid(s, request)
    const id = idOf(request)
    const path = s.itemPath(def, id)
    let row: Row | null
    try {
      row = await s.table.get(s.store, request.executionContext, id)
    } catch (err) {
      throw storeProblem(err, def, 'write', id, {}, s.registry)
    }
    if (row === null) throw problems.notFound(`No ${def.name} has the id ${id}; check the id.`, { instance: path })
    const etag = row.etag as string
    reply.header('etag', etag)
    if (evaluateRead(request.preconditions, etag, path, lastChanged(row))) return await notModified(reply).send()
    return s.rep.toEntity(row)
  }
  fastify.get(itemUrl, { ...readOptions, exposeHeadRoute: false }, read)
  // HEAD is a route of its own rather than Fastify's GET without a body, which writes
  // `Content-Length: 0` on a 304: RFC 9110 §8.6 allows there only the 200's length, or none.
  fastify.head(itemUrl, readOptions, read)

  fastify.put(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Replace or create ${withArticle(def.name)}`, params, body: bodies.replace, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(scopes.write, { problems: writeProblems, conditional, openapi: { responseHeaders: newEtagHeader(204) } })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    refuseRepeatedKeys(s, request.body as Row)
    const id = idOf(request)
    const { id: bodyId, ...values } = request.body as Row
    if (bodyId !== undefined && bodyId !== id) {
      throw invalidData([{ code: 'INPUT_INVALID', message: `must equal the id in the path (${id}), or be left out`, field: 'id', source: 'body', value: String(bodyId) }])
    }
    // RFC 9110 §13.1.2: If-None-Match: * only creates.
    const action = preconditionsOf(request).ifNoneMatch === '*' ? 'create' : 'put'
    const row = await writeItem(s, request, itemOp(request, action, id, values), s.itemPath(def, id), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })

  fastify.patch(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Change ${withArticle(def.name)} (JSON Merge Patch)`, params, body: bodies.patch, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(scopes.write, { problems: writeProblems, conditional, conventions: { contentTypes: PATCH_TYPES }, openapi: { responseHeaders: newEtagHeader(204) } })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    refuseRepeatedKeys(s, request.body as Row)
    const id = idOf(request)
    const row = await writeItem(s, request, itemOp(request, 'patch', id, { ...(request.body as Row) }), s.itemPath(def, id), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })

  fastify.delete(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Delete ${withArticle(def.name)}`, params, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(scopes.write, { problems: writeProblems, conditional })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    const id = idOf(request)
    await writeItem(s, request, itemOp(request, 'delete', id, {}), s.itemPath(def, id), 204)
    return await reply.code(204).send()
  })

  const parent = def.parent
  if (parent === null) return
  const p = parent.resource
  fastify.post(`${p.path}/:${p.idParam}/${def.collection}`, {
    schema: schema({
      summary: `Create ${withArticle(def.name)} of ${withArticle(p.name)}`,
      querystring: NoQuery,
      params: Type.Object({ [p.idParam]: Id() }),
      body: { ...bodies.create, required: (bodies.create.required as string[]).filter(f => f !== parent.field) },
      response: { 201: entity }
    }),
    attachValidation: true,
    config: config(scopes.write, { problems: [404, 409] })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    refuseRepeatedKeys(s, request.body as Row)
    const parentId = (request.params as Record<string, string>)[p.idParam] as string
    const values = { ...(request.body as Row) }
    if (values[parent.field] !== undefined && values[parent.field] !== parentId) {
      throw invalidData([{ code: 'INPUT_INVALID', message: `must equal the ${p.name} id in the path (${parentId}), or be left out`, field: parent.field, source: 'body', value: String(values[parent.field]) }])
    }
    values[parent.field] = parentId
    try {
      return await create(request, reply, values)
    } catch (err) {
      // Conventions, Common errors 404: a missing parent is named in detail and instance.
      const cause = (err as { cause?: unknown }).cause
      if (cause instanceof ForeignKeyViolation && cause.constraint === constraintNames.foreignKey(def.storage.table, parent.field)) {
        const parentPath = s.itemPath(p, parentId)
        throw problems.notFound(`No ${p.name} exists at ${parentPath}; create the ${p.name} before adding ${def.collection} to it.`, { instance: parentPath })
      }
      throw err
    }
  })
}
