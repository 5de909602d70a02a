import { STATUS_CODES } from 'node:http'
import type { ContextItem } from '../../schemas/problem.js'

/** Where a failed call went: for messages and logs (the query is left out, it may hold secrets). */
export interface CallTarget {
  method: string
  url: string
  /** Attempts made, the failed one included. */
  attempts: number
}

/** Every failure of a downstream call; `code` says which kind. */
export class DownstreamError extends Error {
  readonly code: string
  readonly method: string
  readonly url: string
  readonly attempts: number
  /**
   * This service's status when the error is left uncaught in a route: a 500, never the other
   * service's. Error handlers (the problem plugin's, Fastify's) read `statusCode` before `status`,
   * which is the other service's answer, and take a client status's `headers` along with it.
   */
  readonly statusCode = 500

  constructor (code: string, message: string, target: CallTarget, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'DownstreamError'
    this.code = code
    this.method = target.method
    this.url = target.url
    this.attempts = target.attempts
  }
}

/** What an error answer carries besides its status. */
export interface AnswerFacts {
  status: number
  headers: Record<string, string | string[] | undefined>
  bytes: Buffer
}

function header (headers: AnswerFacts['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * A 4xx or 5xx answer that is not a problem (a proxy's HTML page, an empty 502): its status,
 * the standard title of the status, and the answer's `X-Request-ID` when it sent one.
 */
export class DownstreamResponseError extends DownstreamError {
  readonly status: number
  readonly title: string
  readonly detail: string | undefined
  readonly type: string | undefined
  readonly instance: string | undefined
  readonly requestId: string | undefined
  readonly context: ContextItem[]
  readonly headers: AnswerFacts['headers']
  readonly bytes: Buffer

  constructor (answer: AnswerFacts, target: CallTarget, fields: { title?: string | undefined, detail?: string | undefined, type?: string | undefined, instance?: string | undefined, requestId?: string | undefined, context?: ContextItem[] } = {}, code = 'SVC_ERR_DOWNSTREAM_STATUS') {
    const title = fields.title ?? STATUS_CODES[answer.status] ?? 'Error'
    super(code, `${target.method} ${target.url} answered ${answer.status} ${title}${fields.detail === undefined ? '' : `: ${fields.detail}`}`, target)
    this.name = 'DownstreamResponseError'
    this.status = answer.status
    this.title = title
    this.detail = fields.detail
    this.type = fields.type
    this.instance = fields.instance
    this.requestId = fields.requestId ?? header(answer.headers, 'x-request-id')
    this.context = fields.context ?? []
    this.headers = answer.headers
    this.bytes = answer.bytes
  }
}

/** A 4xx or 5xx `application/problem+json` answer, its members typed (conventions: Errors). */
export class DownstreamProblemError extends DownstreamResponseError {
  constructor (answer: AnswerFacts, target: CallTarget, fields: { title: string | undefined, detail: string | undefined, type: string | undefined, instance: string | undefined, requestId: string | undefined, context: ContextItem[] }) {
    super(answer, target, fields, 'SVC_ERR_DOWNSTREAM_PROBLEM')
    this.name = 'DownstreamProblemError'
  }
}

/** No answer in time: `phase` `headers` (the status line and headers) or `body` (a pause between its parts). */
const WAITED = { headers: 'no answer', body: 'no further part of the body', total: 'not done' } as const

export class DownstreamTimeoutError extends DownstreamError {
  /** `headers`, `body`, or `total`: the whole call, retries included. */
  readonly phase: 'headers' | 'body' | 'total'
  readonly timeout: number

  constructor (phase: 'headers' | 'body' | 'total', timeout: number, target: CallTarget, cause: unknown) {
    super('SVC_ERR_DOWNSTREAM_TIMEOUT', `${target.method} ${target.url}: ${WAITED[phase]} within ${timeout} ms (timeouts.${phase})`, target, cause)
    this.name = 'DownstreamTimeoutError'
    this.phase = phase
    this.timeout = timeout
  }
}

/** The answer's body is larger than the cap; the connection is closed rather than read to its end. */
export class DownstreamTooLargeError extends DownstreamError {
  readonly limit: number
  /** The answer's status, whose body it was. */
  readonly status: number

  constructor (limit: number, target: CallTarget, status: number) {
    super('SVC_ERR_DOWNSTREAM_TOO_LARGE', `${target.method} ${target.url}: the answer's body (status ${status}) is larger than maxResponseBytes (${limit} bytes)`, target)
    this.name = 'DownstreamTooLargeError'
    this.limit = limit
    this.status = status
  }
}

/** A 1xx–3xx answer whose body says it is JSON (`application/json`, `…+json`) and does not parse. */
export class DownstreamInvalidJsonError extends DownstreamError {
  readonly status: number
  readonly headers: AnswerFacts['headers']
  readonly bytes: Buffer

  constructor (answer: AnswerFacts, type: string, target: CallTarget, cause: unknown) {
    super('SVC_ERR_DOWNSTREAM_INVALID_JSON', `${target.method} ${target.url} answered ${answer.status} with a ${type} body that is not JSON`, target, cause)
    this.name = 'DownstreamInvalidJsonError'
    this.status = answer.status
    this.headers = answer.headers
    this.bytes = answer.bytes
  }
}

/** The connection failed (refused, reset, closed before the answer, name not found). */
export class DownstreamConnectionError extends DownstreamError {
  /** The system's or undici's code: `ECONNREFUSED`, `ECONNRESET`, `UND_ERR_SOCKET`… */
  readonly reason: string

  constructor (reason: string, target: CallTarget, cause: unknown) {
    super('SVC_ERR_DOWNSTREAM_CONNECTION', `${target.method} ${target.url}: the connection failed (${reason})`, target, cause)
    this.name = 'DownstreamConnectionError'
    this.reason = reason
  }
}
