import { splitOutsideQuotes } from '../shared/media-type.js'

const HEADER_END = Buffer.from('\r\n\r\n')
const DASH = 0x2d
/** The most of a part's header block busboy keeps (its default `headerSize`); a longer one is not read. */
export const MAX_HEADER_BYTES = 80 * 1024

/**
 * A part's first Content-Type as busboy's header parser (Dicer) reads it from its header block:
 * names compare case-insensitively, one space or tab after the colon is dropped, a line that
 * starts with a space or tab continues the header before it (its whitespace kept), and reading
 * stops at a line that is not a header (no colon, or a bare CR or LF).
 */
function contentTypeOf (block: string): string | undefined {
  let name: string | undefined
  let value: string | undefined
  let inValue = false
  for (const line of block.split('\r\n')) {
    if (line === '') continue
    if (/[\r\n]/.test(line)) break
    if ((line[0] === ' ' || line[0] === '\t') && name !== undefined) {
      if (inValue) value = `${value as string}${line}`
      continue
    }
    const colon = line.indexOf(':')
    if (colon < 1) break
    name = line.slice(0, colon).toLowerCase()
    inValue = name === 'content-type' && value === undefined
    if (inValue) value = line.slice(colon + 1).replace(/^[ \t]/, '')
  }
  return value
}

/**
 * The boundary as busboy reads it, leniently: the first parameter named `boundary` (in any
 * case), its quotes taken off or, unquoted, its blanks.
 */
function boundaryOf (contentType: string): string | undefined {
  for (const param of splitOutsideQuotes(contentType, ';').slice(1)) {
    const value = /^[ \t]*boundary[ \t]*=[ \t]*(.*?)[ \t]*$/is.exec(param)?.[1]
    if (value === undefined) continue
    const quoted = /^"((?:[^"\\]|\\.)*)"/s.exec(value)?.[1]
    return quoted === undefined ? value.replace(/[ \t]/g, '') : quoted.replace(/\\(.)/gs, '$1')
  }
  return undefined
}

/**
 * The headers of a `multipart/form-data` body's parts, read from the request's bytes as they
 * go to @fastify/multipart. Busboy, underneath, hands a file part's Content-Type on without
 * its parameters (`text/plain` for `text/plain; charset=ISO-8859-1`, charset and all dropped)
 * and no part's headers, so the type as sent is read here.
 *
 * The parts are framed as busboy's parser frames them: bytes before the first
 * `--boundary` are a preamble; each `CRLF--boundary` opens a part, whose header block runs to
 * the first empty line (a delimiter before it: no part); `--boundary--` ends the body. It
 * keeps the Content-Type of two parts at most, enough to tell one part from more.
 */
export class PartHeaders {
  /** The first Content-Type of each part, in order (undefined for a part without one). */
  readonly contentTypes: Array<string | undefined> = []
  /** Framing failed: no boundary, or a header block above MAX_HEADER_BYTES. */
  unreadable = false
  private readonly delimiter: Buffer
  /** The bytes a delimiter or the end of a header block may start in, when a chunk cuts it in two. */
  private readonly overlap: number
  // The bytes before the next chunk still to search: busboy's parser starts with a CRLF of its
  // own, so that the first delimiter needs none.
  private tail = Buffer.from('\r\n')
  private inHeader = false
  /** The current header block, but its tail: a part's header bytes are read, and copied, once. */
  private block: Buffer[] = []
  private blockSize = 0
  private done = false

  /** `contentType`: the request's, whose boundary frames the parts. */
  constructor (contentType: string) {
    const boundary = boundaryOf(contentType)
    // Without one, busboy reads no part either (a 400).
    if (boundary === undefined) this.unreadable = this.done = true
    // The header's bytes (Node reads headers as Latin-1), as busboy searches for them.
    this.delimiter = Buffer.from(`\r\n--${boundary ?? ''}`, 'latin1')
    this.overlap = Math.max(this.delimiter.length, HEADER_END.length) - 1
  }

  /** Reads the next bytes of the body; never throws. */
  push (chunk: Buffer): void {
    if (this.done) return
    // Inside a part's body (most of a large file's bytes): a chunk with no delimiter in it, nor
    // one begun in the bytes before it, is passed over without being copied.
    if (!this.inHeader && chunk.length > this.overlap && chunk.indexOf(this.delimiter) === -1 &&
      Buffer.concat([this.tail, chunk.subarray(0, this.overlap)]).indexOf(this.delimiter) === -1) {
      this.tail = Buffer.from(chunk.subarray(chunk.length - this.overlap))
      return
    }
    let data = Buffer.concat([this.tail, chunk])
    for (;;) {
      const next = data.indexOf(this.delimiter)
      if (this.inHeader) {
        const end = data.indexOf(HEADER_END)
        if (next !== -1 && (end === -1 || end + HEADER_END.length > next)) {
          // A header block cut off by the next delimiter: busboy sees no part there.
          this.endBlock()
          data = data.subarray(next)
          continue
        }
        // The header block's length, or as much of it as is known.
        if (this.blockSize + (end === -1 ? data.length - HEADER_END.length + 1 : end) > MAX_HEADER_BYTES) {
          this.unreadable = this.done = true
          return
        }
        if (end === -1) {
          const kept = Math.max(0, data.length - this.overlap)
          this.block.push(data.subarray(0, kept))
          this.blockSize += kept
          data = data.subarray(kept)
          break
        }
        this.contentTypes.push(contentTypeOf(Buffer.concat([...this.block, data.subarray(0, end)]).toString('latin1')))
        this.endBlock()
        data = data.subarray(end + HEADER_END.length)
        if (this.contentTypes.length === 2) {
          this.done = true
          return
        }
        continue
      }
      if (next === -1) {
        data = data.subarray(Math.max(0, data.length - this.overlap))
        break
      }
      // Two bytes after a delimiter tell the last one (`--`) from a part's.
      if (data.length < next + this.delimiter.length + 2) {
        data = data.subarray(next)
        break
      }
      if (data[next + this.delimiter.length] === DASH && data[next + this.delimiter.length + 1] === DASH) {
        this.done = true
        return
      }
      this.inHeader = true
      data = data.subarray(next + this.delimiter.length)
    }
    // A copy of a few bytes, so that the chunk they came from is not held.
    this.tail = Buffer.from(data)
  }

  private endBlock (): void {
    this.inHeader = false
    this.block = []
    this.blockSize = 0
  }
}
