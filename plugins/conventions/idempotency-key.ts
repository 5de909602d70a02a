import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyRequest } from 'fastify'
import type { ContextItem } from '../../schemas/problem.js'

export const IDEMPOTENCY_KEY_HEADER = 'svc-idempotency-key'

/** Conventions: Svc-Idempotency-Key — `[a-z0-9-]{20,255}`, a V4 UUID being typical. */
export const IDEMPOTENCY_KEY_PATTERN = /^[a-z0-9-]{20,255}$/

/**
 * The key, bare or as a Structured Field string (`"…"`, RFC 9651 §3.3.3, as the IETF
 * Idempotency-Key draft writes it); null when the format is wrong. The allowed characters
 * never need escaping, so unquoting is dropping the quotes.
 */
export function parseIdempotencyKey (value: string): string | null {
  const bare = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value
  return IDEMPOTENCY_KEY_PATTERN.test(bare) ? bare : null
}

function item (message: string, value: string): ContextItem {
  return { code: 'INPUT_INVALID', message, field: 'Svc-Idempotency-Key', source: 'header', value }
}

/** Reads the key into `request.idempotencyKey`; returns the violation, or null. Storage is the idempotency plugin's. */
export function applyIdempotencyKey (request: FastifyRequest, headers: IncomingHttpHeaders): ContextItem | null {
  const value = headers[IDEMPOTENCY_KEY_HEADER]
  if (typeof value !== 'string') return null
  // "It is not used on GET" (conventions: Svc-Idempotency-Key); HEAD is a GET without body.
  if (request.method === 'GET' || request.method === 'HEAD') {
    return item(`is not used on ${request.method}; send it only with requests that change state`, value)
  }
  const key = parseIdempotencyKey(value)
  if (key === null) {
    return item('must be 20 to 255 characters among a-z, 0-9 and - (a lowercase UUID fits), bare or in double quotes', value)
  }
  request.idempotencyKey = key
  return null
}
