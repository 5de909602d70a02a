import type { Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { parse as parseDisposition } from 'content-disposition'
import { invalidData, isProblemError, problems } from '../problem/index.js'
import { storedType, type AllowedTypes } from './types.js'
import { PartHeaders } from './parts.js'

/** A file as received, before it is stored. */
export interface Upload {
  mediaType: string
  filename: string | null
  bytes: Buffer
}

/** What an endpoint takes: the types (stored as), the largest file, and its path for messages. */
export interface UploadRules {
  allowed: AllowedTypes
  maxBytes: number
}

function tooLarge (rules: UploadRules, path: string): Error {
  return problems.contentTooLarge(`The file is larger than ${rules.maxBytes} bytes, the most ${path} takes; send a smaller one.`, { instance: path })
}

/** Where a name came from: the raw upload's header, or the multipart body's file part. */
const HEADER = { field: 'Content-Disposition', source: 'header' } as const
const PART = { field: 'file', source: 'body' } as const

const MAX_NAME = 255

/** A filename as a name, never a path, and null when there is none to keep. */
function cleanName (name: string | undefined, where: typeof HEADER | typeof PART): string | null {
  // RFC 8187 lets filename* carry any byte: %00, which PostgreSQL text cannot hold (the store's
  // refusal would be a 500 for the client's mistake), and line breaks, which every reader of the
  // entity's file description would get in a name they may put in a header or a log line.
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (name !== undefined && /[\u0000-\u001f\u007f-\u009f]/.test(name)) throw invalidData([{ code: 'INPUT_INVALID', message: 'must not name a file with a control character (U+0000 to U+001F, or U+007F to U+009F), such as NUL or a line break', ...where }])
  // The multipart parser puts U+FFFD where a part's name has bytes that are not UTF-8: the
  // name the client meant is lost, and the one stored would not be it.
  if (name?.includes('\ufffd') === true) throw invalidData([{ code: 'INPUT_INVALID', message: 'must name a file in UTF-8: the name sent has bytes that are not UTF-8', ...where }])
  const base = name?.split(/[/\\]/).pop()?.trim()
  if (base === undefined || base === '') return null
  // Counted in characters, as a file system's limit reads them: cut short, the name would lose
  // its extension unseen, or half of a character PostgreSQL then refuses (a 500).
  if (base.length > MAX_NAME && [...base].length > MAX_NAME) throw invalidData([{ code: 'INPUT_INVALID', message: `must name a file of at most ${MAX_NAME} characters (after any path), got ${[...base].length}`, ...where }])
  return base
}

/**
 * The request's `Content-Disposition`, which has one value (RFC 6266 §4.1): sent twice, Node
 * would join both into one text and the first name would be kept unseen, so it is a 400 naming
 * it, as the conventions plugin does for the other one-value headers (RFC 9110 §5.3).
 */
export function sentDisposition (request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === 'content-disposition') count++
  if (count > 1) {
    throw invalidData([{ code: 'INPUT_INVALID', message: 'must be sent once: a file has one name', field: 'Content-Disposition', source: 'header' }])
  }
  return request.headers['content-disposition']
}

/**
 * The filename of a raw upload's `Content-Disposition` (RFC 6266: `filename*` wins over
 * `filename`); null without the header. The library reads leniently, so a header it cannot
 * make sense of (another disposition type, a `filename*` that does not decode and no
 * `filename` to fall back on) is a 400 naming it, rather than a name silently lost.
 */
export function filenameOf (header: string | undefined): string | null {
  if (header === undefined) return null
  const { type, parameters } = parseDisposition(header)
  if (!/^(attachment|inline)$/i.test(type) || (parameters['filename*'] !== undefined && parameters.filename === undefined)) {
    throw invalidData([{ code: 'INPUT_INVALID', message: 'must be a Content-Disposition such as attachment; filename="report.pdf" (RFC 6266), with filename*=UTF-8\'\'… for a name that is not ASCII', field: 'Content-Disposition', source: 'header', value: header }])
  }
  return cleanName(parameters['filename*'] === undefined ? plainName(parameters.filename) : parameters.filename, HEADER)
}

// `fatal`: bytes that are not UTF-8 throw.
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A plain `filename="…"` (no `filename*`): RFC 6266 reads it as ISO-8859-1, which is how Node
 * gives a header's bytes, but clients (curl, most HTTP libraries) send UTF-8 there, which read as
 * latin1 would be kept as mojibake (é as Ã©). A name whose bytes are UTF-8 is read as UTF-8;
 * any other stays latin1 (`n°1`). The convention's way for a name that is not ASCII stays
 * `filename*=UTF-8''…`.
 */
function plainName (name: string | undefined): string | undefined {
  // Only what a header's bytes can be: a string with more came from no socket.
  if (name === undefined || !/[\u0080-\u00ff]/.test(name) || /[\u0100-\uffff]/.test(name)) return name
  try {
    return utf8.decode(Buffer.from(name, 'latin1'))
  } catch {
    return name
  }
}

/**
 * Reads a raw body into one buffer. With a Content-Length (checked against the limit before
 * anything is read), the buffer is allocated once at that size and filled as chunks arrive;
 * a transfer-coded body is gathered and joined once. A body cut off in the middle rejects,
 * so nothing is stored.
 */
export async function readRaw (payload: Readable, length: number | null, rules: UploadRules, path: string): Promise<Buffer> {
  if (length !== null && length > rules.maxBytes) throw tooLarge(rules, path)
  if (length !== null) {
    const out = Buffer.allocUnsafe(length)
    let at = 0
    for await (const chunk of payload as AsyncIterable<Buffer>) {
      // Node's parser never gives more than Content-Length; a stream of ours might.
      /* c8 ignore next */
      if (at + chunk.length > length) throw problems.badRequest(`The body is longer than its Content-Length of ${length}.`, { instance: path })
      chunk.copy(out, at)
      at += chunk.length
    }
    /* c8 ignore next */
    if (at !== length) throw problems.badRequest(`The body ended after ${at} of its ${length} bytes; send it whole.`, { instance: path })
    return out
  }
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of payload as AsyncIterable<Buffer>) {
    total += chunk.length
    if (total > rules.maxBytes) throw tooLarge(rules, path)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, total)
}

const unexpectedPart = (what: string): Error => invalidData([{
  code: 'INPUT_INVALID',
  message: `must hold exactly one part, a file named "file"; ${what}`,
  field: 'file',
  source: 'body'
}], 'A multipart/form-data upload has exactly one part: the file, named "file", with its own Content-Type and filename.')

/**
 * The one file part, named `file`, of a `multipart/form-data` body (@fastify/multipart):
 * its own type (checked like a raw upload's, parameters and all) and filename. Any other part,
 * before or after it, and a body without it, are 400s; a file above the limit a 413.
 */
export async function readMultipart (request: FastifyRequest, rules: UploadRules, path: string): Promise<Upload> {
  // Busboy gives the part's type without its parameters (the charset among them): the part's
  // headers are read from the bytes as they go to it.
  const sent = new PartHeaders(request.headers['content-type'] as string)
  const observe = (chunk: Buffer): void => { sent.push(chunk) }
  request.raw.on('data', observe)
  let upload: Upload | null = null
  try {
    for await (const part of request.parts({ limits: { fileSize: rules.maxBytes } })) {
      if (upload !== null) throw unexpectedPart(`a second part named ${JSON.stringify(part.fieldname)} was sent`)
      if (part.type !== 'file' || part.fieldname !== 'file') throw unexpectedPart(`a ${part.type === 'file' ? 'file' : 'field'} part named ${JSON.stringify(part.fieldname)} was sent`)
      // One part read so far: this one, with its Content-Type as sent (none: text/plain, RFC 7578
      // §4.4, as busboy says). More: the body is refused below, whatever this one's type.
      const type = sent.contentTypes.length === 1 ? sent.contentTypes[0] ?? part.mimetype : part.mimetype
      const mediaType = storedType(rules.allowed, type)
      if (mediaType === null) {
        throw problems.unsupportedMediaType(`The file part's Content-Type ${JSON.stringify(type)} is not accepted by ${request.method} ${path}; send the file as one of ${[...rules.allowed.values()].join(', ')}.`, { instance: path })
      }
      upload = { mediaType, filename: cleanName(part.filename, PART), bytes: await part.toBuffer() }
    }
  } catch (err) {
    throw multipartProblem(err, rules, path)
  } finally {
    request.raw.removeListener('data', observe)
  }
  if (upload === null) throw unexpectedPart('none was sent')
  if (sent.unreadable) throw unreadable(path)
  // A part busboy passes over in silence (no Content-Disposition of form-data): its type was not the file's.
  if (sent.contentTypes.length !== 1) throw unexpectedPart('a part that is not a form-data field was sent besides it')
  return upload
}

/** A malformed or cut-off body (busboy: "Unexpected end of form", no boundary), or one whose parts cannot be told apart. */
function unreadable (path: string): Error {
  return problems.badRequest('The multipart/form-data body cannot be read: it is malformed or incomplete; send one part named "file", whole.', { instance: path })
}

/** @fastify/multipart's and busboy's errors as the problems they are. */
function multipartProblem (err: unknown, rules: UploadRules, path: string): unknown {
  const code = (err as { code?: string }).code
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(rules, path)
  if (isProblemError(err)) return err
  return unreadable(path)
}

export { storedType }
