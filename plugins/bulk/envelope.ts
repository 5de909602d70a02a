import { Type, type TObject } from '@sinclair/typebox'
import type { ErrorObject } from 'ajv'
import type { ContextItem } from '../../schemas/problem.js'
import { TransactionMode, type BulkActionValue } from '../../schemas/bulk.js'
import { Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { invalidData, type ProblemError } from '../problem/index.js'
import { contextFromAjv, ROOT_FIELD } from '../problem/index.js'

/** One operation of a bulk request as sent; its `entity` is checked per operation. */
export interface RawOperation {
  operationId?: string | null
  action: BulkActionValue
  ifMatch?: string | null
  /** A JSON object; what it holds is checked per operation. */
  entity: Record<string, unknown>
}

/** A bulk request body whose envelope is valid. */
export interface Envelope {
  transactionMode?: 'ATOMIC' | 'ISOLATED'
  operations: RawOperation[]
}

/**
 * What must hold for the request to be processed at all (conventions: "Bulk request body",
 * "Bulk errors"; reference service, Bulk): the same limits as `BulkRequest`, every operation
 * with an `action` and an `entity` object, but what the entity holds left open, so that an
 * entity breaking the entity's rules fails its own operation in the 200 response while a body
 * without the bulk request's shape is a 400 that applies nothing.
 */
export function envelopeSchema (maxOperations: number, actions: readonly BulkActionValue[]): TObject {
  return Type.Object({
    transactionMode: Type.Optional(TransactionMode),
    operations: Type.Array(Type.Object({
      operationId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
      action: UpperSnakeEnum(actions),
      ifMatch: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }))),
      entity: Type.Object({})
    }, { additionalProperties: false }), { minItems: 1, maxItems: maxOperations })
  }, { additionalProperties: false })
}

/**
 * The body as the envelope's U+0000 scan sees it: every operation without its `entity`, which
 * its own operation's validator scans, so a NUL there fails that operation alone. Paths to
 * the rest are those of the body.
 */
export function outsideEntities (body: unknown): unknown {
  const operations = (body as { operations?: unknown } | null)?.operations
  if (!Array.isArray(operations)) return body
  return {
    ...(body as object),
    operations: operations.map((op: unknown) => {
      if (typeof op !== 'object' || op === null || Array.isArray(op)) return op
      const { entity: _entity, ...rest } = op as Record<string, unknown>
      return rest
    })
  }
}

/**
 * The 400 of a request with more operations than its mode allows (conventions: Bulk
 * endpoint, "detail stating the maximum"); `asyncMax` names the larger limit of an
 * asynchronous request when the endpoint offers one and this request is not one.
 */
export function tooMany (n: number, max: number, asyncMax: number | null, items: ContextItem[] = [{ code: 'INPUT_MAX_VALUE', message: `must hold at most ${max} operations`, field: 'operations', source: 'body', value: String(n) }]): ProblemError {
  // Past what a job takes too, the way out is several jobs, not the one this request would be.
  const more = asyncMax === null || asyncMax <= max
    ? ''
    : n <= asyncMax
      ? `, or send it with Prefer: respond-async, which takes up to ${asyncMax} operations as a job`
      : `, or into jobs of up to ${asyncMax} operations each, sent with Prefer: respond-async`
  return invalidData(items, `A bulk request on this endpoint holds at most ${max} operations, and this one has ${n}; split it into several requests${more}.`)
}

/** The 400 of an envelope that fails its schema; the detail states the maximum when it was passed. */
export function envelopeProblem (errors: readonly ErrorObject[], body: unknown, maxOperations: number, asyncMax: number | null = null): ProblemError {
  const items: ContextItem[] = contextFromAjv(errors, 'body')
  // The body itself is not an object: its root is the field.
  for (const item of items) if (item.field === ROOT_FIELD) item.message = 'must be a JSON object with an operations array'
  const over = errors.some(e => e.keyword === 'maxItems' && e.instancePath === '/operations')
  if (!over) return invalidData(items)
  const n = ((body as Envelope).operations).length
  // The offending value of a list too long is its length, worded as `tooMany`'s own item is.
  for (const item of items) {
    if (item.field === 'operations' && item.code === 'INPUT_MAX_VALUE') Object.assign(item, { message: `must hold at most ${maxOperations} operations`, value: String(n) })
  }
  return tooMany(n, maxOperations, asyncMax, items)
}

function list (indexes: readonly number[]): string {
  return `${indexes.slice(0, -1).join(', ')} and ${String(indexes.at(-1))}`
}

/**
 * Conventions, "Bulk endpoint": the same entity `id` appears at most once in a request,
 * otherwise 400. The detail names each repeated id and the operations that carry it.
 */
export function duplicateIds (operations: readonly RawOperation[]): ProblemError | null {
  const seen = new Map<string, number[]>()
  operations.forEach((op, i) => {
    const id = op.entity.id
    if (typeof id !== 'string') return
    const at = seen.get(id)
    if (at === undefined) seen.set(id, [i])
    else at.push(i)
  })
  const repeated = [...seen].filter(([, at]) => at.length > 1)
  if (repeated.length === 0) return null
  const items: ContextItem[] = []
  for (const [id, at] of repeated) {
    for (const i of at.slice(1)) {
      items.push({ code: 'DUPLICATE_ID', message: `repeats the id of operations[${String(at[0])}]; an entity may appear once per bulk request`, field: `operations[${i}].entity.id`, source: 'body', value: id })
    }
  }
  const what = repeated.map(([id, at]) => `'${id}' appears in operations ${list(at)}`).join('; ')
  return invalidData(items, `The entity id ${what}; an entity may appear only once in a bulk request, so send one operation per id.`)
}
