import type { FastifyRequest } from 'fastify'
import type { Store, Tx } from '../../store/types.js'
import type { IdempotencyClaim, IdempotencyKeys, IdempotencyRecord } from '../../store/idempotency-keys.js'
import { SerializationFailure } from '../../store/errors.js'
import { HELD, type WriteClaim } from '../../store/statement-parts.js'
import { isProblemError, problems } from '../problem/index.js'
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

/**
 * Runs a write that takes its key's claim in its own statement, with no transaction around it:
 * `write` puts the claim's `part` (the CTE `k`, store/statement-parts.ts) in its statement, or
 * `take`s it when it has nothing to write, and answers `HELD` when it wrote nothing because the
 * key answers for another request. Then, or when the write is refused (a 4xx problem), the
 * request that holds the key answers, as in `claimed`: its status and `ETag` (`replay`), or with
 * `refuseReuse` a 409. A key found held that nobody holds when asked (it expired in between) is
 * tried again; still so after WRITE_RETRIES more runs, a SerializationFailure.
 */
export async function claimedInWrite<T> (store: Store, keys: IdempotencyKeys, claim: IdempotencyClaim, write: (held: WriteClaim<IdempotencyRecord>) => Promise<T | typeof HELD>, refuseReuse?: (first: IdempotencyRecord) => string): Promise<{ value: T } | { replay: number, etag: string | null }> {
  const held = keys.writeClaim(claim)
  const first = async (): Promise<{ replay: number, etag: string | null } | null> => {
    const record = await held.holder(store)
    if (record === null) return null
    // Another method, path or body: the idempotency plugin's own 409 says which.
    const status = replayStatus(record, claim)
    if (refuseReuse === undefined) return { replay: status, etag: record.etag }
    throw problems.conflict(refuseReuse(record), { instance: record.instance })
  }
  for (let n = 0; n <= WRITE_RETRIES; n++) {
    let value: T | typeof HELD
    try {
      value = await write(held)
    } catch (err) {
      if (!isProblemError(err) || err.statusCode >= 500) throw err
      const replay = await first()
      if (replay === null) throw err
      return replay
    }
    if (value !== HELD) return { value }
    const replay = await first()
    if (replay !== null) return replay
  }
  throw new SerializationFailure()
}
