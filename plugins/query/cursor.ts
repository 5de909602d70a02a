import { hash, timingSafeEqual } from 'node:crypto'
import { hmacSha256 } from './hmac.js'
import type { Filter, Keyset, OrderingTerm } from '../../model/query.js'
import { QueryError } from './errors.js'
import { orderingKey } from './ordering.js'

/*
 * Keyset cursors (conventions: "Collection response envelope": a Base64 opaque string
 * the service creates). A cursor keeps the sort-key values of the boundary item, the
 * direction, and the fingerprint of the query it belongs to, sealed with HMAC-SHA256
 * under a server secret: a tampered, truncated or foreign cursor is refused, and so is
 * one of another filter, ordering or collection — never a wrong page.
 *
 * Bytes, as URL-safe Base64 without padding (RFC 4648 §5):
 *   version (1) · HMAC-SHA256(secret, version · payload) (32) · payload
 * payload = UTF-8 JSON `[fingerprint, "n" | "p", values]`; values keep their JSON types.
 */

const VERSION = 1
const MAC_BYTES = 32
export const MAX_CURSOR_LENGTH = 4096
const MIN_SECRET_BYTES = 16

export interface CursorCodecOptions {
  /** HMAC key, at least 16 bytes (32 random bytes recommended). Rotating it voids every cursor. */
  secret: string | Uint8Array
}

export interface CursorCodec {
  /** Seals a keyset for the query of `fingerprint`. */
  encode: (keyset: Keyset, fingerprint: string) => string
  /** Opens a cursor; throws a QueryError (→ 400) when it is not a genuine cursor of this query. */
  decode: (cursor: string, fingerprint: string, parameter?: string) => Keyset
}

/**
 * Fingerprint of a query: `scope` names the collection and anything else a cursor must
 * not cross (path, parent id, execution context, schema version). Pages remember theirs per
 * route (resolve.ts fingerprintOf), so this runs once per distinct query.
 */
export function queryFingerprint (scope: string, ordering: readonly OrderingTerm[], filter: Filter | null): string {
  return hash('sha256', `${scope}\u0000${orderingKey(ordering)}\u0000${JSON.stringify(filter)}`, 'buffer').subarray(0, 16).toString('base64url')
}

function isBase64UrlChar (code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 45 || code === 95
}

export function createCursorCodec (options: CursorCodecOptions): CursorCodec {
  const secret = typeof options?.secret === 'string' ? Buffer.from(options.secret, 'utf8') : options?.secret
  if (!(secret instanceof Uint8Array) || secret.length < MIN_SECRET_BYTES) {
    throw new TypeError(`cursor: secret must be a string or bytes of at least ${MIN_SECRET_BYTES} bytes, got ${secret instanceof Uint8Array ? `${secret.length} bytes` : typeof options?.secret}`)
  }
  const mac = hmacSha256(Buffer.from(secret))

  function invalid (parameter: string): never {
    throw new QueryError('cursor-invalid', parameter,
      'The cursor is not valid: it was altered, cut short or issued elsewhere. Use the cursor of a next or previous link as given, or start from the first page without one.')
  }

  return {
    encode (keyset, fingerprint) {
      const payload = JSON.stringify([fingerprint, keyset.direction === 'next' ? 'n' : 'p', keyset.values])
      const signed = Buffer.concat([Buffer.of(VERSION), Buffer.from(payload, 'utf8')])
      return Buffer.concat([signed.subarray(0, 1), mac(signed), signed.subarray(1)]).toString('base64url')
    },

    decode (cursor, fingerprint, parameter = 'cursor') {
      if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) invalid(parameter)
      for (let i = 0; i < cursor.length; i++) if (!isBase64UrlChar(cursor.charCodeAt(i))) invalid(parameter)
      const bytes = Buffer.from(cursor, 'base64url')
      // Node ignores the unused low bits of the last character: only the canonical spelling is accepted.
      if (bytes.length <= 1 + MAC_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== cursor) invalid(parameter)
      const signed = Buffer.concat([bytes.subarray(0, 1), bytes.subarray(1 + MAC_BYTES)])
      if (!timingSafeEqual(mac(signed), bytes.subarray(1, 1 + MAC_BYTES))) invalid(parameter)
      // Genuine from here on: the service wrote this payload.
      const [owner, direction, values] = JSON.parse(signed.subarray(1).toString('utf8')) as [string, 'n' | 'p', Keyset['values']]
      if (owner !== fingerprint) {
        throw new QueryError('cursor-mismatch', parameter,
          'The cursor belongs to another filter, ordering or collection. Send it with the same filter and ordering parameters as the page that gave it, or start from the first page without one.')
      }
      return { direction: direction === 'n' ? 'next' : 'previous', values }
    }
  }
}
