import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { Id } from '../../../schemas/types.js'
import type { ContextItem } from '../../../schemas/problem.js'
import { ForeignKeyViolation } from '../../../store/errors.js'
import { constraintNames } from '../../../store/table/index.js'
import { evaluateRead, notModified, type Preconditions } from '../../conditional/index.js'
import { contextFromAjv, invalidData, problems } from '../../problem/index.js'
import { withArticle } from '../../shared/article.js'
import { storeProblem } from '../problems.js'
import { NoQuery } from '../write-schemas.js'
import { claimed, claimOf } from '../write/claims.js'
import type { Failure, WriteAction, WriteOp, WriteResult } from '../write/operations.js'
import type { Served } from './served.js'

type Row = Record<string, unknown>

const PATCH_TYPES = ['application/merge-patch+json', 'application/json']

// The conventions plugin (a declared dependency) sets the execution context and the key of
// every request; the auth plugin, when registered, the principal (none: no createdBy).
const subOf = (r: FastifyRequest): string | null => r.principal?.sub ?? null
// The conditional plugin (registered by the resource plugin) parses them for every route of it.
const preconditionsOf = (r: FastifyRequest): Preconditions => r.preconditions as Preconditions

/** The 400 of a route's validation, with read-only fields named as such. */
function validationProblem (s: Served, err: NonNullable<FastifyRequest['validationError']>): Error {
  const items: ContextItem[] = contextFromAjv(err.validation, err.validationContext as string)
  for (const item of items) {
    if (item.source === 'body' && item.field !== undefined && s.def.api.readOnly.has(item.field) && item.message === 'is not allowed here') {
      item.message = 'is read-only; leave it out of the request body'
    }
  }
  return invalidData(items)
}

function refuseInvalid (s: Served, request: FastifyRequest): void {
  if (request.validationError !== undefined && request.validationError !== null) throw validationProblem(s, request.validationError)
}

/** A write's failure as the item routes answer it (the bulk endpoint words the same failures for its operations). */
function failureProblem (s: Served, method: string, path: string, id: string, result: WriteResult, failure: Failure): unknown {
  const { name } = s.def
  switch (failure.kind) {
    case 'not-found':
      return problems.notFound(`No ${name} has the id ${id}; PATCH only changes an existing one (PUT creates).`, { instance: path })
    case 'invalid':
      return invalidData(failure.items, `The ${name} would be invalid after this patch; see context for each value.`)
    case 'conflict':
      return storeProblem(failure.error, s.def, result.op.action === 'delete' ? 'delete' : 'write', id, result.values, s.registry, (itemId) => s.itemPath(s.def, itemId))
    case 'precondition-required':
      // The conditional plugin refuses these first; a write path rule all the same.
      return problems.preconditionRequired(`${method} ${path} requires the If-Match header; GET the resource and send its ETag in If-Match.`, { instance: path })
    case 'precondition-failed':
      return problems.preconditionFailed(preconditionDetail(method, path, result.op, failure), { instance: path })
  }
}

function preconditionDetail (method: string, path: string, op: WriteOp, failure: Extract<Failure, { kind: 'precondition-failed' }>): string {
  if (method === 'DELETE') return `The conditions of If-Match / If-None-Match do not hold for ${path}; GET it again and retry with its ETag.`
  // With If-Match as well, no state can satisfy both.
  if (op.action === 'create') return `${path} already exists, and If-None-Match: * only creates; send If-Match with its ETag to replace it.`
  if (failure.header === 'If-Match') {
    return method === 'PATCH'
      ? `If-Match does not match the current ETag of ${path}; GET it again, reapply your change and retry with its ETag.`
      : `If-Match does not match the current ETag of ${path}, or it does not exist; GET it again and retry with its ETag.`
  }
  return method === 'PATCH'
    ? `If-None-Match matches the current ETag of ${path}; it was not changed.`
    : `If-None-Match matches the current ETag of ${path}; it was not replaced.`
}

/**
 * Runs one item write through the resource's write path, in a transaction with its key's
 * claim: the entity as stored, or null when the key answers for an earlier request (or a
 * DELETE found nothing). A failure is thrown as its problem; the transaction rolls back.
 */
async function writeItem (s: Served, request: FastifyRequest, op: WriteOp, path: string, status: number): Promise<Row | null> {
  const claim = claimOf(request, s.def.collection, path, status)
  const call = { ctx: request.executionContext, by: subOf(request), atomic: true }
  let outcome: Awaited<ReturnType<typeof claimed<WriteResult>>>
  try {
    outcome = await claimed(s.store, s.keys, claim, async (tx) => {
      const [result] = await s.writer.run(tx, call, [op]) as [WriteResult]
      if (result.failure !== null) throw failureProblem(s, request.method, path, op.id, result, result.failure)
      return result
    })
  } catch (err) {
    throw storeProblem(err, s.def, op.action === 'delete' ? 'delete' : 'write', op.id, {}, s.registry, (itemId) => s.itemPath(s.def, itemId))
  }
  return 'value' in outcome ? outcome.value.row : null
}

/** A write of `request`'s item with the request's preconditions. */
function itemOp (request: FastifyRequest, action: WriteAction, id: string, values: Row): WriteOp {
  const pre = preconditionsOf(request)
  return { action, id, values, ifMatch: pre.ifMatch, ifNoneMatch: pre.ifNoneMatch }
}

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
    return await create(request, reply, { ...(request.body as Row) })
  })

  fastify.get(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Get ${withArticle(def.name)}`, params, response: { 200: entity } }),
    attachValidation: true,
    config: config(scopes.read, { problems: [404, 412] })
  }, async (request, reply) => {
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
    if (evaluateRead(request.preconditions, etag, path)) return await notModified(reply).send()
    return s.rep.toEntity(row)
  })

  fastify.put(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Replace or create ${withArticle(def.name)}`, params, body: bodies.replace, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(scopes.write, { problems: [409, 412, 428], conditional })
  }, async (request, reply) => {
    refuseInvalid(s, request)
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
    config: config(scopes.write, { problems: [409, 412, 428], conditional, conventions: { contentTypes: PATCH_TYPES } })
  }, async (request, reply) => {
    refuseInvalid(s, request)
    const id = idOf(request)
    const row = await writeItem(s, request, itemOp(request, 'patch', id, { ...(request.body as Row) }), s.itemPath(def, id), 204)
    if (row !== null) reply.header('etag', row.etag as string)
    return await reply.code(204).send()
  })

  fastify.delete(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Delete ${withArticle(def.name)}`, params, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(scopes.write, { problems: [409, 412, 428], conditional })
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
      body: { ...bodies.create, required: (bodies.create.required ?? []).filter(f => f !== parent.field) },
      response: { 201: entity }
    }),
    attachValidation: true,
    config: config(scopes.write, { problems: [404, 409] })
  }, async (request, reply) => {
    refuseInvalid(s, request)
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
