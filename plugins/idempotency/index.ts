import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { migrate } from '../../store/migrate.js'
import type { Store } from '../../store/types.js'
import { IdempotencyKeys } from '../../store/idempotency-keys.js'
import { schedulePurge } from '../shared/purge-timer.js'
import { optionChecks, refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { once } from '../shared/dependencies.js'

/** Options of the `idempotency` plugin: where `Svc-Idempotency-Key`s live and how long. */
export interface IdempotencyPluginOptions {
  /** The store holding the keys, the same one that holds the resources they guard. Required. */
  store: Store
  /** How long a key is remembered, in milliseconds; after that it can be used again. Default 24 h. */
  ttl?: number
  /** How often expired keys are deleted, in milliseconds (at most 2 147 483 647, about 24.8 days); 0 never (call `purge`). Default the ttl, at most 1 h. */
  purgeInterval?: number
  /** Table name. Default `idempotency_keys`. */
  table?: string
  /** The clock keys expire by: default the database's, the same for every instance. Tests pass one they move. */
  now?: () => Date
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The idempotency key table: `claim(tx, …)` inside the transaction of the change, `purge(db)`. */
    idempotency: IdempotencyKeys
  }
}

const HOUR = 60 * 60 * 1000
const defaults = { ttl: 24 * HOUR, table: 'idempotency_keys' }
const OPTION_KEYS: OptionKeys<IdempotencyPluginOptions> = { store: true, ttl: true, purgeInterval: true, table: true, now: true }

const checks = optionChecks('idempotency plugin')

async function idempotencyPlugin (fastify: FastifyInstance, opts: IdempotencyPluginOptions): Promise<void> {
  refuseUnknownOptions('idempotency', opts, OPTION_KEYS)
  const store = opts.store
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') {
    throw new TypeError(`idempotency plugin: store must be a Store (createStore), got ${shownValue(store)}`)
  }
  const ttl = checks.positiveInteger('ttl', opts.ttl ?? defaults.ttl, 'a positive integer of milliseconds')
  // The ttl is only added to timestamps, in SQL; the interval is a timer's.
  const purgeInterval = checks.timerMillis('purgeInterval', opts.purgeInterval ?? Math.min(ttl, HOUR), 'never')
  const table = opts.table ?? defaults.table
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,40}$/.test(table)) {
    throw new TypeError(`idempotency plugin: table must be a lowercase SQL name of at most 41 characters, got ${shownValue(table)}`)
  }

  const now = opts.now
  if (now !== undefined && typeof now !== 'function') throw new TypeError(`idempotency plugin: now must be a function returning a Date, got ${shownValue(now)}`)

  const keys = new IdempotencyKeys(table, ttl, now === undefined ? {} : { now })
  await migrate(store, keys.migrations())
  fastify.decorate('idempotency', keys)

  // Expired rows go now and then on a timer, never on a request's path; in batches, and by one
  // instance at a time (store/purge.ts).
  schedulePurge(fastify, purgeInterval, async () => await keys.purge(store), {
    done: 'idempotency: expired keys deleted',
    failed: 'idempotency: purging expired keys failed; trying again later'
  })
}

export { fingerprintOf, replayStatus } from './keys.js'
export { claimed, claimedInWrite, claimOf } from './claim.js'
export type { IdempotencyKeys, IdempotencyClaim, IdempotencyRecord } from '../../store/idempotency-keys.js'
export { HELD, type ClaimPart, type WriteClaim } from '../../store/statement-parts.js'
export default fp(once('idempotency', idempotencyPlugin), { fastify: '5.x', name: 'svc-idempotency' })
