import type { FastifyReply, FastifyRequest } from 'fastify'
import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { ProblemError } from './errors.js'

/** The detail of a 4xx whose own body says nothing the client can read. */
export const UNEXPLAINED = 'The request cannot be processed as sent; check it against the API description.'
/** The detail of any 5xx but a 503. */
export const UNEXPECTED = 'An unexpected error occurred; retry later, and quote the requestId if it persists.'
/** The detail of a 503. */
export const UNAVAILABLE = 'The service cannot answer now; retry later, and quote the requestId if it persists.'

// A body's own framing, which the problem replaces.
const FRAMING = ['content-length', 'content-encoding', 'transfer-encoding'] as const
// The longest body read for a message: a larger one is no error message.
const MAX_READ = 16_384

type Render = (request: FastifyRequest, reply: FastifyReply, pe: ProblemError) => string
type Done = (err: Error | null, payload?: unknown) => void

/**
 * The onSend hook that keeps every 4xx and 5xx a problem (conventions: Errors), also one a
 * handler answered with a body of its own (`reply.code(400).send({ … })`) rather than by
 * throwing. Such a body is replaced by the problem of its status: its `detail` or `message`,
 * or a text body's first line, becomes the detail of a 4xx; a 5xx shows nothing of it. Its
 * other headers stay (a 503's `Retry-After`). A body typed `application/problem+json` is taken
 * as one. Each route and status is logged once, as a warning: the handler should throw a
 * problem. Callback-style, as it runs for every answer and nearly always passes it on.
 */
export function errorBodyGuard (render: Render): (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done) => void {
  const told = new Set<string>()
  return function problemBodies (request, reply, payload, done) {
    const status = reply.statusCode
    if (status < 400) { done(null, payload); return }
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type.startsWith(PROBLEM_MEDIA_TYPE)) { done(null, payload); return }
    const route = `${request.method} ${request.routeOptions.url ?? '(no route)'} ${status}`
    if (!told.has(route)) {
      told.add(route)
      request.log.warn({ requestId: request.requestId, route }, 'problem: a 4xx or 5xx answered with a body of its own was sent as a problem instead; throw problems.* from the handler')
    }
    discard(payload)
    for (const name of FRAMING) reply.removeHeader(name)
    done(null, render(request, reply, problemOf(status, type, payload)))
  }
}

/** The problem a body of its own becomes. */
function problemOf (status: number, type: unknown, payload: unknown): ProblemError {
  if (status >= 500) return new ProblemError(status, status === 503 ? 'SVC_ERR_UNAVAILABLE' : 'SVC_ERR_INTERNAL', { detail: status === 503 ? UNAVAILABLE : UNEXPECTED })
  return new ProblemError(status, 'SVC_ERR_CLIENT', { detail: messageOf(type, payload) ?? UNEXPLAINED })
}

/**
 * What a body written for the client says, to show as a 4xx's detail: a JSON object's `detail`
 * or `message` (as Fastify's own error body has it), or a text body's first line; one line, at
 * most 300 characters. Undefined for anything else.
 */
export function messageOf (type: unknown, payload: unknown): string | undefined {
  if (typeof type !== 'string') return undefined
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined
  if (text === undefined || text.length > MAX_READ) return undefined
  const media = (type.split(';', 1)[0] as string).trim().toLowerCase()
  let said: unknown
  if (media === 'text/plain') said = text
  else if (media === 'application/json' || media.endsWith('+json')) said = fieldOf(text)
  if (typeof said !== 'string') return undefined
  const line = (said.split(/\r?\n/, 1)[0] as string).trim()
  return line === '' ? undefined : line.slice(0, 300)
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

/** Lets go of a body that will not be sent: a stream is closed, so that it holds nothing open. */
function discard (payload: unknown): void {
  if (typeof payload !== 'object' || payload === null) return
  const p = payload as { destroy?: () => void, cancel?: () => Promise<void>, body?: { cancel?: () => Promise<void> } | null }
  if (typeof p.destroy === 'function') p.destroy()
  else if (typeof p.cancel === 'function') p.cancel().catch(() => {})
  else if (typeof p.body?.cancel === 'function') p.body.cancel().catch(() => {})
}
