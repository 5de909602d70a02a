import { randomUUID } from 'node:crypto'
import { METHODS, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { PROBLEM_MEDIA_TYPE, type Problem } from '../../schemas/problem.js'
import { problems, type ProblemError } from './errors.js'
import { idsAreRequestIds, problemGenReqId, requestIdSettingsOf, sentRequestId, sentRequestIdOf } from './request-id.js'
import { readRefusedHead, unknownMethodProblem } from './unmatched.js'
import { pathOf } from '../shared/url.js'

/*
 * Two kinds of refusal never reach a plugin's error handler: those Node's HTTP parser makes
 * before Fastify sees a request (`clientErrorHandler`), and those Fastify's router makes before
 * any hook runs (`frameworkErrors`). Both are server options, so a plugin cannot install them:
 * pass these to `Fastify({...})` so they too answer with a problem (conventions: Errors, rule 1).
 */

const ROUTER_PROBLEMS: Record<string, () => ProblemError> = {
  FST_ERR_BAD_URL: () => problems.badRequest('The request URL is not valid: a percent-encoded sequence does not decode; encode the path correctly.'),
  FST_ERR_MAX_PARAM_LENGTH: () => problems.badRequest('A path segment of the request URL is longer than this service accepts; check the identifier.')
}

/**
 * Fastify's `frameworkErrors` option: a URL that cannot be decoded or routed becomes a 400
 * problem; anything else the router reports (an async constraint failing) a 500 with nothing
 * internal. No hook has run, so the request id is taken here, from the header the problem
 * plugin reads (its `requestIdHeader`), else `request.id` when that is the convention's.
 */
export function problemFrameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = ROUTER_PROBLEMS[error.code]
  if (known === undefined) request.log.error({ err: error }, 'router error')
  const pe = known?.() ?? problems.internal('An unexpected error occurred; retry later.')
  const { header, maxLength } = requestIdSettingsOf(request.server)
  const sent = sentRequestIdOf(request.raw, header, maxLength)
  const requestId = sent ?? (idsAreRequestIds(request.server) ? request.id : randomUUID())
  const body: Problem = { title: pe.title, status: pe.statusCode, detail: pe.detail as string, requestId }
  if (sent !== undefined) reply.header(header, sent)
  // No hook has run to set it either; the problem's text is English (as in the handler below).
  reply.header('content-language', 'en-US')
  reply.code(pe.statusCode).type(PROBLEM_MEDIA_TYPE).send(JSON.stringify(body))
}

const CLIENT_ERRORS: Record<string, { status: number, detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'The request line and headers are larger than this service accepts; send a shorter URL or fewer headers.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time; send it again, without pausing.' }
}
const NOT_HTTP = { status: 400, detail: 'The request is not valid HTTP/1.1; check the request line and the headers.' }

/**
 * Fastify's `clientErrorHandler` option: a request Node's parser refused gets a problem
 * (431, 408 or 400) and the connection is closed, since the stream can no longer be read.
 * A method the parser does not know (`FOO`, a lower-case `get`) in a head otherwise whole and
 * well-formed gets what Fastify's path gives a method no route serves (405 with Allow, or 404),
 * with its X-Request-ID. A HEAD request gets the head only. `this` is the server's Fastify
 * instance (Fastify binds it).
 */
export function problemClientErrorHandler (this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (!socket.writable) {
    socket.destroy(error)
    return
  }
  // Node gives the bytes read so far as a Buffer (Fastify's type says otherwise).
  const raw: unknown = error.rawPacket
  const packet = Buffer.isBuffer(raw) ? raw : undefined
  const refused = error.code === 'HPE_INVALID_METHOD' && packet !== undefined ? unknownMethod(this, packet) : null
  if (refused !== null) {
    const { problem: pe, requestId, headers } = refused
    for (const [name, value] of Object.entries(pe.headers ?? {})) headers[name] = String(value)
    const problem: Problem = { title: pe.title, status: pe.statusCode, detail: pe.detail as string, requestId }
    if (pe.instance !== undefined) problem.instance = pe.instance
    socket.end(answer(problem, headers, false))
    return
  }
  const { status, detail } = CLIENT_ERRORS[error.code] ?? NOT_HTTP
  const head = packet !== undefined && packet.toString('latin1', 0, 5) === 'HEAD '
  socket.end(answer({ title: STATUS_CODES[status] as string, status, detail, requestId: randomUUID() }, {}, head))
}

/** The 405 or 404 of a method Node does not know, with the request id to send; null when the head cannot be read. */
function unknownMethod (app: FastifyInstance, packet: Buffer): { problem: ProblemError, requestId: string, headers: Record<string, string> } | null {
  const { header, maxLength } = requestIdSettingsOf(app)
  const head = readRefusedHead(packet, header)
  // A method Node parses heads a request it read whole: the refused bytes came after it in the
  // same packet (pipelined, or past its Content-Length), and a 405 would name the wrong request.
  if (head === null || METHODS.includes(head.method)) return null
  const sent = sentRequestId(head.requestId, maxLength)
  return {
    // The router refuses a path that does not decode before it looks for a route.
    problem: decodes(pathOf(head.target)) ? unknownMethodProblem(app, head.method, head.target) : (ROUTER_PROBLEMS.FST_ERR_BAD_URL as () => ProblemError)(),
    requestId: sent ?? randomUUID(),
    headers: sent === undefined ? {} : { [header]: sent }
  }
}

function decodes (path: string): boolean {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/**
 * A whole problem answer on a connection that closes after it. With `Date`, as Node writes it on
 * every other answer: an origin server with a clock sends it on a 4xx (RFC 9110 §6.6.1).
 */
function answer (problem: Problem, headers: Record<string, string>, headOnly: boolean): string {
  const body = JSON.stringify(problem)
  return [
    `HTTP/1.1 ${problem.status} ${problem.title}`,
    `Date: ${new Date().toUTCString()}`,
    `Content-Type: ${PROBLEM_MEDIA_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Content-Language: en-US',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    headOnly ? '' : body
  ].join('\r\n')
}

/**
 * The server options at once: `Fastify({ ...problemServerOptions, ... })`. With `genReqId`,
 * `request.id` (the log's `reqId`) is the convention's requestId, so a log line and the
 * problem answered carry the same one; it costs each request its id up front (a UUID when
 * the caller sends none) instead of on first use. `return503OnClosing: false`: a request that
 * reaches a kept-alive connection while the app closes is served (its answer closing the
 * connection) rather than refused by Fastify's own 503, written before any hook, whose body is
 * no problem (conventions: Errors, rule 1).
 */
export const problemServerOptions = {
  frameworkErrors: problemFrameworkErrors,
  clientErrorHandler: problemClientErrorHandler,
  genReqId: problemGenReqId,
  return503OnClosing: false
} satisfies Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler' | 'genReqId' | 'return503OnClosing'>
