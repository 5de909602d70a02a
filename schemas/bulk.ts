import { Type, type ObjectOptions, type TSchema, type TString } from '@sinclair/typebox'
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

/**
 * `ifMatch` as an operation may send it: `*` or a comma-separated list of entity tags
 * (`"abc"`, `W/"abc"`), with optional whitespace and empty list elements, as the
 * `If-Match` header is parsed (plugins/conditional/entity-tags.ts, RFC 9110 §13.1.1).
 */
export const ENTITY_TAGS_PATTERN = '^[ \\t]*(?:\\*|[, \\t]*(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"(?:[ \\t]*,[, \\t]*(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*")*[, \\t]*)[ \\t]*$'

function checkActions (builder: string, actions: unknown): void {
  if (!Array.isArray(actions) || actions.length === 0 || new Set(actions).size !== actions.length ||
    actions.some(a => !(BULK_ACTIONS as readonly unknown[]).includes(a))) {
    throw new TypeError(`${builder}: actions must be a non-empty subset of ${BULK_ACTIONS.join(', ')} without repeats, got ${String(actions)}`)
  }
}

const ifMatchText = (): TString => Type.String({ minLength: 1, maxLength: 1024, pattern: ENTITY_TAGS_PATTERN })
const optionalIfMatch = () => Type.Optional(Nullable(ifMatchText(), { description: 'ETag for optimistic concurrency, as in If-Match.' }))

function operationOf<E extends TSchema, const A extends readonly BulkActionValue[], I extends TSchema> (builder: string, entity: E, actions: A, ifMatch: I, options: ObjectOptions) {
  // Checked through an untyped alias: Array.isArray would narrow `actions` to any[] and lose its literal type.
  checkActions(builder, actions as unknown)
  return Type.Object({
    operationId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }), { description: 'Client-generated id used to match the result.' })),
    action: UpperSnakeEnum(actions),
    ifMatch,
    entity
  }, { additionalProperties: false, ...options })
}

export interface BulkOperationOptions<A extends readonly BulkActionValue[]> extends ObjectOptions {
  /** The actions of this shape, a subset of the four; the enum is never extended. Default all four. */
  actions?: A
  /** Whether `ifMatch` is required (UPDATE and DELETE of a resource that requires If-Match). Default false. */
  ifMatchRequired?: boolean
}

/**
 * One operation of a bulk request whose `action` is one of `actions` and whose `entity` is
 * `entity`. An endpoint whose actions read different entities (DELETE reads only `id`) is
 * described by a `Type.Union` of several, one per shape, given to `BulkRequestOf`.
 */
export function BulkOperation<E extends TSchema, const A extends readonly BulkActionValue[] = typeof BULK_ACTIONS> (
  entity: E, options: BulkOperationOptions<A> = {}
) {
  const { actions = BULK_ACTIONS as unknown as A, ifMatchRequired = false, ...rest } = options
  if (!ifMatchRequired) return operationOf('BulkOperation', entity, actions, optionalIfMatch(), rest)
  return operationOf('BulkOperation', entity, actions, Type.String({ ...ifMatchText(), description: 'The ETag of the entity, required for this action; checked as If-Match.' }), rest)
}

export interface BulkRequestOptions extends ObjectOptions {
  /** Most operations in one request (conventions: "Limits", default 100). */
  maxOperations?: number
}

/** The body of `PATCH /<collection>` around an operation schema: a `BulkOperation`, or a union of them. */
export function BulkRequestOf<O extends TSchema> (operation: O, options: BulkRequestOptions = {}) {
  const { maxOperations = DEFAULT_MAX_OPERATIONS, ...rest } = options
  if (!Number.isInteger(maxOperations) || maxOperations < 1) {
    throw new TypeError(`BulkRequest: maxOperations must be a positive integer, got ${String(maxOperations)}`)
  }
  return Type.Object({
    transactionMode: Type.Optional(UpperSnakeEnum(['ATOMIC', 'ISOLATED'], { default: 'ISOLATED' })),
    operations: Type.Array(operation, { minItems: 1, maxItems: maxOperations })
  }, { additionalProperties: false, ...rest })
}

/** The body of `PATCH /<collection>` whose every action sends `entity`, the collection's entity schema. */
export function BulkRequest<E extends TSchema, const A extends readonly BulkActionValue[] = typeof BULK_ACTIONS> (
  entity: E, options: BulkRequestOptions & { actions?: A } = {}
) {
  const { actions = BULK_ACTIONS as unknown as A, ...rest } = options
  return BulkRequestOf(operationOf('BulkRequest', entity, actions, optionalIfMatch(), {}), rest)
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
