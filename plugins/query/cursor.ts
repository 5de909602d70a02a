import { createHmac, createSecretKey, hash, timingSafeEqual, type KeyObject } from 'node:crypto'
import type { Filter, Keyset, OrderingTerm } from '../../model/query.js'
import { QueryError } from './errors.js'
import { orderingKey } from './ordering.js'

/*
 * Keyset cursors (conventions: "Collection response envelope": a Base64 opaque string
 * the service creates). A cursor keeps the sort-key values of the boundary item, the
 * direction, and the fingerprint of the query it belongs to, sealed with HMAC-SHA256
 * under a server secret: a tampered, truncated or foreign cursor is refused, and so is
 * one of another filter, ordering or collection — never a wrong page. Secrets rotate: the
 * first of a list signs, and a cursor sealed with any of them is accepted.
 *
 * Bytes, as URL-safe Base64 without padding (RFC 4648 §5):
 *   version (1) · HMAC-SHA256(secret, version · payload) (32) · payload
 * payload = UTF-8 JSON `[fingerprint, "n" | "p", values]`; values keep their JSON types.
 */

const VERSION = 1
const MAC_BYTES = 32
export const MAX_CURSOR_LENGTH = 4096
const MIN_SECRET_BYTES = 16

/** A cursor secret: text (its UTF-8 bytes) or bytes, at least 16 bytes (32 random bytes recommended). */
export type CursorSecret = string | Uint8Array

export interface CursorCodecOptions {
  /**
   * The HMAC key, or a list of keys: the first signs new cursors, every one verifies. To rotate,
   * put the new key first and keep the old one after it until the cursors it signed are no
   * longer in use; a key taken out voids the cursors it signed.
   */
  secret: CursorSecret | readonly CursorSecret[]
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

function keyOf (value: unknown, name: string): KeyObject {
  const secret = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
  if (!(secret instanceof Uint8Array) || secret.length < MIN_SECRET_BYTES) {
    throw new TypeError(`cursor: ${name} must be a string or bytes of at least ${MIN_SECRET_BYTES} bytes, got ${secret instanceof Uint8Array ? `${secret.length} bytes` : typeof value}`)
  }
  return createSecretKey(secret)
}

export function createCursorCodec (options: CursorCodecOptions): CursorCodec {
  const given: unknown = options?.secret
  const list = Array.isArray(given) ? given as unknown[] : [given]
  if (list.length === 0) throw new TypeError('cursor: secret must name at least one key, got an empty list')
  const keys = list.map((value, i) => keyOf(value, list === given ? `secret[${i}]` : 'secret'))
  // node:crypto's HMAC: the collection benchmark showed no cost worth code of our own.
  const mac = (key: KeyObject, data: Uint8Array): Buffer => createHmac('sha256', key).update(data).digest()
  const signing = keys[0] as KeyObject

  // The item shows the cursor sent (conventions: a context item's value), cut short as any value is.
  function invalid (parameter: string, cursor: unknown): never {
    throw new QueryError('cursor-invalid', parameter,
      'The cursor is not valid: it was altered, cut short or issued elsewhere. Use the cursor of a next or previous link as given, or start from the first page without one.', undefined, typeof cursor === 'string' ? cursor : undefined)
  }

  return {
    encode (keyset, fingerprint) {
      const payload = JSON.stringify([fingerprint, keyset.direction === 'next' ? 'n' : 'p', keyset.values])
      const signed = Buffer.concat([Buffer.of(VERSION), Buffer.from(payload, 'utf8')])
      return Buffer.concat([signed.subarray(0, 1), mac(signing, signed), signed.subarray(1)]).toString('base64url')
    },

    decode (cursor, fingerprint, parameter = 'cursor') {
      if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) invalid(parameter, cursor)
      for (let i = 0; i < cursor.length; i++) if (!isBase64UrlChar(cursor.charCodeAt(i))) invalid(parameter, cursor)
      const bytes = Buffer.from(cursor, 'base64url')
      // Node ignores the unused low bits of the last character: only the canonical spelling is accepted.
      if (bytes.length <= 1 + MAC_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== cursor) invalid(parameter, cursor)
      const signed = Buffer.concat([bytes.subarray(0, 1), bytes.subarray(1 + MAC_BYTES)])
      const sealed = bytes.subarray(1, 1 + MAC_BYTES)
      if (!keys.some((key) => timingSafeEqual(mac(key, signed), sealed))) invalid(parameter, cursor)
      // Genuine from here on: the service wrote this payload.
      const [owner, direction, values] = JSON.parse(signed.subarray(1).toString('utf8')) as [string, 'n' | 'p', Keyset['values']]
      if (owner !== fingerprint) {
        throw new QueryError('cursor-mismatch', parameter,
          'The cursor belongs to another filter, ordering or collection. Send it with the same filter and ordering parameters as the page that gave it, or start from the first page without one.', undefined, cursor)
      }
      return { direction: direction === 'n' ? 'next' : 'previous', values }
    }
  }
}
