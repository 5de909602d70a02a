import { randomUUID } from 'node:crypto'
import { Type, type TSchema } from '@sinclair/typebox'
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { BulkActionValue } from '../../schemas/bulk.js'
import type { ContextItem } from '../../schemas/problem.js'
import { Id } from '../../schemas/types.js'
import { parseEntityTags } from '../conditional/index.js'
import { contextFromAjv, invalidDetail } from '../problem/index.js'
import type { ResourceDefinition } from '../resource/index.js'
import { compileBodyValidator, repeatedSubCollectionKeys } from '../resource/internal.js'
import type { RawOperation } from './envelope.js'
import { failed, preconditionRequired, type Operation } from './outcome.js'

/** The per-operation checks of one resource, compiled once at registration. */
export interface Validators {
  /** CREATE: a POST body (the server assigns the id). */
  create: ValidateFunction
  /** UPDATE and CREATE_UPDATE: a PUT body with its `id`. */
  replace: ValidateFunction
  /** DELETE: only `id` is read; the rest of the entity is not looked at. */
  remove: ValidateFunction
  id: ValidateFunction
}

/**
 * The entity each action reads, as its operation is checked (and as the document shows it):
 * CREATE a POST body (the server assigns the id), UPDATE and CREATE_UPDATE a PUT body with
 * its `id`, DELETE only `id` (the rest of the entity is not looked at).
 */
export function actionEntities (def: ResourceDefinition): Readonly<Record<BulkActionValue, TSchema>> {
  const { create, replace: put } = def.api.bodies
  const replace = { ...put, required: [...(put.required as string[]), 'id'] } as unknown as TSchema
  return { CREATE: create, UPDATE: replace, CREATE_UPDATE: replace, DELETE: Type.Object({ id: Id() }) }
}

export function compileValidators (def: ResourceDefinition): Validators {
  const entities = actionEntities(def)
  return {
    create: compileBodyValidator(entities.CREATE),
    replace: compileBodyValidator(entities.UPDATE),
    remove: compileBodyValidator(entities.DELETE),
    id: compileBodyValidator(Id())
  }
}

/** The entity's violations, read-only fields named as such (as the single-item routes do). */
function entityItems (def: ResourceDefinition, errors: readonly ErrorObject[], prefix: string): ContextItem[] {
  const items = contextFromAjv(errors, 'body', prefix)
  for (const item of items) {
    if (item.message !== 'is not allowed here') continue
    const field = (item.field as string).slice(prefix.length + 1)
    if (field === 'id') item.message = 'is assigned by the server on CREATE; leave it out, or use CREATE_UPDATE to create an entity with this id'
    else if (def.api.readOnly.has(field)) item.message = 'is read-only; leave it out of the entity'
  }
  return items
}

/**
 * Checks one operation without the database: its ifMatch, its entity against the schema
 * of its action, and a required ifMatch. A failure decides its outcome here; otherwise the
 * operation leaves with its id (a new one for CREATE) and the entity's values, for the
 * resource's write path.
 */
export function prepare (def: ResourceDefinition, v: Validators, raw: RawOperation, index: number): Operation {
  const op: Operation = {
    index,
    operationId: raw.operationId ?? String(index),
    action: raw.action,
    id: null,
    ifMatch: null,
    ifMatchText: raw.ifMatch ?? null,
    values: {},
    outcome: null
  }
  const prefix = `operations[${index}].entity`
  const items: ContextItem[] = []
  if (op.ifMatchText !== null) {
    op.ifMatch = parseEntityTags(op.ifMatchText)
    if (op.ifMatch === null) {
      items.push({ code: 'INPUT_INVALID', message: 'must be * or a comma-separated list of entity tags such as "abc", as the ETag header gives them', field: `operations[${index}].ifMatch`, value: op.ifMatchText })
    }
  }
  // An object: the envelope's check saw to it.
  const entity = raw.entity
  const validate = raw.action === 'CREATE' ? v.create : raw.action === 'DELETE' ? v.remove : v.replace
  // Not pushed by spreading: an entity of a hundred thousand bad values is more arguments than a call takes.
  const valid = validate(entity)
  let invalid = valid ? items : items.concat(entityItems(def, validate.errors as ErrorObject[], prefix))
  // Once the entity passed its schema: its sub-collections' keys, each once, as on the item
  // routes (a DELETE's entity is not looked at beyond its id).
  if (valid && raw.action !== 'DELETE') invalid = invalid.concat(repeatedSubCollectionKeys(def, entity, `${prefix}.`))
  // The id is echoed in the result whenever it is a valid one, also when the rest is not.
  if (raw.action !== 'CREATE' && v.id(entity.id)) op.id = entity.id as string
  if (invalid.length > 0) {
    op.outcome = failed(invalidDetail(invalid.length, 'The operation'), invalid)
    return op
  }
  // Method rules 13 as on the item routes: checked before anything is read.
  if (def.api.requireIfMatch && op.ifMatch === null && (op.action === 'UPDATE' || op.action === 'DELETE')) {
    op.outcome = preconditionRequired(def, op)
    return op
  }
  if (op.action === 'CREATE') op.id = randomUUID()
  if (op.action !== 'DELETE') {
    const { id: _id, ...values } = entity
    op.values = values
  }
  return op
}
