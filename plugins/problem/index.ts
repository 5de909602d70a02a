import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'
import { PROBLEM_MEDIA_TYPE, type ContextItem, type Problem } from '../../schemas/problem.js'
import { ProblemError, invalidData, isErrorStatus, isProblemError, problems } from './errors.js'
import { validationItems } from './later-parts.js'
import { pathOf } from '../shared/url.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { once } from '../shared/dependencies.js'
import { answerTunnelRequest, lingerOnClose } from './connection.js'
import { unmatchedProblem } from './unmatched.js'
import { UNAVAILABLE, UNEXPECTED, UNEXPLAINED, clientLine, guardErrorBodies } from './error-bodies.js'
import { DEFAULT_REQUEST_ID_HEADER, MAX_REQUEST_ID_LENGTH, idsAreRequestIds, recordRequestIdSettings, repeatedHeader, requestIdGenerator, requestIdRule, sentRequestIdOf } from './request-id.js'

export interface ProblemPluginOptions {
  /** Header carrying the caller's correlation id; echoed when sent. Default `x-request-id`. */
  requestIdHeader?: string
  /** Generates a request id when none is sent (e.g. `(request) => request.id`). Default: a random UUID. */
  generateRequestId?: (request: FastifyRequest) => string
  /** Longest accepted `X-Request-ID`; a longer one is refused (400). Default 200. */
  maxRequestIdLength?: number
  /**
   * Whether the plugin sets the context's not-found handler (404 problems). `false` leaves it
   * to the application, which has one of its own. Default true.
   */
  notFound?: boolean
  /**
   * Whether a 4xx or 5xx a handler answered with a body of its own (`reply.code(400).send({ … })`)
   * is sent as a problem of its status instead, as the convention has every error. `false`
   * sends such bodies as they are. Default true.
   */
  replaceErrorBodies?: boolean
}

const OPTION_KEYS: OptionKeys<ProblemPluginOptions> = { requestIdHeader: true, generateRequestId: true, maxRequestIdLength: true, notFound: true, replaceErrorBodies: true }

// RFC 9110 §5.1: a header name is a token.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

// Where a request keeps its id once sent or generated; null until then.
const kRequestId = Symbol('svc-problem.requestId')

declare module 'fastify' {
  interface FastifyRequest {
    /** The convention's `requestId`: the `X-Request-ID` value, else a generated UUID. */
    requestId: string
    [kRequestId]: string | null
  }
}

const defaults = {
  requestIdHeader: DEFAULT_REQUEST_ID_HEADER,
  generateRequestId: (_request: FastifyRequest): string => randomUUID(),
  maxRequestIdLength: MAX_REQUEST_ID_LENGTH,
  notFound: true,
  replaceErrorBodies: true
}

/** Fastify's own client-error codes that map to a specific problem. */
const FASTIFY_CODES: Record<string, (err: FastifyError) => ProblemError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => problems.contentTooLarge('The request body is larger than this endpoint accepts; send a smaller body.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => problems.unsupportedMediaType('The request Content-Type is not supported by this endpoint; send application/json.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => problems.badRequest('The Content-Length header does not match the body that was sent.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => problems.malformedJson('The body is not valid JSON; correct its syntax and retry.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => problems.malformedJson('The body is empty although Content-Type is application/json; send a JSON document, or leave Content-Type out of a request that has no body.'),
  FST_ERR_CTP_INVALID_TYPE: () => problems.badRequest('The Content-Type header is not a valid media type.'),
  FST_ERR_BAD_URL: () => problems.badRequest('The request URL is not valid.')
}

function toProblemError (err: FastifyError & { validation?: ErrorObject[], validationContext?: string }, request: FastifyRequest): ProblemError | undefined {
  // One built with another status is a mistake of the code that threw it: an unexpected fault.
  if (isProblemError(err)) return isErrorStatus(err.statusCode) ? err : undefined
  if (Array.isArray(err.validation)) {
    const part = err.validationContext ?? 'body'
    const items = validationItems(request, err.validation, part)
    return invalidData(items)
  }
  const mapped = err.code !== undefined ? FASTIFY_CODES[err.code] : undefined
  if (mapped !== undefined) return mapped(err)
  // JSON parse errors (secure-json-parse) arrive as SyntaxError with statusCode 400.
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return problems.malformedJson('The body is not valid JSON; correct its syntax and retry.')
  }
  return undefined
}

function render (request: FastifyRequest, reply: FastifyReply, pe: ProblemError): string {
  const body: Problem = { title: pe.title, status: pe.statusCode, requestId: request.requestId }
  if (pe.detail !== undefined) body.detail = pe.detail
  if (pe.instance !== undefined) body.instance = pe.instance
  if (pe.type !== undefined) body.type = pe.type
  if (pe.context !== undefined && pe.context.length > 0) body.context = pe.context
  if (pe.extensions !== undefined) {
    for (const [k, v] of Object.entries(pe.extensions)) if (!(k in body) && v !== null && v !== undefined) (body as Record<string, unknown>)[k] = v
  }
  if (pe.headers !== undefined) reply.headers(pe.headers)
  // Method rules 12: an OPTIONS answer, a refusal too, is not for caches.
  if (request.method === 'OPTIONS') reply.header('cache-control', 'no-store')
  reply.code(pe.statusCode).type(PROBLEM_MEDIA_TYPE)
  // Serialized here, not by the route's response schema: a route's 4xx schema must never trim a problem.
  return JSON.stringify(body)
}

async function problemPlugin (fastify: FastifyInstance, opts: ProblemPluginOptions): Promise<void> {
  refuseUnknownOptions('problem', opts, OPTION_KEYS)
  const header: unknown = opts.requestIdHeader ?? defaults.requestIdHeader
  if (typeof header !== 'string' || !HEADER_NAME.test(header)) throw new TypeError(`problem plugin: requestIdHeader must be a header name such as "x-request-id", got ${JSON.stringify(header)}`)
  const headerName = header.toLowerCase()
  const maxLength = opts.maxRequestIdLength ?? defaults.maxRequestIdLength
  if (!Number.isInteger(maxLength) || maxLength < 1) throw new TypeError(`problem plugin: maxRequestIdLength must be a positive integer, got ${shownValue(maxLength)}`)
  const notFound = opts.notFound ?? defaults.notFound
  if (typeof notFound !== 'boolean') throw new TypeError(`problem plugin: notFound must be a boolean, got ${JSON.stringify(notFound)}`)
  const replaceErrorBodies = opts.replaceErrorBodies ?? defaults.replaceErrorBodies
  if (typeof replaceErrorBodies !== 'boolean') throw new TypeError(`problem plugin: replaceErrorBodies must be a boolean, got ${shownValue(replaceErrorBodies)}`)
  const settings = { header: headerName, maxLength }
  recordRequestIdSettings(fastify, settings)
  // With problemServerOptions, request.id (the log's reqId) is the requestId already: the
  // server's generator is replaced by one with this plugin's header and length.
  const fromServer = idsAreRequestIds(fastify)
  if (fromServer) fastify.setGenReqId(requestIdGenerator(settings))
  const generate = opts.generateRequestId ?? (fromServer ? (request: FastifyRequest) => request.id : defaults.generateRequestId)
  if (typeof generate !== 'function') throw new TypeError('problem plugin: generateRequestId must be a function')

  // Generated on first read, so it is there whenever it is read: also in an error raised by
  // a hook that runs before this plugin's own, and in a log line of any hook.
  // Guarded: a context registered below another one inherits it.
  if (!fastify.hasRequestDecorator(kRequestId)) fastify.decorateRequest(kRequestId, null)
  fastify.decorateRequest('requestId', {
    getter (this: FastifyRequest): string {
      let id = this[kRequestId]
      if (id === null) {
        id = generate(this)
        this[kRequestId] = id
      }
      return id
    },
    setter (this: FastifyRequest, value: string): void {
      this[kRequestId] = value
    }
  })

  // A sent id that cannot be used as it is (conventions: "its value becomes requestId") is
  // refused rather than replaced unseen; the refusal carries a generated id and echoes nothing.
  const field = opts.requestIdHeader ?? 'X-Request-ID'
  const refused: ContextItem = { code: 'INPUT_INVALID', message: requestIdRule(maxLength), field, source: 'header' }
  const repeated: ContextItem = { code: 'INPUT_INVALID', message: 'must be sent once: the header came more than once', field, source: 'header' }
  fastify.addHook('onRequest', async function requestIdHook (request, reply) {
    const value = request.headers[headerName]
    if (value === undefined) return
    // With the server's generator (same header and length), request.id is the sent id exactly
    // when it was usable: checked there once already.
    const sent = fromServer ? (request.id === value ? value : undefined) : sentRequestIdOf(request.raw, headerName, maxLength)
    if (sent === undefined) throw invalidData([repeatedHeader(request.raw.rawHeaders, headerName) ? repeated : refused])
    request.requestId = sent
    reply.header(headerName, sent)
  })

  // Node answers an Expect other than 100-continue with an empty 417 unless someone listens;
  // RFC 9110 §10.1.1 lets a server ignore an expectation it does not support, and 417 is not
  // among the convention's codes: the request is served as if it had no Expect.
  const server = fastify.server
  if (server.listenerCount('checkExpectation') === 0) {
    server.on('checkExpectation', (req, res) => { server.emit('request', req, res) })
  }
  // Node hands a CONNECT request to 'connect' listeners and, without one, destroys the socket:
  // the client gets no answer at all. It is served like any other request instead (a 405
  // with Allow from the methods plugin, or a 404 or 400 problem), then the connection closes.
  if (server.listenerCount('connect') === 0) server.on('connect', answerTunnelRequest(server))

  if (notFound) {
    // An authority (CONNECT host:port) or `*` where the method wants none: no path to look up (400).
    setHandler('notFound', () => fastify.setNotFoundHandler(async (request) => { throw unmatchedProblem(pathOf(request.url)) }))
  }

  guardErrorBodies(fastify, replaceErrorBodies, render)

  setHandler('error', () => fastify.setErrorHandler(async (thrown: FastifyError | null | undefined, request, reply) => {
    // `throw null` or `throw undefined` reaches the handler as it is: an unexpected fault too.
    const error = thrown ?? new Error(`a handler threw ${String(thrown)}`) as FastifyError
    let pe = toProblemError(error, request)
    if (pe === undefined) {
      const status = statusOf(error, reply.statusCode)
      if (status >= 400 && status < 500) {
        // Errors of other plugins with a client status: keep the status and the headers they
        // carry for it, as Fastify's own handler does (a 405's Allow, a 401's WWW-Authenticate,
        // a 429's Retry-After), never their internals.
        pe = new ProblemError(status, error.code ?? 'SVC_ERR_CLIENT', { detail: writtenForClient(error) ? safeDetail(error) : UNEXPLAINED, headers: headersOf(error) })
      } else if (status === 503) {
        // Another plugin shedding load (@fastify/under-pressure, http-errors' 503): still a 503
        // the client may retry, with its Retry-After, but nothing else of the error shown.
        request.log.warn({ err: error, requestId: request.requestId }, 'unavailable')
        pe = problems.unavailable(UNAVAILABLE, { headers: retryAfterOf(error) })
      } else {
        request.log.error({ err: error, requestId: request.requestId }, 'unexpected error')
        pe = problems.internal(UNEXPECTED)
      }
    } else if (pe.statusCode >= 500) {
      request.log.error({ err: pe.cause ?? pe, requestId: request.requestId }, pe.message)
    }
    // Answered before the whole body arrived: a 413 closes the connection (the rest of the body
    // is not worth reading), and any close lingers so that the client, still sending, reads
    // this answer instead of a reset.
    if (!request.raw.complete) {
      if (pe.statusCode === 413) reply.header('connection', 'close')
      lingerOnClose(request.raw.socket)
    }
    return reply.send(render(request, reply, pe))
  }))
}

/**
 * Sets one of the context's handlers; Fastify's refusal (the application set its own first)
 * becomes an error that names this plugin and what to do.
 */
function setHandler (kind: 'notFound' | 'error', set: () => unknown): void {
  try {
    set()
  } catch (err) {
    const advice = kind === 'notFound'
      ? 'register it with { notFound: false } to keep the application\'s not-found handler'
      : 'it renders every error as a problem, so leave the error handler to it (or register it in a context of its own)'
    throw new Error(`problem plugin: the context has its own ${kind === 'notFound' ? 'not-found' : 'error'} handler already; ${advice}`, { cause: err })
  }
}

/**
 * An error's status as Fastify's own handler reads it: its `statusCode`, else its `status`
 * (http-errors and Koa-style errors), else the reply's (`reply.code(404).send(err)`), the first
 * that is a 4xx or a 5xx; else 500.
 */
function statusOf (error: FastifyError & { status?: unknown }, replyStatus: number): number {
  for (const status of [error.statusCode, error.status, replyStatus]) {
    if (typeof status === 'number' && status >= 400 && status <= 599) return status
  }
  return 500
}

// The body's own framing, which the problem sets: a foreign error's values would not describe it.
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding'])

/**
 * The response headers an error carries (`headers`, as http-errors, @fastify/sensible and
 * @fastify/static set them: a 416's `Content-Range`), but for those of its own body.
 */
function headersOf (error: FastifyError & { headers?: unknown }): Record<string, string | number> | undefined {
  const { headers } = error
  if (typeof headers !== 'object' || headers === null) return undefined
  const kept = Object.entries(headers).filter(([name]) => !BODY_HEADERS.has(name.toLowerCase()))
  return kept.length === 0 ? undefined : Object.fromEntries(kept) as Record<string, string | number>
}

/** The `Retry-After` among an error's headers, the one a 503 may show. */
function retryAfterOf (error: FastifyError): Record<string, string | number> | undefined {
  const entry = Object.entries(headersOf(error) ?? {}).find(([name]) => name.toLowerCase() === 'retry-after')
  return entry === undefined ? undefined : { 'retry-after': entry[1] }
}

/**
 * Whether a 4xx error's message was written for the client: Fastify's and its plugins' own
 * (@fastify/error), and those marked `expose` (http-errors, as @fastify/static raises them).
 * Any other error given a client status (a TypeError, a stream error Fastify marks 400 while
 * reading a body) says something about the code, not about the request.
 */
function writtenForClient (error: FastifyError & { expose?: unknown }): boolean {
  return error.name === 'FastifyError' || error.expose === true
}

/** A 4xx message written for the client, cut short and kept to one line. */
function safeDetail (error: FastifyError): string | undefined {
  return clientLine(String(error.message))
}

export { ProblemError, problems, defineProblem, invalidData, invalidDetail, MAX_CONTEXT_ITEMS, contextItem, isCredentialField, isProblemError, STATUS_TITLES } from './errors.js'
export { contextFromAjv, fieldFromPointer, ROOT_FIELD } from './validation-context.js'
export { problemFrameworkErrors, problemClientErrorHandler, problemServerOptions } from './framework.js'
export { sentRequestId, requestIdSettingsOf, MAX_REQUEST_ID_LENGTH, DEFAULT_REQUEST_ID_HEADER, type RequestIdSettings } from './request-id.js'
export { unavailableProblem } from './unavailable.js'
export default fp(once('problem', problemPlugin), { fastify: '5.x', name: 'svc-problem' })
