import { randomBytes, randomUUID } from 'node:crypto'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { Id } from '../../schemas/types.js'
import { ForeignKeyViolation } from '../../store/errors.js'
import type { Queryable, Store } from '../../store/types.js'
import { evaluateRead, notModified, type Preconditions } from '../conditional/index.js'
import { opaqueTags, strongMatch, strongTags, weakMatch, type EntityTagList } from '../conditional/entity-tags.js'
import { fingerprintOf, replayStatus, type IdempotencyClaim, type IdempotencyKeys } from '../idempotency/keys.js'
import { contextFromAjv } from '../problem/validation-context.js'
import { invalidData, problems } from '../problem/errors.js'
import { pathOf } from '../shared/url.js'
import type { ContextItem } from '../../schemas/problem.js'
import { constraintNames } from './columns.js'
import type { ResourceDefinition } from './define.js'
import { storeProblem, type Operation, type Registry } from './errors.js'
import { mergePatch } from './merge-patch.js'
import type { Repository, Write } from './repository.js'
import type { Representation } from './representation.js'
import type { ItemPaths } from './paths.js'
import { compileBodyValidator, createBody, fillerOf, NoQuery, patchBody, type Filler } from './write-schemas.js'
import { withArticle } from '../shared/article.js'

type Row = Record<string, unknown>

/** What the routes of one resource share, built once at registration. */
export interface ResourceContext {
  def: ResourceDefinition
  store: Store
  repo: Repository
  rep: Representation
  keys: IdempotencyKeys
  registry: Registry
  /** Item paths under the plugin's route prefix. */
  itemPath: ItemPaths
}

interface Compiled extends ResourceContext {
  /** Fills defaults and nulls of every stored field (writes create rows with all of them). */
  fillAll: Filler
  fillWritable: Filler
  /** Validates a merged PATCH result like a PUT body. */
  validateMerged: ValidateFunction
}

const PATCH_TYPES = ['application/merge-patch+json', 'application/json']

/** A new strong entity tag: opaque, random, quoted as the ETag header carries it. */
export function newEtag (): string {
  return `"${randomBytes(12).toString('base64url')}"`
}

// The conventions plugin (a declared dependency) sets the execution context and the key of
// every request; the auth plugin, when registered, the principal (none: no createdBy).
const contextOf = (r: FastifyRequest): string => r.executionContext
const subOf = (r: FastifyRequest): string | null => r.principal?.sub ?? null
const keyOf = (r: FastifyRequest): string | null => r.idempotencyKey

// The conditional plugin (registered by the resource plugin) parses them for every route of it.
const preconditionsOf = (r: FastifyRequest): Preconditions => r.preconditions as Preconditions

function bodyOf (r: FastifyRequest): Row {
  return { ...(r.body as Row) }
}

/** The 400 of a route's validation, with read-only fields named as such. */
function validationProblem (def: ResourceDefinition, err: NonNullable<FastifyRequest['validationError']>): Error {
  const items: ContextItem[] = contextFromAjv(err.validation, err.validationContext as string)
  for (const item of items) {
    if (item.source === 'body' && item.field !== undefined && def.readOnly.has(item.field) && item.message === 'is not allowed here') {
      item.message = 'is read-only; leave it out of the request body'
    }
  }
  return invalidData(items)
}

function refuseInvalid (c: Compiled, request: FastifyRequest): void {
  if (request.validationError !== undefined && request.validationError !== null) throw validationProblem(c.def, request.validationError)
}

function listOf (tags: EntityTagList | null, pick: (l: Exclude<EntityTagList, '*'>) => string[]): string[] | null {
  return tags === null || tags === '*' ? null : pick(tags)
}

function preconditionFailed (path: string, detail: string): Error {
  return problems.preconditionFailed(detail, { instance: path })
}

/**
 * Runs a write: on the store directly, or, with `Svc-Idempotency-Key`, in one transaction
 * with the key's claim, so the key is kept exactly when the change is. A key used before
 * answers with the first request's status (or 409) and changes nothing.
 */
async function guarded (c: Compiled, request: FastifyRequest, claim: Omit<IdempotencyClaim, 'ctx' | 'caller' | 'resource' | 'key' | 'method' | 'target' | 'fingerprint'>, fn: (db: Queryable) => Promise<void>): Promise<number | null> {
  const key = keyOf(request)
  if (key === null) {
    await fn(c.store)
    return null
  }
  const full: IdempotencyClaim = {
    ...claim,
    ctx: contextOf(request),
    caller: subOf(request) ?? '',
    resource: c.def.collection,
    key,
    method: request.method,
    target: pathOf(request.url),
    fingerprint: fingerprintOf(request.body)
  }
  return await c.store.transaction(async (tx) => {
    const record = await c.keys.claim(tx, full)
    if (record !== null) return replayStatus(record, full)
    await fn(tx)
    return null
  })
}

async function mapped<T> (c: Compiled, op: Operation, id: string, body: Row, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw storeProblem(err, c.def, op, id, body, c.registry, (itemId) => c.itemPath(c.def, itemId))
  }
}

async function create (c: Compiled, request: FastifyRequest, reply: FastifyReply, values: Row): Promise<Row> {
  const id = randomUUID()
  const w: Write = { ctx: contextOf(request), id, etag: newEtag(), by: subOf(request), values: c.fillAll(values) }
  let row: Row | undefined
  await mapped(c, 'write', id, values, async () => {
    await guarded(c, request, { instance: c.itemPath(c.def, id), status: 201 }, async (db) => { row = await c.repo.insert(db, w) })
  })
  const entity = c.rep.toEntity(row as Row)
  reply.code(201).header('location', c.itemPath(c.def, id)).header('etag', entity.etag as string)
  return entity
}

async function replace (c: Compiled, request: FastifyRequest, id: string, path: string): Promise<void> {
  const body = bodyOf(request)
  if (body.id !== undefined && body.id !== id) {
    throw invalidData([{ code: 'INPUT_INVALID', message: `must equal the id in the path (${id}), or be left out`, field: 'id', source: 'body', value: String(body.id) }])
  }
  delete body.id
  const pre = preconditionsOf(request)
  const w: Write = { ctx: contextOf(request), id, etag: newEtag(), by: subOf(request), values: c.fillAll(body) }
  const noneMatch = listOf(pre.ifNoneMatch, opaqueTags)
  await mapped(c, 'write', id, body, async () => {
    await guarded(c, request, { instance: path, status: 204 }, async (db) => {
      if (pre.ifNoneMatch === '*') {
        // RFC 9110 §13.1.2: create only. With If-Match as well, no state can satisfy both.
        if (pre.ifMatch !== null || !await c.repo.insertOnly(db, w)) {
          throw preconditionFailed(path, `${path} already exists, and If-None-Match: * only creates; send If-Match with its ETag to replace it.`)
        }
      } else if (pre.ifMatch !== null) {
        const match = listOf(pre.ifMatch, strongTags)
        if (!await c.repo.update(db, w, { match, noneMatch }, 'writable')) {
          throw preconditionFailed(path, `If-Match does not match the current ETag of ${path}, or it does not exist; GET it again and retry with its ETag.`)
        }
      } else if (!await c.repo.upsert(db, w, { noneMatch })) {
        throw preconditionFailed(path, `If-None-Match matches the current ETag of ${path}; it was not replaced.`)
      }
    })
  })
}

/**
 * The read-merge-write of a PATCH, in a transaction `tx`: the row is read locked, so no other
 * write lands between the read the patch is merged into and the write of the result. A client
 * without If-Match (or with *) asked for no precondition, so it never gets a 412 for losing a
 * race: concurrent patches apply one after the other.
 */
async function patchLocked (c: Compiled, request: FastifyRequest, tx: Queryable, id: string, path: string, body: Row, merged: Row): Promise<void> {
  const pre = preconditionsOf(request)
  const ctx = contextOf(request)
  const row = await c.repo.getLocked(tx, ctx, id)
  if (row === null) throw problems.notFound(`No ${c.def.name} has the id ${id}; PATCH only changes an existing one (PUT creates).`, { instance: path })
  const etag = row.etag as string
  if (pre.ifMatch !== null && !strongMatch(pre.ifMatch, etag)) {
    throw preconditionFailed(path, `If-Match does not match the current ETag of ${path}; GET it again, reapply your change and retry with its ETag.`)
  }
  if (pre.ifNoneMatch !== null && weakMatch(pre.ifNoneMatch, etag)) {
    throw preconditionFailed(path, `If-None-Match matches the current ETag of ${path}; it was not changed.`)
  }
  Object.assign(merged, c.fillWritable(mergePatch(c.rep.writableOf(row), body) as Row))
  if (!c.validateMerged(merged)) {
    throw invalidData(contextFromAjv(c.validateMerged.errors as ErrorObject[], 'body'), `The ${c.def.name} would be invalid after this patch; see context for each value.`)
  }
  await c.repo.update(tx, { ctx, id, etag: newEtag(), by: subOf(request), values: merged }, {}, 'writable')
}

async function patch (c: Compiled, request: FastifyRequest, id: string, path: string): Promise<void> {
  const patchDoc = bodyOf(request)
  // The merged entity, also what a unique violation names (the patch alone may lack the value).
  const merged: Row = {}
  const apply = async (tx: Queryable): Promise<void> => { await patchLocked(c, request, tx, id, path, patchDoc, merged) }
  await mapped(c, 'write', id, merged, async () => {
    await guarded(c, request, { instance: path, status: 204 }, async (db) => {
      // With a key, `db` is the transaction that claims it; without one, the patch needs its own.
      if (db === c.store) await c.store.transaction(apply)
      else await apply(db)
    })
  })
}

async function remove (c: Compiled, request: FastifyRequest, id: string, path: string): Promise<void> {
  const pre = preconditionsOf(request)
  const ctx = contextOf(request)
  await mapped(c, 'delete', id, {}, async () => {
    await guarded(c, request, { instance: path, status: 204 }, async (db) => {
      if (pre.ifMatch === null && pre.ifNoneMatch === null) {
        await c.repo.delete(db, ctx, id)
        return
      }
      const failed = (): Error => preconditionFailed(path, `The conditions of If-Match / If-None-Match do not hold for ${path}; GET it again and retry with its ETag.`)
      if (pre.ifNoneMatch === '*') {
        if (await c.repo.etagOf(db, ctx, id) !== null) throw failed()
        return
      }
      const cond = { match: listOf(pre.ifMatch, strongTags), noneMatch: listOf(pre.ifNoneMatch, opaqueTags) }
      // Nothing deleted: it did not exist (204, a repeated DELETE) or the condition failed (412).
      if (!await c.repo.delete(db, ctx, id, cond) && await c.repo.etagOf(db, ctx, id) !== null) throw failed()
    })
  })
}

function config (scopes: readonly string[], extra: Record<string, unknown>): FastifyContextConfig {
  return { auth: { scopes: [...scopes] }, ...extra } as FastifyContextConfig
}

const NO_CONTENT = Type.Null({ description: 'No Content' })

/** Registers the item and collection routes of one resource. */
export function registerRoutes (fastify: FastifyInstance, ctx: ResourceContext): void {
  const { def } = ctx
  const c: Compiled = {
    ...ctx,
    fillAll: fillerOf(def.fields),
    fillWritable: fillerOf(Object.fromEntries(def.writable.map(f => [f, def.fields[f] as TSchema]))),
    validateMerged: compileBodyValidator(createBody(def.fields, def.writable))
  }
  const idOf = (r: FastifyRequest): string => (r.params as Record<string, string>)[def.idParam] as string
  const itemUrl = `${def.path}/:${def.idParam}`
  const params = Type.Object({ [def.idParam]: Id() })
  const entity = def.entity
  const conditional = { requireIfMatch: def.requireIfMatch }
  const schema = (s: FastifySchema): FastifySchema => ({ tags: [def.collection], ...s })

  fastify.post(def.path, {
    schema: schema({ querystring: NoQuery, summary: `Create ${withArticle(def.name)}`, body: createBody(def.fields, def.writable), response: { 201: entity } }),
    attachValidation: true,
    config: config(def.scopes.write, { problems: [409] })
  }, async (request, reply) => {
    refuseInvalid(c, request)
    return await create(c, request, reply, bodyOf(request))
  })

  fastify.get(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Get ${withArticle(def.name)}`, params, response: { 200: entity } }),
    attachValidation: true,
    config: config(def.scopes.read, { problems: [404, 412] })
  }, async (request, reply) => {
    refuseInvalid(c, request)
    const id = idOf(request)
    const path = c.itemPath(def, id)
    const row = await mapped(c, 'write', id, {}, async () => await c.repo.get(c.store, contextOf(request), id))
    if (row === null) throw problems.notFound(`No ${def.name} has the id ${id}; check the id.`, { instance: path })
    const etag = row.etag as string
    reply.header('etag', etag)
    if (evaluateRead(request.preconditions, etag, path)) return await notModified(reply).send()
    return c.rep.toEntity(row)
  })

  fastify.put(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Replace or create ${withArticle(def.name)}`, params, body: createBody(def.fields, def.writable, [], { id: Id() }), response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(def.scopes.write, { problems: [409, 412, 428], conditional })
  }, async (request, reply) => {
    refuseInvalid(c, request)
    const id = idOf(request)
    await replace(c, request, id, c.itemPath(def, id))
    return await reply.code(204).send()
  })

  fastify.patch(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Change ${withArticle(def.name)} (JSON Merge Patch)`, params, body: patchBody(def.fields, def.writable), response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(def.scopes.write, { problems: [409, 412, 428], conditional, conventions: { contentTypes: PATCH_TYPES } })
  }, async (request, reply) => {
    refuseInvalid(c, request)
    const id = idOf(request)
    await patch(c, request, id, c.itemPath(def, id))
    return await reply.code(204).send()
  })

  fastify.delete(itemUrl, {
    schema: schema({ querystring: NoQuery, summary: `Delete ${withArticle(def.name)}`, params, response: { 204: NO_CONTENT } }),
    attachValidation: true,
    config: config(def.scopes.write, { problems: [409, 412, 428], conditional })
  }, async (request, reply) => {
    refuseInvalid(c, request)
    await remove(c, request, idOf(request), c.itemPath(def, idOf(request)))
    return await reply.code(204).send()
  })

  const parent = def.parent
  if (parent !== null) {
    const p = parent.resource
    fastify.post(`${p.path}/:${p.idParam}/${def.collection}`, {
      schema: schema({
        summary: `Create ${withArticle(def.name)} of ${withArticle(p.name)}`,
        querystring: NoQuery,
        params: Type.Object({ [p.idParam]: Id() }),
        body: createBody(def.fields, def.writable, [parent.field]),
        response: { 201: entity }
      }),
      attachValidation: true,
      config: config(def.scopes.write, { problems: [404, 409] })
    }, async (request, reply) => {
      refuseInvalid(c, request)
      const parentId = (request.params as Record<string, string>)[p.idParam] as string
      const body = bodyOf(request)
      if (body[parent.field] !== undefined && body[parent.field] !== parentId) {
        throw invalidData([{ code: 'INPUT_INVALID', message: `must equal the ${p.name} id in the path (${parentId}), or be left out`, field: parent.field, source: 'body', value: String(body[parent.field]) }])
      }
      body[parent.field] = parentId
      try {
        return await create(c, request, reply, body)
      } catch (err) {
        // Conventions, Common errors 404: a missing parent is named in detail and instance.
        const cause = (err as { cause?: unknown }).cause
        if (cause instanceof ForeignKeyViolation && cause.constraint === constraintNames.foreignKey(def.table, parent.field)) {
          const parentPath = c.itemPath(p, parentId)
          throw problems.notFound(`No ${p.name} exists at ${parentPath}; create the ${p.name} before adding ${def.collection} to it.`, { instance: parentPath })
        }
        throw err
      }
    })
  }
}
