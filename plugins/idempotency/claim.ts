import type { FastifyRequest } from 'fastify'
import type { Store, Tx } from '../../store/types.js'
import type { IdempotencyClaim, IdempotencyKeys, IdempotencyRecord } from '../../store/idempotency-keys.js'
import { problems } from '../problem/index.js'
import { pathOf } from '../shared/url.js'
import { fingerprintOf, replayStatus } from './keys.js'

/**
 * Runs of a write's transaction after a deadlock or a lost insert race (two requests locking
 * rows in different orders, or creating one id at once): the later run sees the winner's rows.
 */
export const WRITE_RETRIES = 3

/** The claim a request makes with its `Svc-Idempotency-Key` (conventions: Headers), or null without one. */
export function claimOf (request: FastifyRequest, resource: string, instance: string, status: number, target = pathOf(request.url)): IdempotencyClaim | null {
  const key = request.idempotencyKey
  if (key === null || key === undefined) return null
  return {
    ctx: request.executionContext,
    caller: request.principal?.sub ?? '',
    resource,
    key,
    method: request.method,
    target,
    fingerprint: fingerprintOf(request.body),
    instance,
    status
  }
}

/**
 * Runs a write in one transaction with the claim of its key, so the key is kept exactly when
 * the change is. An idempotent request whose key was used before gets the first request's
 * status and `ETag` back (`replay`, `etag`) and changes nothing; a non-idempotent one, or another request under
 * the same key, a 409 (conventions: Svc-Idempotency-Key). With `refuseReuse` (the detail of
 * that 409, from the first request's record), a request that is not idempotent at all (a bulk PATCH, conventions: "Bulk
 * endpoint") is never run twice under one key, whatever it was.
 */
export async function claimed<T> (store: Store, keys: IdempotencyKeys, claim: IdempotencyClaim | null, fn: (tx: Tx) => Promise<T>, refuseReuse?: (first: IdempotencyRecord) => string): Promise<{ value: T } | { replay: number, etag: string | null }> {
  return await store.transaction(async (tx) => {
    if (claim !== null) {
      const record = await keys.claim(tx, claim)
      if (record !== null) {
        // Another method, path or body: the idempotency plugin's own 409 says which.
        const status = replayStatus(record, claim)
        if (refuseReuse === undefined) return { replay: status, etag: record.etag }
        throw problems.conflict(refuseReuse(record), { instance: record.instance })
      }
    }
    return { value: await fn(tx) }
  }, { retries: WRITE_RETRIES })
}
