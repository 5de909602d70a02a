import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { migrate } from '../../store/migrate.js'
import type { Store } from '../../store/types.js'
import { DEFAULT_DELIVERY_RETENTION, WebhookDeliveries } from '../../store/webhook-deliveries.js'
import { schedulePurge } from '../shared/purge-timer.js'
import { optionChecks, refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { needs } from '../shared/dependencies.js'

/** Options of the `webhooks` plugin: where deliveries are recorded, and the transport rules. */
export interface WebhooksPluginOptions {
  /** The store recording delivery ids, the same one the handlers write to. Required. */
  store: Store
  /** Table of the recorded delivery ids, created by the store's migrations. Default `webhook_deliveries`. */
  table?: string
  /**
   * Accept deliveries over plain HTTP. For local development only: the convention wants
   * HTTPS (directly, or through a trusted proxy's `X-Forwarded-Proto`). Default false.
   */
  allowHttp?: boolean
  /** Largest body, in bytes, of a webhook route that sets none. Default 1 MiB. */
  bodyLimit?: number
  /**
   * Milliseconds a delivery id is remembered, so that a repeated delivery is acknowledged and not
   * applied twice; longer than the producer goes on retrying. Default 7 days.
   */
  retention?: number
  /** How often ids past the retention are deleted, in milliseconds (at most 2 147 483 647, about 24.8 days); 0 never. Default the retention, at most 1 h. */
  purgeInterval?: number
  /** The clock ids are received and purged by: default the database's. Tests pass one they move. */
  now?: () => Date
}

/** What `registerWebhook` needs from the plugin. */
export interface WebhookSettings {
  readonly store: Store
  readonly deliveries: WebhookDeliveries
  readonly allowHttp: boolean
  readonly bodyLimit: number
}

/** The delivery being handled, on `request.webhook`. */
export interface WebhookDelivery {
  /** The producer: the scope of delivery ids (the event name on a generic path). */
  producer: string
  /** The delivery's id, from the verifier; null when the producer sends none. */
  id: string | null
  /** The exact bytes received, as signed. */
  rawBody: Buffer
}

const defaults = {
  table: 'webhook_deliveries',
  allowHttp: false,
  bodyLimit: 1024 * 1024
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhooks plugin's settings, read by `registerWebhook`. */
    webhooks: WebhookSettings
  }
  interface FastifyRequest {
    /** On a webhook route, the verified delivery (set before validation); null elsewhere. */
    webhook: WebhookDelivery | null
  }
}

const OPTION_KEYS: OptionKeys<WebhooksPluginOptions> = { store: true, table: true, allowHttp: true, bodyLimit: true, retention: true, purgeInterval: true, now: true }
const HOUR = 60 * 60 * 1000

async function webhooksPlugin (fastify: FastifyInstance, opts: WebhooksPluginOptions): Promise<void> {
  refuseUnknownOptions('webhooks', opts, OPTION_KEYS)
  const store = opts.store
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') {
    throw new TypeError(`webhooks plugin: store must be a Store (createStore), got ${shownValue(store)}`)
  }
  const table = opts.table ?? defaults.table
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,57}$/.test(table)) {
    throw new TypeError(`webhooks plugin: table must be a lowercase SQL name of at most 58 characters, got ${shownValue(table)}`)
  }
  const allowHttp = opts.allowHttp ?? defaults.allowHttp
  if (typeof allowHttp !== 'boolean') throw new TypeError(`webhooks plugin: allowHttp must be a boolean, got ${shownValue(allowHttp)}`)
  const bodyLimit = opts.bodyLimit ?? defaults.bodyLimit
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw new TypeError(`webhooks plugin: bodyLimit must be a positive integer of bytes, got ${shownValue(bodyLimit)}`)

  const retention = opts.retention ?? DEFAULT_DELIVERY_RETENTION
  if (!Number.isSafeInteger(retention) || retention < 1) throw new TypeError(`webhooks plugin: retention must be a positive integer of milliseconds, got ${shownValue(retention)}`)
  // The retention is only compared with timestamps, in SQL; the interval is a timer's.
  const purgeInterval = optionChecks('webhooks plugin').timerMillis('purgeInterval', opts.purgeInterval ?? Math.min(retention, HOUR), 'never')
  const now = opts.now
  if (now !== undefined && typeof now !== 'function') throw new TypeError(`webhooks plugin: now must be a function returning a Date, got ${shownValue(now)}`)

  const deliveries = new WebhookDeliveries(table, { retention, ...(now === undefined ? {} : { now }) })
  await migrate(store, deliveries.migrations())
  // Old ids go now and then on a timer, in batches, by one instance at a time (store/purge.ts).
  schedulePurge(fastify, purgeInterval, async () => await deliveries.purge(store), {
    done: 'webhooks: old delivery ids deleted',
    failed: 'webhooks: purging old delivery ids failed; trying again later'
  })
  if (allowHttp) fastify.log.warn('webhooks plugin: allowHttp is on, deliveries are accepted over plain HTTP; for local development only')

  fastify.decorate('webhooks', { store, deliveries, allowHttp, bodyLimit })
  // Guarded: a context registered below another one with its own options inherits it.
  if (!fastify.hasRequestDecorator('webhook')) fastify.decorateRequest('webhook', null)
}

export { registerWebhook, type WebhookApply, type WebhookDefinition, type WebhookHandler, type WebhookMethod } from './route.js'
export { WEBHOOK_PREFIX } from './paths.js'
export { standardWebhooks, signStandardWebhook, type StandardWebhooksOptions } from './standard.js'
export { sharedToken, type SharedTokenOptions } from './token.js'
export type { WebhookVerifier, VerifiedDelivery, VerifierDocumentation } from './verifier.js'
// Its refusals are problems: the problem plugin renders them.
export default fp(needs('webhooks', ['problem'], webhooksPlugin), { fastify: '5.x', name: 'svc-webhooks' })
