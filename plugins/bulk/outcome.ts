import type { Static } from '@sinclair/typebox'
import type { BulkActionValue, BulkContextItem } from '../../schemas/bulk.js'
import type { ContextItem } from '../../schemas/problem.js'
import type { StoreError } from '../../store/errors.js'
import type { EntityTagList } from '../conditional/index.js'
import { contextItem, MAX_CONTEXT_ITEMS, type ProblemError } from '../problem/index.js'
import type { Failure, Registry, ResourceDefinition, WriteResult } from '../resource/index.js'
import { storeProblem } from '../resource/internal.js'
import { withArticle } from '../shared/article.js'

type Row = Record<string, unknown>
export type BulkItem = Static<typeof BulkContextItem>

/** The `result` of one operation (conventions: "Bulk response body"). */
export interface Outcome {
  status: 'SUCCEEDED' | 'FAILED'
  detail: string | null
  context: BulkItem[] | null
}

/** One operation on its way through the request; `outcome` is set once it is decided. */
export interface Operation {
  index: number
  /** The request's operationId, else the zero-based index as a string. */
  operationId: string
  action: BulkActionValue
  /** The entity the operation names (a new UUID for CREATE), or null when the entity gives no valid id. */
  id: string | null
  ifMatch: EntityTagList | null
  /** `ifMatch` as sent, for context items. */
  ifMatchText: string | null
  /** The entity's fields as sent, without its id. */
  values: Row
  outcome: Outcome | null
}

export function succeeded (detail: string | null = null): Outcome {
  return { status: 'SUCCEEDED', detail, context: null }
}

/** A failure with the convention's context items (`source` belongs to problems, not to bulk results), at most MAX_CONTEXT_ITEMS. */
export function failed (detail: string, items: readonly ContextItem[]): Outcome {
  const context = items.slice(0, MAX_CONTEXT_ITEMS).map((i) => {
    const { source: _source, ...item } = contextItem(i)
    return item
  })
  return { status: 'FAILED', detail, context }
}

const entityField = (op: Operation): string => `operations[${op.index}].entity`
const ifMatchField = (op: Operation): string => `operations[${op.index}].ifMatch`

export function notFound (def: ResourceDefinition, op: Operation): Outcome {
  const id = op.id as string
  return failed(`No ${def.name} has the id ${id}; UPDATE only replaces an existing one (CREATE_UPDATE creates it).`, [
    { code: 'ENTITY_NOT_FOUND', message: `must name an existing ${def.name}`, field: `${entityField(op)}.id`, value: id }
  ])
}

/** The entity is soft-deleted (as 409): it must be restored before it changes. */
export function deleted (def: ResourceDefinition, op: Operation): Outcome {
  const id = op.id as string
  return failed(`The ${def.name} ${id} is deleted; restore it (POST ${def.itemPath(id)}/restore) before changing it.`, [
    { code: 'ENTITY_DELETED', message: `must name ${withArticle(def.name)} that is not deleted`, field: `${entityField(op)}.id`, value: id }
  ])
}

/** Conventions, Method rules 13, per operation: a missing required ifMatch (as 428). */
export function preconditionRequired (def: ResourceDefinition, op: Operation): Outcome {
  return failed(`${op.action} of ${withArticle(def.name)} requires ifMatch; GET ${def.itemPath(op.id as string)} and send its ETag in ifMatch.`, [
    { code: 'PRECONDITION_REQUIRED', message: 'is required for this action', field: ifMatchField(op) }
  ])
}

/** Conventions, Method rules 13, per operation: ifMatch does not match (as 412). */
export function preconditionFailed (def: ResourceDefinition, op: Operation, exists: boolean): Outcome {
  const path = def.itemPath(op.id as string)
  const detail = exists
    ? `ifMatch does not match the current ETag of ${path}; GET it again and retry with its ETag.`
    : `ifMatch was given, but no ${def.name} has the id ${op.id as string}; leave ifMatch out to create it.`
  return failed(detail, [
    { code: 'PRECONDITION_FAILED', message: exists ? 'does not match the current ETag' : 'cannot match an entity that does not exist', field: ifMatchField(op), value: op.ifMatchText as string }
  ])
}

/**
 * An operation as a detail names it: zero-based like the context items' fields (`operations[2]`),
 * with the client's operationId when it sent one (otherwise the index is the operationId).
 */
export function operationName (op: Pick<Operation, 'index' | 'operationId'>): string {
  const name = `operations[${op.index}]`
  return op.operationId === String(op.index) ? name : `${name} (operationId ${JSON.stringify(op.operationId)})`
}

/** ATOMIC: an operation that was not applied because others failed. */
export function rolledBack (failures: readonly Operation[]): Outcome {
  const names = failures.map(operationName)
  const which = names.length === 1 ? names[0] as string : `${names.slice(0, -1).join(', ')} and ${names.at(-1) as string}`
  return failed(`Not applied: the ATOMIC bulk request was rolled back because ${which} failed.`, [
    { code: 'ROLLED_BACK', message: `was not applied because ${which} failed` }
  ])
}

// Conflicts the resource layer reports without a field: the entity itself is named.
const BY_STORE_CODE: Record<string, { code: string, message: string }> = {
  STORE_UNIQUE_VIOLATION: { code: 'ENTITY_EXISTS', message: 'is already the id of another entity' },
  STORE_FOREIGN_KEY_VIOLATION: { code: 'ENTITY_REFERENCED', message: 'is still referred to by other entities' }
}

/**
 * A statement of one operation broke a constraint (Method rules 7: unique, reference,
 * children blocking a delete): that operation fails with the single-item routes' detail and
 * context, fields placed under `operations[i].entity`. (A system failure never gets here: the
 * write path throws it, and it is a 5xx, never a failed operation.)
 */
export function storeFailure (err: unknown, def: ResourceDefinition, op: Operation, values: Row, registry: Registry): Outcome {
  const problem = storeProblem(err, def, op.action === 'DELETE' ? 'delete' : 'write', op.id as string, values, registry) as ProblemError
  const detail = problem.detail as string
  if (problem.context !== undefined) {
    return failed(detail, problem.context.map(i => ({ ...i, field: `${entityField(op)}.${i.field as string}` })))
  }
  const generic = BY_STORE_CODE[(err as StoreError).code] as { code: string, message: string }
  return failed(detail, [{ ...generic, field: `${entityField(op)}.id`, value: op.id as string }])
}

/** The outcome of an operation the resource's write path ran (`result`), in the bulk response's words. */
export function outcomeOf (def: ResourceDefinition, op: Operation, result: WriteResult, registry: Registry): Outcome {
  const failure: Failure | null = result.failure
  if (failure === null) {
    // As DELETE on an item: deleting what does not exist succeeds (Method rules 10).
    return op.action === 'DELETE' && result.row === null ? succeeded(`No ${def.name} had this id, or it was deleted already; there was nothing to delete.`) : succeeded()
  }
  switch (failure.kind) {
    case 'not-found': return notFound(def, op)
    case 'precondition-failed': return preconditionFailed(def, op, failure.exists)
    case 'precondition-required': return preconditionRequired(def, op)
    case 'conflict': return storeFailure(failure.error, def, op, result.values, registry)
    case 'deleted': return deleted(def, op)
    // A bulk operation is never a patch nor a transition: every entity is checked whole before it is written.
    /* c8 ignore next 3 */
    case 'invalid':
    case 'invalid-transition':
      throw new TypeError(`bulk: the write path answered ${failure.kind} to a ${op.action}`)
  }
}
