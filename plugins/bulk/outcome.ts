import type { Static } from '@sinclair/typebox'
import type { BulkActionValue, BulkContextItem } from '../../schemas/bulk.js'
import type { ContextItem } from '../../schemas/problem.js'
import type { StoreError } from '../../store/errors.js'
import type { EntityTagList } from '../conditional/entity-tags.js'
import { contextItem, isProblemError } from '../problem/errors.js'
import type { ResourceDefinition } from '../resource/define.js'
import { storeProblem, type Registry } from '../resource/errors.js'
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
  /** The entity the operation names (a new UUID for CREATE, set when it is attempted), or null. */
  id: string | null
  ifMatch: EntityTagList | null
  /** `ifMatch` as sent, for context items. */
  ifMatchText: string | null
  /** The stored fields of a write, defaults and nulls filled. */
  values: Row
  outcome: Outcome | null
}

export function succeeded (detail: string | null = null): Outcome {
  return { status: 'SUCCEEDED', detail, context: null }
}

/** A failure with the convention's context items (`source` belongs to problems, not to bulk results). */
export function failed (detail: string, items: readonly ContextItem[]): Outcome {
  const context = items.map((i) => {
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

/** ATOMIC: an operation that was not applied because others failed. */
export function rolledBack (failures: readonly number[]): Outcome {
  const which = failures.length === 1
    ? `operation ${String(failures[0])}`
    : `operations ${failures.slice(0, -1).join(', ')} and ${String(failures.at(-1))}`
  return failed(`Not applied: the ATOMIC bulk request was rolled back because ${which} failed.`, [
    { code: 'ROLLED_BACK', message: `was not applied because ${which} failed` }
  ])
}

// Conflicts the resource layer reports without a field: the entity itself is named.
const BY_STORE_CODE: Record<string, { code: string, message: string }> = {
  STORE_UNIQUE_VIOLATION: { code: 'ENTITY_EXISTS', message: 'is already the id of another entity' },
  STORE_FOREIGN_KEY_VIOLATION: { code: 'ENTITY_REFERENCED', message: 'is still referred to by other entities' },
  STORE_SERIALIZATION_FAILURE: { code: 'CONCURRENT_UPDATE', message: 'was changed by a concurrent request; retry' }
}

/**
 * A statement of one operation failed: a constraint (Method rules 7: unique, reference,
 * children blocking a delete) fails that operation with the single-item routes' detail and
 * context, fields placed under `operations[i].entity`. A system failure (unavailable
 * database, anything unexpected) is thrown: it is a 5xx, never a failed operation.
 */
export function storeFailure (err: unknown, def: ResourceDefinition, op: Operation, registry: Registry): Outcome {
  const problem = storeProblem(err, def, op.action === 'DELETE' ? 'delete' : 'write', op.id as string, op.values, registry)
  if (!isProblemError(problem) || problem.statusCode >= 500) throw problem
  const detail = problem.detail as string
  if (problem.context !== undefined) {
    return failed(detail, problem.context.map(i => ({ ...i, field: `${entityField(op)}.${i.field as string}` })))
  }
  const generic = BY_STORE_CODE[(err as StoreError).code] as { code: string, message: string }
  return failed(detail, [{ ...generic, field: `${entityField(op)}.id`, value: op.id as string }])
}
