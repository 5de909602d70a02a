import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { ProblemError } from './errors.js'

/** The detail of a 4xx whose own body says nothing the client can read. */
export const UNEXPLAINED = 'The request cannot be processed as sent; check it against the API description.'
/** The detail of any 5xx but a 503. */
export const UNEXPECTED = 'An unexpected error occurred; retry later, and quote the requestId if it persists.'
/** The detail of a 503. */
export const UNAVAILABLE = 'The service cannot answer now; retry later, and quote the requestId if it persists.'

// What describes the body replaced, not the problem: its framing, and its representation's
// metadata (a 416's Content-Range describes the resource, and stays).
const BODY_HEADERS = ['content-length', 'content-encoding', 'transfer-encoding', 'content-disposition', 'content-location', 'content-digest', 'repr-digest', 'digest', 'content-md5', 'etag', 'last-modified']
// The longest body read for a message: a larger one is no error message.
const MAX_READ = 16_384
// A line ends at any of Unicode's line terminators.
const LINE_END = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/
// Where a context says whether its routes' error bodies are replaced, and whether a context
// above it has the hook already (its routes run it too).
const kReplace = Symbol.for('svc-conventions.problem.replaceErrorBodies')
const kHooked = Symbol.for('svc-conventions.problem.errorBodyHook')

type Render = (request: FastifyRequest, reply: FastifyReply, pe: ProblemError) => string
type Done = (err: Error | null, payload?: unknown) => void
type Context = FastifyInstance & { [kReplace]?: boolean, [kHooked]?: boolean }

/**
 * Keeps every 4xx and 5xx of the routes of `fastify`'s context a problem (conventions: Errors),
 * also one a handler answered with a body of its own (`reply.code(400).send({ … })`, or a
 * `Response` with such a status) rather than by throwing: see `errorBodyGuard`. With `replace`
 * false, the context's routes send such bodies as they are, though a parent context replaces
 * its own.
 */
export function guardErrorBodies (fastify: FastifyInstance, replace: boolean, render: Render): void {
  const context = fastify as Context
  context[kReplace] = replace
  if (!replace || context[kHooked] === true) return
  context[kHooked] = true
  fastify.addHook('onSend', errorBodyGuard(render))
}

/**
 * The onSend hook: a body of its own with a 4xx or 5xx status, not typed
 * `application/problem+json` (or typed so but empty), is replaced by the problem of its status.
 * Its `detail` or `message`, or a text body's first line, becomes the detail of a 4xx; a 5xx
 * shows nothing of it. The answer's other headers stay (a 503's `Retry-After`). A 4xx is
 * logged once per route and status, as a warning (the handler should throw a problem), and
 * each 5xx with its `requestId`, as the error handler logs one. Callback-style, as it runs for
 * every answer and nearly always passes it on.
 */
function errorBodyGuard (render: Render): (this: Context, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done) => void {
  const told = new Set<string>()
  return function problemBodies (request, reply, payload, done) {
    const response = isResponse(payload) ? payload : null
    // Fastify takes a Response's status (and headers) after the onSend hooks.
    const status = response?.status ?? reply.statusCode
    if (status < 400 || this[kReplace] === false) { done(null, payload); return }
    const type = response === null ? reply.getHeader('content-type') : response.headers.get('content-type')
    if (isProblemType(type) && !isEmpty(payload)) { done(null, payload); return }

    const route = `${request.method} ${request.routeOptions.url ?? '(no route)'} ${status}`
    const log = { requestId: request.requestId, route }
    if (status >= 500) {
      request.log[status === 503 ? 'warn' : 'error'](log, 'problem: a 5xx answered with a body of its own was sent as a problem instead')
    } else if (!told.has(route)) {
      told.add(route)
      request.log.warn(log, 'problem: a 4xx answered with a body of its own was sent as a problem instead; throw problems.* from the handler')
    }
    if (response !== null) {
      for (const [name, value] of response.headers) if (name !== 'content-type') reply.header(name, value)
    }
    discard(payload)
    for (const name of BODY_HEADERS) reply.removeHeader(name)
    if (status !== 416) reply.removeHeader('content-range')
    const body = render(request, reply, problemOf(status, type, response === null ? payload : undefined))
    // The charset, as Fastify adds it to a string the error handler sends.
    reply.type(`${PROBLEM_MEDIA_TYPE}; charset=utf-8`)
    done(null, body)
  }
}

function isResponse (payload: unknown): payload is Response {
  return typeof payload === 'object' && payload !== null && Object.prototype.toString.call(payload) === '[object Response]'
}

function isProblemType (type: unknown): boolean {
  return typeof type === 'string' && mediaOf(type) === PROBLEM_MEDIA_TYPE
}

function mediaOf (type: string): string {
  return (type.split(';', 1)[0] as string).trim().toLowerCase()
}

function isEmpty (payload: unknown): boolean {
  return payload === undefined || payload === null || payload === '' || (Buffer.isBuffer(payload) && payload.length === 0)
}

/** The problem a body of its own becomes. */
function problemOf (status: number, type: unknown, payload: unknown): ProblemError {
  if (status >= 500) return new ProblemError(status, status === 503 ? 'SVC_ERR_UNAVAILABLE' : 'SVC_ERR_INTERNAL', { detail: status === 503 ? UNAVAILABLE : UNEXPECTED })
  return new ProblemError(status, 'SVC_ERR_CLIENT', { detail: messageOf(type, payload) ?? UNEXPLAINED })
}

/**
 * What a body written for the client says, to show as a 4xx's detail: a JSON object's `detail`
 * or `message` (as Fastify's own error body has it), or a `text/plain` body's first line, as
 * `clientLine` cuts it. Undefined for anything else, and for a body over 16 KiB or in a
 * charset other than UTF-8, Latin-1 and ASCII.
 */
export function messageOf (type: unknown, payload: unknown): string | undefined {
  if (typeof type !== 'string') return undefined
  const text = textOf(type, payload)
  if (text === undefined) return undefined
  const media = mediaOf(type)
  let said: unknown
  if (media === 'text/plain') said = text
  else if (media === 'application/json' || media.endsWith('+json')) said = fieldOf(text)
  return typeof said === 'string' ? clientLine(said) : undefined
}

function textOf (type: string, payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload.length > MAX_READ ? undefined : payload
  if (!Buffer.isBuffer(payload) || payload.length > MAX_READ) return undefined
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase() ?? 'utf-8'
  if (charset === 'utf-8' || charset === 'utf8') return payload.toString('utf8')
  if (['iso-8859-1', 'latin1', 'us-ascii', 'ascii'].includes(charset)) return payload.toString('latin1')
  return undefined
}

function fieldOf (text: string): unknown {
  try {
    const body: unknown = JSON.parse(text)
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
    const { detail, message } = body as { detail?: unknown, message?: unknown }
    return typeof detail === 'string' ? detail : message
  } catch {
    return undefined
  }
}

/**
 * A message written for the client, as a problem's detail shows it: its first line (up to any
 * line terminator, so that nothing after it, a stack frame say, is shown), trimmed, and at most
 * 300 characters, cut between code points. Undefined when nothing is left.
 */
export function clientLine (message: string): string | undefined {
  const line = (message.split(LINE_END, 1)[0] as string).trim()
  if (line === '') return undefined
  return line.length <= 300 ? line : Array.from(line).slice(0, 300).join('')
}

/** Lets go of a body that will not be sent: a stream is closed, so that it holds nothing open, and its later errors are not the process's. */
function discard (payload: unknown): void {
  if (typeof payload !== 'object' || payload === null) return
  const p = payload as { destroy?: () => void, on?: (event: string, listener: () => void) => void, cancel?: () => Promise<void>, body?: { cancel?: () => Promise<void> } | null }
  if (typeof p.destroy === 'function') {
    p.on?.('error', () => {})
    p.destroy()
  } else if (typeof p.cancel === 'function') {
    p.cancel().catch(() => {})
  } else if (typeof p.body?.cancel === 'function') {
    p.body.cancel().catch(() => {})
  }
}
