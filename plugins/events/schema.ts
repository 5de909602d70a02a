import { Type, type Static } from '@sinclair/typebox'
import { CursorCollection } from '../../schemas/collection.js'
import { standardProperties } from '../../schemas/standard.js'
import { Nullable, UpperSnakeEnum } from '../../schemas/types.js'

const Url = Type.String({ format: 'uri', minLength: 1, maxLength: 2000, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'Where deliveries are posted: an https:// URL of a public host.' })
const Description = Nullable(Type.String({ minLength: 0, maxLength: 2000, description: 'What the subscription is for.' }))
const Active = Type.Boolean({ description: 'Whether events are delivered; false once as many deliveries in a row failed as the service allows (maxFailures, 20 by default).' })

/**
 * The event types a subscription names. Not an enum: the contract's names (`author.created`)
 * are no UPPER_SNAKE_CASE values, so the routes check membership themselves (`unknownEvents`).
 */
export const EVENT_TYPE = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/
export const EVENT_TYPE_MAX_LENGTH = 100

export function EventTypes (types: readonly string[]) {
  return Type.Array(Type.String({ minLength: 1, maxLength: EVENT_TYPE_MAX_LENGTH, pattern: EVENT_TYPE.source }), {
    minItems: 1, maxItems: types.length, uniqueItems: true, description: `The event types delivered, among: ${types.join(', ')}.`
  })
}

/** A subscription as read (the secret only in the answer to its creation). */
export function Subscription (types: readonly string[]) {
  return Type.Object({
    id: standardProperties.id,
    // The contract's kind has a hyphen, which the Ref builder's entity names do not allow.
    ref: Type.String({ pattern: '^svc:webhook-subscription::[A-Za-z0-9._~-]+$', maxLength: 200, readOnly: true, description: 'URN-like reference of the subscription.' }),
    url: Url,
    events: EventTypes(types),
    description: Description,
    active: Active,
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^whsec_[A-Za-z0-9+/=]+$', readOnly: true, description: 'The Standard Webhooks secret that signs deliveries: shown once, when the subscription is created.' })),
    createdDateTime: standardProperties.createdDateTime,
    createdBy: Nullable(standardProperties.createdBy),
    modifiedDateTime: standardProperties.modifiedDateTime,
    modifiedBy: Nullable(standardProperties.modifiedBy),
    etag: standardProperties.etag
  }, { additionalProperties: false, title: 'WebhookSubscription', description: 'Where events of this execution context are delivered.' })
}

export function SubscriptionCreate (types: readonly string[]) {
  return Type.Object({
    url: Url,
    events: EventTypes(types),
    description: Type.Optional(Description)
  }, { additionalProperties: false })
}

export function SubscriptionPatch (types: readonly string[]) {
  return Type.Object({
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes(types)),
    description: Type.Optional(Description),
    active: Type.Optional(Active)
  }, { additionalProperties: false, description: 'A JSON Merge Patch of the subscription.' })
}

export const Delivery = Type.Object({
  id: standardProperties.id,
  webhookId: Type.String({ minLength: 1, maxLength: 100, description: 'The webhook-id header of every attempt: receivers deduplicate by it.' }),
  eventType: Type.String({ minLength: 1, maxLength: 100, description: 'The event delivered.' }),
  status: UpperSnakeEnum(['PENDING', 'SUCCEEDED', 'FAILED'], { description: 'PENDING until an attempt succeeds (SUCCEEDED) or the retry schedule is exhausted (FAILED).' }),
  attemptCount: Type.Integer({ minimum: 0, maximum: 2147483647, description: 'Attempts made.' }),
  lastStatusCode: Nullable(Type.Integer({ minimum: 100, maximum: 599, description: 'The status of the last answer; null when none came.' })),
  lastAttemptDateTime: Nullable(standardProperties.modifiedDateTime, { description: 'When the last attempt was made.' }),
  nextAttemptDateTime: Nullable(standardProperties.modifiedDateTime, { description: 'When the next attempt is due, while PENDING.' }),
  createdDateTime: standardProperties.createdDateTime
}, { additionalProperties: false, title: 'WebhookDelivery', description: 'One event for one subscription, and how its delivery went.' })

export type DeliveryBody = Static<typeof Delivery>
export const DeliveryCollection = CursorCollection(Delivery)
