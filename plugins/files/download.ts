import { create as createDisposition } from 'content-disposition'
import { parseAccept, qualityOf } from '../shared/accept.js'
import { parseMediaType, type MediaType } from '../shared/media-type.js'

/**
 * `Content-Disposition: attachment` for a download (RFC 6266): the name in `filename`, or,
 * when it is not ASCII, an ASCII fallback there (`?` for each other character) and the name
 * itself in `filename*=UTF-8''…` (RFC 8187); `attachment` alone for a file without a name.
 */
export function dispositionOf (filename: string | null): string {
  if (filename === null) return 'attachment'
  return createDisposition(filename, { fallback: filename.replace(/[^\x20-\x7e]/g, '?') })
}

/**
 * Whether `accept` admits `mediaType` (RFC 9110 §12.5.1; a wildcard does). The type produced
 * is the stored one, so the route negotiates itself rather than against a list of its own.
 */
export function admits (accept: string | undefined, mediaType: string): boolean {
  if (accept === undefined || accept.trim() === '') return true
  return qualityOf(parseAccept(accept), parseMediaType(mediaType) as MediaType) > 0
}
