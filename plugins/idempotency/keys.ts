import { createHash } from 'node:crypto'
import type { IdempotencyClaim, IdempotencyRecord } from '../../store/idempotency-keys.js'
import { problems } from '../problem/index.js'

/** An object's members in code-point order of their names, so equal JSON values serialize alike. */
function sortedMembers (_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const name of Object.keys(value).sort()) sorted[name] = (value as Record<string, unknown>)[name]
  return sorted
}

/**
 * A stable digest of a parsed body: the same JSON value sent again gives the same
 * fingerprint, whatever the order of its object members (RFC 8259: an object is unordered).
 */
export function fingerprintOf (body: unknown): string {
  return createHash('sha256').update(body === undefined ? '' : JSON.stringify(body, sortedMembers)).digest('base64url')
}

/**
 * Decides the answer to a request whose key was already used: the first request's
 * success status for a retried idempotent request (PUT, PATCH, DELETE: "an idempotent
 * action returns a 2xx"), else 409 naming the first resource ("a non-idempotent action
 * returns 409"), also when the key comes back with another method, path or body.
 */
export function replayStatus (record: Omit<IdempotencyRecord, 'etag'>, claim: IdempotencyClaim): number {
  const instance = record.instance
  if (record.method !== claim.method || record.target !== claim.target) {
    throw problems.conflict(`The Svc-Idempotency-Key was already used for ${record.method} ${record.target}; send a new key with each distinct request.`, { instance })
  }
  if (record.fingerprint !== claim.fingerprint) {
    throw problems.conflict(`The Svc-Idempotency-Key was already used for ${record.method} ${record.target} with another body; send a new key with each distinct request.`, { instance })
  }
  if (record.method === 'POST') {
    // A 201 made the entity; any other POST (an action: publish, archive…) changed one.
    throw problems.conflict(record.status === 201
      ? `The Svc-Idempotency-Key was already used to create ${instance}; GET it instead of creating it again.`
      : `The Svc-Idempotency-Key was already used for POST ${record.target}; GET ${instance} to see what it did instead of sending it again.`, { instance })
  }
  return record.status
}
