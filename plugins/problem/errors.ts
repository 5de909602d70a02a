import { STATUS_CODES } from 'node:http'
import type { ContextItem } from '../../schemas/problem.js'
import { shownValue } from '../shared/options.js'

/** Standard titles of the convention's "Common errors" table, by status. */
export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout'
}

export interface ProblemInit {
  /** Short noun phrase; defaults to the standard title of the status. */
  title?: string
  detail?: string
  instance?: string
  type?: string
  context?: ContextItem[]
  /** Response headers that belong to this problem (e.g. `Allow` on 405). */
  headers?: Record<string, string | number>
  /** Extension members written at the root of the problem body. */
  extensions?: Record<string, unknown>
  cause?: unknown
}

/**
 * The one typed way to refuse a request. Any hook, plugin or handler throws it;
 * only the problem plugin's error handler renders it.
 */
export class ProblemError extends Error {
  readonly statusCode: number
  readonly code: string
  readonly title: string
  readonly detail: string | undefined
  readonly instance: string | undefined
  readonly type: string | undefined
  readonly context: ContextItem[] | undefined
  readonly headers: Record<string, string | number> | undefined
  readonly extensions: Record<string, unknown> | undefined

  constructor (status: number, code: string, init: ProblemInit = {}) {
    const title = init.title ?? STATUS_TITLES[status] ?? STATUS_CODES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request')
    super(init.detail ?? title, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'ProblemError'
    this.statusCode = status
    this.code = code
    this.title = title
    this.detail = init.detail
    this.instance = init.instance
    this.type = init.type
    this.context = init.context
    this.headers = init.headers
    this.extensions = init.extensions
  }
}

/** Conventions, Errors 2: the problem body is never used with a status other than 4xx or 5xx. */
export function isErrorStatus (status: unknown): status is number {
  return Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599
}

export function isProblemError (err: unknown): err is ProblemError {
  return err instanceof ProblemError
}

type Factory = (detail?: string, init?: Omit<ProblemInit, 'detail'>) => ProblemError

/**
 * Registers a problem kind: a status, a stable code (`SVC_ERR_*`) and a title.
 * Returns a factory so call sites read `throw problems.notFound('...')`.
 */
export function defineProblem (status: number, code: string, title?: string): Factory {
  if (!isErrorStatus(status)) throw new TypeError(`defineProblem: status must be a 4xx or 5xx status, got ${shownValue(status)} (a problem is never the body of another status)`)
  return (detail, init = {}) => new ProblemError(status, code, { title, ...init, detail })
}

/** The registry of problems raised by the suite itself. */
export const problems = {
  badRequest: defineProblem(400, 'SVC_ERR_BAD_REQUEST', 'Bad Request'),
  invalidData: defineProblem(400, 'SVC_ERR_INVALID_DATA', 'Invalid Data'),
  malformedJson: defineProblem(400, 'SVC_ERR_MALFORMED_JSON', 'Bad Request'),
  unauthorized: defineProblem(401, 'SVC_ERR_UNAUTHORIZED', 'Unauthorized'),
  invalidRequest: defineProblem(401, 'SVC_ERR_INVALID_REQUEST', 'Invalid Request'),
  invalidToken: defineProblem(401, 'SVC_ERR_INVALID_TOKEN', 'Invalid Token'),
  forbidden: defineProblem(403, 'SVC_ERR_FORBIDDEN', 'Forbidden'),
  notFound: defineProblem(404, 'SVC_ERR_NOT_FOUND', 'Not Found'),
  methodNotAllowed: defineProblem(405, 'SVC_ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed'),
  notAcceptable: defineProblem(406, 'SVC_ERR_NOT_ACCEPTABLE', 'Not Acceptable'),
  conflict: defineProblem(409, 'SVC_ERR_CONFLICT', 'Conflict'),
  preconditionFailed: defineProblem(412, 'SVC_ERR_PRECONDITION_FAILED', 'Precondition Failed'),
  contentTooLarge: defineProblem(413, 'SVC_ERR_CONTENT_TOO_LARGE', 'Content Too Large'),
  unsupportedMediaType: defineProblem(415, 'SVC_ERR_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type'),
  preconditionRequired: defineProblem(428, 'SVC_ERR_PRECONDITION_REQUIRED', 'Precondition Required'),
  tooManyRequests: defineProblem(429, 'SVC_ERR_TOO_MANY_REQUESTS', 'Too Many Requests'),
  internal: defineProblem(500, 'SVC_ERR_INTERNAL', 'Internal Server Error'),
  unavailable: defineProblem(503, 'SVC_ERR_UNAVAILABLE', 'Service Unavailable')
} as const

// The last name of a field that holds a credential (`access_token`, RFC 6750 §2.3, `password`,
// `clientSecret`, `x-api-key`), after any `.parent` and `[index]`.
const CREDENTIAL_FIELD = /(?:token|secret|password|passwd|passphrase|api[-_]?key|credential)s?(?:\[\d+\])*$/i

/** Whether `field` names a credential, whose value an answer never shows (a log or a proxy keeps answers). */
export function isCredentialField (field: string): boolean {
  return CREDENTIAL_FIELD.test(field)
}

/**
 * Builds one `INPUT_*` context item; `value` is kept cut to 200 characters, and never for a
 * field that names a credential.
 */
export function contextItem (item: ContextItem): ContextItem {
  const out: ContextItem = { message: item.message }
  if (item.code !== undefined) out.code = item.code
  if (item.field !== undefined) out.field = item.field
  if (item.source !== undefined) out.source = item.source
  if (item.value !== undefined && (item.field === undefined || !isCredentialField(item.field))) {
    out.value = item.value.length > 200 ? item.value.slice(0, 200) + '…' : item.value
  }
  return out
}

/**
 * Most context items one problem, or one bulk operation's result, lists: a body of thousands of
 * bad values gets an answer no larger than itself, not one many times its size that takes
 * seconds to write.
 */
export const MAX_CONTEXT_ITEMS = 100

/** "The request has 3 invalid values; see context for each one.", or which ones context lists when it lists only the first `listed`. */
export function invalidDetail (n: number, subject = 'The request', listed = MAX_CONTEXT_ITEMS): string {
  const each = n > listed ? `context lists the first ${listed}` : 'see context for each one'
  return `${subject} has ${n} invalid ${n === 1 ? 'value' : 'values'}; ${each}.`
}

/** A 400 "Invalid Data" problem for one or more violations, listing at most MAX_CONTEXT_ITEMS. */
export function invalidData (items: readonly ContextItem[], detail?: string): ProblemError {
  const n = items.length
  const more = n > MAX_CONTEXT_ITEMS ? ` Context lists the first ${MAX_CONTEXT_ITEMS} of the ${n}.` : ''
  return problems.invalidData(
    detail === undefined ? invalidDetail(n) : detail + more,
    { context: items.slice(0, MAX_CONTEXT_ITEMS).map(contextItem) }
  )
}
