import { Type, type ObjectOptions, type TSchema } from '@sinclair/typebox'
import { Nullable, UpperSnakeEnum } from './types.js'

// Bulk request and response bodies (conventions: "Bulk request body", "Bulk response body").

export const BULK_ACTIONS = ['CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'] as const
export type BulkActionValue = typeof BULK_ACTIONS[number]

export const BulkAction = UpperSnakeEnum(BULK_ACTIONS)
export const TransactionMode = UpperSnakeEnum(['ATOMIC', 'ISOLATED'])
/** Overall outcome; never extended or filtered. */
export const BulkStatus = UpperSnakeEnum(['SUCCEEDED', 'FAILED', 'PARTIAL'])
/** Outcome of one operation. */
export const BulkOperationStatus = UpperSnakeEnum(['SUCCEEDED', 'FAILED'])

export const DEFAULT_MAX_OPERATIONS = 100

export interface BulkRequestOptions<A extends readonly BulkActionValue[]> extends ObjectOptions {
  /** Most operations in one request (conventions: "Limits", default 100). */
  maxOperations?: number
  /** The actions this endpoint supports, a subset of the four; the enum is never extended. */
  actions?: A
}

/** The body of `PATCH /<collection>`; `entity` is the collection's entity schema. */
export function BulkRequest<E extends TSchema, const A extends readonly BulkActionValue[] = typeof BULK_ACTIONS> (
  entity: E, options: BulkRequestOptions<A> = {}
) {
  const { maxOperations = DEFAULT_MAX_OPERATIONS, actions = BULK_ACTIONS as unknown as A, ...rest } = options
  if (!Number.isInteger(maxOperations) || maxOperations < 1) {
    throw new TypeError(`BulkRequest: maxOperations must be a positive integer, got ${String(maxOperations)}`)
  }
  // Checked through an untyped alias: Array.isArray would narrow `actions` to any[] and lose its literal type.
  const list: unknown = actions
  if (!Array.isArray(list) || list.length === 0 || new Set(list).size !== list.length ||
    list.some(a => !(BULK_ACTIONS as readonly unknown[]).includes(a))) {
    throw new TypeError(`BulkRequest: actions must be a non-empty subset of ${BULK_ACTIONS.join(', ')} without repeats, got ${String(actions)}`)
  }
  const operation = Type.Object({
    operationId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }), { description: 'Client-generated id used to match the result.' })),
    action: UpperSnakeEnum(actions),
    ifMatch: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }), { description: 'ETag for optimistic concurrency, as in If-Match.' })),
    entity
  }, { additionalProperties: false })
  return Type.Object({
    transactionMode: Type.Optional(UpperSnakeEnum(['ATOMIC', 'ISOLATED'], { default: 'ISOLATED' })),
    operations: Type.Array(operation, { minItems: 1, maxItems: maxOperations })
  }, { additionalProperties: false, ...rest })
}

const optionalText = Type.Optional(Nullable(Type.String({ maxLength: 1000 })))

/** A context item of a failed operation: `message` required, the rest string or null. */
export const BulkContextItem = Type.Object({
  message: Type.String({ minLength: 1, maxLength: 1000 }),
  code: optionalText,
  field: optionalText,
  value: optionalText
}, { additionalProperties: false })

export const BulkOperationResult = Type.Object({
  operationId: Type.String({ minLength: 1, maxLength: 255, description: "The request's operationId, else the zero-based index of the operation." }),
  action: BulkAction,
  entityId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  entityRef: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  result: Type.Object({
    status: BulkOperationStatus,
    detail: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    context: Type.Optional(Nullable(Type.Array(BulkContextItem)))
  }, { additionalProperties: false })
}, { additionalProperties: false })

/** The 200 body of a bulk request; not extensible. */
export const BulkResponse = Type.Object({
  status: BulkStatus,
  operations: Type.Array(BulkOperationResult)
}, { additionalProperties: false })
