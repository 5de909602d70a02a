import type { Dispatcher } from 'undici'
import type { ContextItem } from '../../schemas/problem.js'
import { DownstreamInvalidJsonError, DownstreamProblemError, DownstreamResponseError, DownstreamTooLargeError, type AnswerFacts, type CallTarget } from './errors.js'

/** A 1xx–3xx answer (redirects are answers: the client follows none). */
export interface DownstreamResponse<T = unknown> {
  status: number
  /** Names in lower case, as undici gives them. */
  headers: Record<string, string | string[] | undefined>
  /** The parsed body of a JSON answer (`application/json`, `…+json`), as sent: not checked against `T`. Undefined for other and empty bodies. */
  body: T | undefined
  /** The body as read. */
  bytes: Buffer
  /** The body as UTF-8 text. */
  text: () => string
}

type Body = Dispatcher.ResponseData['body']

const NO_BYTES = Buffer.alloc(0)

const ignore = (): void => {}

/**
 * Destroys a body past the cap, which closes the connection. undici then emits an abort error on
 * it; once the whole answer had arrived, nothing else listens for that, and unheard it would end
 * the process.
 */
function cutOff (body: Body, limit: number, target: CallTarget, status: number): DownstreamTooLargeError {
  body.on('error', ignore)
  body.destroy()
  return new DownstreamTooLargeError(limit, target, status)
}

/**
 * Reads the body up to `limit` bytes. Past it, the body is destroyed, which closes the
 * connection: the rest is never read, and nothing is left waiting on the socket.
 */
export async function readBody (body: Body, status: number, headers: AnswerFacts['headers'], limit: number, target: CallTarget): Promise<Buffer> {
  const declared = Number(headers['content-length'])
  // An answer without a body is waited out to its end, not iterated: an iterator is dearer than
  // the answer of a subscriber that says 204 to every delivery. A HEAD's Content-Length is the
  // GET's, with no body behind it.
  if (status === 204 || status === 304 || declared === 0 || target.method === 'HEAD') {
    await body.dump()
    return NO_BYTES
  }
  if (declared > limit) throw cutOff(body, limit, target, status)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw cutOff(body, limit, target, status)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

function mediaType (headers: AnswerFacts['headers']): string {
  // A repeated Content-Type (an array) is no media type: read as none.
  return (String(headers['content-type'] ?? '').split(';', 1)[0] as string).trim().toLowerCase()
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The items of a problem's `context` that are objects with a message; other members kept as sent. */
function contextItems (value: unknown): ContextItem[] {
  if (!Array.isArray(value)) return []
  return value.filter((v): v is ContextItem => typeof v === 'object' && v !== null && typeof (v as { message?: unknown }).message === 'string')
}

function parseJson (bytes: Buffer): { ok: true, value: unknown } | { ok: false, error: unknown } {
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8')) }
  } catch (error) {
    return { ok: false, error }
  }
}

/** A 4xx or 5xx answer as a typed error: a problem's members when it is one, the status otherwise. */
function failure (answer: AnswerFacts, target: CallTarget): DownstreamResponseError {
  if (mediaType(answer.headers) === 'application/problem+json') {
    const parsed = parseJson(answer.bytes)
    if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)) {
      const p = parsed.value as Record<string, unknown>
      return new DownstreamProblemError(answer, target, {
        title: text(p.title), detail: text(p.detail), type: text(p.type), instance: text(p.instance), requestId: text(p.requestId), context: contextItems(p.context)
      })
    }
  }
  return new DownstreamResponseError(answer, target)
}

/** The answer of a call: a response, or a thrown typed error for a 4xx or 5xx or a JSON body that is not JSON. */
export function answerOf<T> (answer: AnswerFacts, target: CallTarget): DownstreamResponse<T> {
  if (answer.status >= 400) throw failure(answer, target)
  const type = mediaType(answer.headers)
  let body: T | undefined
  if ((type === 'application/json' || type.endsWith('+json')) && answer.bytes.length > 0) {
    const parsed = parseJson(answer.bytes)
    if (!parsed.ok) throw new DownstreamInvalidJsonError(answer, type, target, parsed.error)
    body = parsed.value as T
  }
  const bytes = answer.bytes
  return { status: answer.status, headers: answer.headers, body, bytes, text: () => bytes.toString('utf8') }
}
