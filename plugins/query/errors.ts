import type { ContextItem } from '../../schemas/problem.js'

/** Context code of every query error (conventions: "Validation context codes"). */
export type QueryErrorCode = 'INPUT_INVALID'

/** Finer, machine-readable cause, for logs and tests; the response shows `code` only. */
export type QueryErrorReason =
  | 'syntax' // malformed FIQL
  | 'operator' // unknown operator, or an operator that does not fit the field
  | 'field' // unknown or not filterable/sortable attribute
  | 'value' // value not of the field's type
  | 'limit' // expression length, nesting, list size or comparison count exceeded
  | 'combination' // parameters that cannot be used together or repeated
  | 'cursor-invalid' // tampered, truncated or foreign cursor
  | 'cursor-mismatch' // genuine cursor of another filter, ordering or collection

/**
 * A refused collection query. Pure (no HTTP): the query plugin turns it into a 400
 * "Invalid Data" problem with one context item naming the parameter.
 */
export class QueryError extends Error {
  readonly code: QueryErrorCode = 'INPUT_INVALID'
  readonly reason: QueryErrorReason
  /** The query parameter at fault (`filter`, `nameFilter`, `status`, `ordering`, `cursor` …). */
  readonly parameter: string
  /** Zero-based offset in the parameter's value, for syntax errors. */
  readonly position: number | undefined
  /** The offending value or fragment. */
  readonly value: string | undefined

  constructor (reason: QueryErrorReason, parameter: string, message: string, position?: number, value?: string) {
    super(message)
    this.name = 'QueryError'
    this.reason = reason
    this.parameter = parameter
    this.position = position
    this.value = value
  }
}

export function isQueryError (err: unknown): err is QueryError {
  return err instanceof QueryError
}

/** The context item of a query error; `source` is `body` for POST searches. */
export function toContextItem (err: QueryError, source: 'query' | 'body' = 'query'): ContextItem {
  const item: ContextItem = { code: err.code, message: err.message, field: err.parameter, source }
  if (err.value !== undefined) item.value = err.value
  return item
}
