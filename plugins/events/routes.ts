import { randomBytes, randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify'
import { Id } from '../../schemas/types.js'
import type { DeliveryRow, EtagCondition, EventTables, SubscriptionRow } from '../../store/events.js'
import { HELD, type WriteClaim } from '../../store/statement-parts.js'
import { SerializationFailure } from '../../store/errors.js'
import type { Queryable, Store } from '../../store/types.js'
import { evaluatePreconditions, evaluateRead, notModified, preconditionProblem, writableTags, type Preconditions } from '../conditional/index.js'
import { claimedInWrite, claimOf, type IdempotencyRecord } from '../idempotency/index.js'
import { WRITE_RETRIES } from '../idempotency/internal.js'
import { invalidData, problems, unavailableProblem } from '../problem/index.js'
import { collectionQueryOf, createFieldMap, registerCollection } from '../query/index.js'
import { newEtag } from '../resource/internal.js'
import { NoQuery } from '../shared/no-query.js'
import { pathOf } from '../shared/url.js'
import { webhookIdOf } from './dispatcher.js'
import { refuseTarget, type Resolver } from './targets.js'
import { Delivery, DeliveryCollection, Subscription, SubscriptionCreate, SubscriptionPatch, type DeliveryBody } from './schema.js'
import { CursorCollection } from '../../schemas/collection.js'

type Row = Record<string, unknown>

export interface SubscriptionRoutes {
  path: string
  store: Store
  tables: EventTables
  eventTypes: readonly string[]
  readScopes: readonly string[]
  writeScopes: readonly string[]
  /** The read scopes a subscription to an event type also needs, by type (the `eventReadScopes` option). */
  typeScopes: ReadonlyMap<string, readonly string[]>
  allowInsecure: boolean
  /** The setting that allows what `allowInsecure` allows, named in the refusals; null: none. */
  allowedBy: string | null
  resolver: Resolver
  now: () => Date
}

const NO_CONTENT = Type.Null({ description: 'No Content' })
const PATCH_TYPES = ['application/merge-patch+json', 'application/json']
const ETAG_HEADER = (status: number): Record<string, Record<string, unknown>> => ({ [status]: { etag: { type: 'string', maxLength: 1024, description: 'Strong entity tag of the subscription; send it in If-Match.' } } })

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`

/** A subscription as read; `withSecret` only in the answer to its creation. */
export function subscriptionBody (s: SubscriptionRow, withSecret = false): Row {
  const body: Row = {
    id: s.id,
    ref: `svc:webhook-subscription::${s.id}`,
    url: s.url,
    events: s.events,
    description: s.description,
    active: s.active
  }
  if (withSecret) body.secret = s.secret
  return { ...body, createdDateTime: s.createdDateTime, createdBy: s.createdBy, modifiedDateTime: s.modifiedDateTime, modifiedBy: s.modifiedBy, etag: s.etag }
}

export function deliveryBody (d: DeliveryRow): DeliveryBody {
  return {
    id: d.id,
    webhookId: webhookIdOf(d.id),
    eventType: d.eventType,
    status: d.status,
    attemptCount: d.attemptCount,
    lastStatusCode: d.lastStatusCode,
    lastAttemptDateTime: d.lastAttemptDateTime,
    nextAttemptDateTime: d.nextAttemptDateTime,
    createdDateTime: d.createdDateTime
  }
}

/**
 * A write decided on the subscription as read, with no transaction held while it is decided:
 * `attempt` reads (on `db`), decides, and writes only while the subscription is still as read,
 * and answers undefined when it was not (changed or deleted since), to be decided again. A
 * deadlock is run again too: a DELETE takes the subscription's deliveries along in its own order
 * while the dispatcher records attempts in theirs, and the database rolls one of the two back.
 * Still overtaken after WRITE_RETRIES more, it is decided once more in a transaction with the
 * row locked as it is read (`lock`), as a resource's write is, so that a busy subscription
 * does not answer 409 to every writer but the fastest.
 */
async function decided<T> (store: Store, attempt: (db: Queryable, lock: boolean) => Promise<T | undefined>): Promise<T> {
  for (let n = 0; n <= WRITE_RETRIES; n++) {
    try {
      const value = await attempt(store, false)
      if (value !== undefined) return value
    } catch (err) {
      if (!(err instanceof SerializationFailure)) throw err
    }
  }
  return await store.transaction(async (tx) => {
    const value = await attempt(tx, true)
    // Read under its lock, the subscription cannot change before the write.
    if (value === undefined) throw new SerializationFailure()
    return value
  }, { retries: WRITE_RETRIES })
}

/** A write at the ETag it was decided on. */
const seen = (etag: string): EtagCondition => ({ allowed: [etag], refused: null })

/** The resource name a subscription's `Svc-Idempotency-Key` is scoped by. */
const KEYS = 'webhook-subscriptions'

async function stored<T> (fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    // Still losing to concurrent writes once its own retries are spent: the client's retry is
    // what is left, as for any resource's write (resource/problems.ts).
    if (err instanceof SerializationFailure) throw problems.conflict('The webhook subscription was changed by a concurrent request; retry.', { cause: err })
    throw unavailableProblem(err)
  }
}

/**
 * The subscriptions as a resource (reference contract, "Outgoing events"): POST (201, the
 * secret shown once), GET collection and item, PATCH (a merge patch; 204 with the new ETag),
 * DELETE (204, also when there is none), each in the execution context of the request; and
 * the deliveries of one, newest first, with the retry action.
 */
export function registerSubscriptionRoutes (fastify: FastifyInstance, r: SubscriptionRoutes): void {
  const { path, store, tables } = r
  const item = `${path}/:subscriptionId`
  const params = Type.Object({ subscriptionId: Id() })
  const entity = Subscription(r.eventTypes)
  const tags = ['webhook-subscriptions']
  const read = (extra: Record<string, unknown> = {}): FastifyContextConfig => ({ auth: { scopes: [...r.readScopes] }, ...extra }) as FastifyContextConfig
  const write = (extra: Record<string, unknown> = {}): FastifyContextConfig => ({ auth: { scopes: [...r.writeScopes] }, ...extra }) as FastifyContextConfig
  const prefix = fastify.prefix
  const itemPath = (id: string): string => `${prefix}${path}/${encodeURIComponent(id)}`
  const idOf = (request: FastifyRequest): string => (request.params as { subscriptionId: string }).subscriptionId
  const notFound = (id: string): Error => problems.notFound(`No webhook subscription has the id ${id} in this execution context; check the id.`, { instance: itemPath(id) })

  /**
   * Runs a write with the claim of the request's `Svc-Idempotency-Key` in its own statement
   * (`claimedInWrite`), when the idempotency plugin is registered (the resource plugin registers
   * it): the key is kept exactly when the write is. A write that finds the key taken (`HELD`),
   * or that is refused, answers for the request that holds it, if one does: a repeated POST, or
   * a key reused for another request, is a 409; a retried PATCH or DELETE gets its first
   * answer's status and ETag (`replay`), whatever it would be refused for now (its If-Match may
   * be stale since). Without a key, the write alone.
   */
  async function keyed<T> (request: FastifyRequest, instance: string, status: number, etag: string | null, write: (claim: WriteClaim<IdempotencyRecord> | null) => Promise<T | typeof HELD>): Promise<{ value: T } | { replay: number, etag: string | null }> {
    const claim = fastify.hasDecorator('idempotency') ? claimOf(request, KEYS, instance, status) : null
    if (claim === null) return { value: await stored(async () => await write(null)) as T }
    claim.etag = etag
    // A write refused once its retries are spent (409) answers for the key's holder too.
    return await stored(async () => await claimedInWrite(store, fastify.idempotency, claim, async (held) => await stored(async () => await write(held))))
  }

  const known = new Set(r.eventTypes)
  function checkEvents (events: readonly string[] | undefined): void {
    if (events === undefined) return
    const items = events.flatMap((e, i) => known.has(e) ? [] : [{ code: 'INPUT_INVALID', message: `must be one of ${r.eventTypes.join(', ')}`, field: `events[${i}]`, source: 'body' as const, value: e }])
    if (items.length > 0) throw invalidData(items)
  }

  /**
   * Deliveries to the subscription's URL will carry the entities of `events`: the caller must be
   * able to read them. Without a principal (no auth plugin, a gateway checks tokens) there are no scopes to ask for.
   */
  function missingScopes (request: FastifyRequest, events: readonly string[]): string[] {
    const principal = request.principal
    if (principal == null) return []
    return [...new Set(events.flatMap(e => r.typeScopes.get(e) ?? []))].filter(s => !principal.scopes.includes(s))
  }
  const mayRead = (request: FastifyRequest, events: readonly string[]): boolean => missingScopes(request, events).length === 0

  function checkReadable (request: FastifyRequest, events: readonly string[]): void {
    const missing = missingScopes(request, events)
    if (missing.length === 0) return
    const which = missing.length === 1 ? `the scope ${missing[0] as string}` : `the scopes ${missing.join(', ')}`
    const types = events.filter(e => r.typeScopes.get(e)?.some(s => missing.includes(s)) === true)
    const path = pathOf(request.url)
    throw problems.forbidden(`${request.method} ${path} is refused: the access token does not grant ${which} that a subscription to ${types.join(', ')} needs, since its deliveries carry those entities; request a token with ${missing.length === 1 ? 'it' : 'them'}, or leave ${types.length === 1 ? 'that event' : 'those events'} out.`, {
      instance: path,
      // RFC 6750 §3.1: insufficient_scope names the scopes the request needs.
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${[...r.writeScopes, ...missing].join(' ')}"` }
    })
  }

  async function checkTarget (url: string): Promise<void> {
    const refusal = await refuseTarget(url, r.allowInsecure, r.resolver, r.allowedBy)
    if (refusal !== null) {
      // The credentials refused are not sent back either, nor a URL that cannot be parsed and
      // may hold some.
      const value = refusal.code === 'URL_CREDENTIALS' || (refusal.code === 'INPUT_INVALID' && url.includes('@')) ? {} : { value: url }
      throw invalidData([{ code: refusal.code, message: refusal.message, field: 'url', source: 'body', ...value }],
        `The url breaks a rule for webhook targets: it ${refusal.message}.`)
    }
  }

  fastify.post(path, {
    schema: { tags, querystring: NoQuery, summary: 'Create a webhook subscription', body: SubscriptionCreate(r.eventTypes), response: { 201: entity } },
    // 409: a Svc-Idempotency-Key used before (idempotency plugin).
    config: write({ problems: [409] })
  }, async (request, reply) => {
    const body = request.body as { url: string, events: string[], description?: string | null }
    checkEvents(body.events)
    checkReadable(request, body.events)
    await checkTarget(body.url)
    const id = randomUUID()
    // A POST's key is never replayed (409): the outcome is the new subscription.
    const outcome = await keyed(request, itemPath(id), 201, null, async (claim) => await tables.insertSubscription(store, {
      ctx: request.executionContext, id, url: body.url, events: body.events, description: body.description ?? null, secret: newSecret(), etag: newEtag(), createdBy: request.principal?.sub ?? null
    }, r.now(), claim?.part ?? null)) as { value: SubscriptionRow }
    const created = outcome.value
    reply.code(201).header('location', itemPath(id)).header('etag', created.etag)
    return subscriptionBody(created, true)
  })

  const subscriptionFields = createFieldMap([
    { path: 'id', type: 'string', filterable: false },
    { path: 'active', type: 'boolean' },
    { path: 'createdDateTime', type: 'date-time', filterable: false, sortable: true }
  ])
  registerCollection(fastify, {
    url: path,
    collection: { fields: subscriptionFields, offset: false, defaultOrdering: [{ field: 'createdDateTime', direction: 'asc' }] },
    search: false,
    schema: { tags, summary: 'List the webhook subscriptions', response: { 200: CursorCollection(entity) } },
    config: read(),
    handler: async function (request, reply) {
      const q = collectionQueryOf(request)
      const page = await stored(async () => await tables.pageSubscriptions(store, q, subscriptionFields, request.executionContext))
      return await reply.sendCollection({ ...page, items: page.items.map(s => subscriptionBody(s)) })
    }
  })

  fastify.get(item, {
    schema: { tags, querystring: NoQuery, summary: 'Get a webhook subscription', params, response: { 200: entity } },
    // As an author's GET (reference-service.md: "as for authors"): a stale If-Match is a 412,
    // which the document then lists with both conditional headers and the 304.
    config: read({ problems: [404, 412] })
  }, async (request, reply) => {
    const id = idOf(request)
    const s = await stored(async () => await tables.getSubscription(store, request.executionContext, id))
    if (s === null) throw notFound(id)
    reply.header('etag', s.etag)
    if (evaluateRead(request.preconditions, s.etag, itemPath(id), s.modifiedDateTime)) return await notModified(reply).send()
    return subscriptionBody(s)
  })

  fastify.patch(item, {
    schema: { tags, querystring: NoQuery, summary: 'Change a webhook subscription (JSON Merge Patch)', params, body: SubscriptionPatch(r.eventTypes), response: { 204: NO_CONTENT } },
    config: write({ problems: [404, 409, 412], conventions: { contentTypes: PATCH_TYPES }, openapi: { responseHeaders: ETAG_HEADER(204) } })
  }, async (request, reply) => {
    const id = idOf(request)
    const patch = request.body as Partial<Pick<SubscriptionRow, 'url' | 'events' | 'description' | 'active'>>
    checkEvents(patch.events)
    if (patch.url !== undefined) await checkTarget(patch.url)
    const pre = request.preconditions as Preconditions | null
    const ctx = request.executionContext
    const change = { url: patch.url, events: patch.events, description: patch.description, active: patch.active, etag: newEtag(), modifiedBy: request.principal?.sub ?? null }
    // A new URL receives the events kept, as new events are received at the URL kept: a new URL
    // alone applies only while the events stored are all ones the caller may read, which its
    // statement checks (none to check when the caller may read every type).
    const readable = patch.events === undefined || mayRead(request, patch.events)
    const tags = readable ? writableTags(pre) : null
    const within = patch.events === undefined && patch.url !== undefined ? r.eventTypes.filter(e => mayRead(request, [e])) : r.eventTypes
    const writable = tags === null || within.length === r.eventTypes.length ? tags : { ...tags, eventsWithin: within }
    const outcome = await keyed(request, itemPath(id), 204, change.etag, async (claim) => await decided(store, async (db, lock) => {
      // Decided on its conditions alone where they allow it: one statement.
      if (writable !== null) {
        const changed = await tables.updateSubscription(db, ctx, id, change, r.now(), writable, claim?.part ?? null)
        if (changed !== null) return changed
      }
      // Else read, decided, then written at the ETag read (with the key's claim): two statements.
      const s = await tables.getSubscription(db, ctx, id, lock)
      if (s === null) throw notFound(id)
      if (patch.url !== undefined || patch.events !== undefined) checkReadable(request, patch.events ?? s.events)
      const verdict = evaluatePreconditions(pre, s.etag, {}, s.modifiedDateTime)
      if (verdict.kind === 'precondition-failed') throw preconditionProblem({ method: 'PATCH', path: itemPath(id), header: verdict.header })
      return await tables.updateSubscription(db, ctx, id, change, r.now(), seen(s.etag), claim?.part ?? null) ?? undefined
    }))
    const answered = 'value' in outcome ? outcome.value.etag : outcome.etag
    if (answered !== null) reply.header('etag', answered)
    return await reply.code(204).send()
  })

  fastify.delete(item, {
    schema: { tags, querystring: NoQuery, summary: 'Delete a webhook subscription and its deliveries', params, response: { 204: NO_CONTENT } },
    config: write({ problems: [409, 412] })
  }, async (request, reply) => {
    const id = idOf(request)
    const pre = request.preconditions as Preconditions | null
    const ctx = request.executionContext
    const writable = writableTags(pre)
    await keyed(request, itemPath(id), 204, null, async (claim) => await decided(store, async (db, lock) => {
      // Decided on its conditions alone where they allow it: one statement.
      if (writable !== null) {
        const deleted = await tables.deleteSubscription(db, ctx, id, writable, claim?.part ?? null)
        if (deleted !== false) return deleted
      }
      const s = await tables.getSubscription(db, ctx, id, lock)
      // None there: 204 whatever the conditions, as a DELETE of an author that is gone answers;
      // the key is this request's all the same.
      if (s === null) return claim === null || await claim.take(db) === null ? true : HELD
      const verdict = evaluatePreconditions(pre, s.etag, {}, s.modifiedDateTime)
      if (verdict.kind === 'precondition-failed') throw preconditionProblem({ method: 'DELETE', path: itemPath(id), header: verdict.header })
      const deleted = await tables.deleteSubscription(db, ctx, id, seen(s.etag), claim?.part ?? null)
      return deleted === false ? undefined : deleted
    }))
    return await reply.code(204).send()
  })

  const deliveryFields = createFieldMap([
    { path: 'id', type: 'string', filterable: false },
    { path: 'status', type: 'enum', enumValues: ['PENDING', 'SUCCEEDED', 'FAILED'] },
    { path: 'eventType', type: 'string' },
    { path: 'createdDateTime', type: 'date-time', filterable: false, sortable: true }
  ])
  registerCollection(fastify, {
    url: `${item}/deliveries`,
    collection: { fields: deliveryFields, offset: false, defaultOrdering: [{ field: 'createdDateTime', direction: 'desc' }] },
    search: false,
    schema: { tags, summary: 'List the deliveries of a webhook subscription, newest first', params, response: { 200: DeliveryCollection } },
    config: read({ problems: [404] }),
    handler: async function (request, reply) {
      const id = idOf(request)
      const q = collectionQueryOf(request)
      // Deliveries show that their subscription exists: only an empty page asks, in the same statement.
      const page = await stored(async () => await tables.pageDeliveries(store, q, deliveryFields, request.executionContext, id))
      if (page === null) throw notFound(id)
      return await reply.sendCollection({ ...page, items: page.items.map(deliveryBody) })
    }
  })

  fastify.post(`${item}/deliveries/:deliveryId/retry`, {
    schema: { tags, querystring: NoQuery, summary: 'Deliver a FAILED delivery again now', params: Type.Object({ subscriptionId: Id(), deliveryId: Id() }), response: { 200: Delivery } },
    config: write({ problems: [404, 409] })
  }, async (request, wrapped) => {
    const { subscriptionId, deliveryId } = request.params as { subscriptionId: string, deliveryId: string }
    const instance = `${itemPath(subscriptionId)}/deliveries/${encodeURIComponent(deliveryId)}`
    const ctx = request.executionContext
    // One statement; only when it retried nothing is the delivery read, to say why.
    const outcome = await keyed(request, instance, 200, null, async (claim) => {
      const retried = await tables.retry(store, ctx, subscriptionId, deliveryId, r.now(), claim?.part ?? null)
      if (retried !== null) return retried
      const current = await tables.getDelivery(store, ctx, subscriptionId, deliveryId)
      if (current === null) throw problems.notFound(`The webhook subscription ${subscriptionId} has no delivery ${deliveryId}; check both ids.`, { instance })
      throw problems.conflict(`The delivery ${deliveryId} is ${current.status}; only a FAILED delivery can be retried.`, {
        instance,
        context: [{ code: 'INVALID_STATE_TRANSITION', message: 'retry applies from FAILED only', value: current.status }]
      })
    }) as { value: DeliveryRow }
    wrapped.code(200)
    return deliveryBody(outcome.value)
  })
}
