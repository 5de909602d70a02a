import fp from 'fastify-plugin'
import fastJson, { type Schema as SerializerSchema } from 'fast-json-stringify'
import type { FastifyInstance } from 'fastify'
import { conventionFormats } from '../../schemas/formats.js'
import { EventTables, type ClaimedDelivery, type OutboxEvent } from '../../store/events.js'
import { migrate } from '../../store/migrate.js'
import type { Queryable, Store } from '../../store/types.js'
import type { ServedResource } from '../resource/index.js'
import { pastTense } from '../resource/internal.js'
import { parseDuration } from '../shared/duration.js'
import { needs, scopesNeedAuth } from '../shared/dependencies.js'
import { retentionOptions, schedulePurge } from '../shared/purge-timer.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'
import { createDownstream, type DownstreamOptions } from '../downstream/index.js'
import { Announcer } from './announcer.js'
import { deliveryClientOptions, Dispatcher } from './dispatcher.js'
import type { ServiceIdentity } from './headers.js'
import { registerSubscriptionRoutes } from './routes.js'
import { systemResolver, type Resolver } from './targets.js'
import { WantedEvents } from './wanted.js'
import { EVENT_TYPE, EVENT_TYPE_MAX_LENGTH } from './schema.js'

/** Options of the `events` plugin: outgoing events through a transactional outbox, delivered to subscribers. */
export interface EventsPluginOptions {
  /** The store of the outbox, the same one the changes are written to. Required. */
  store: Store
  /**
   * The store this instance's deliveries are claimed and recorded through: the same database
   * as `store`. Default `store`. A store of its own with a connection or two keeps claims from
   * waiting behind requests for the pool's connections when the service is busy.
   */
  workerStore?: Store
  /** This service, as deliveries name it in `Svc-Service` and `User-Agent`. Required. */
  service: ServiceIdentity
  /** Path of the subscriptions collection; `false` serves no routes. Default `/webhook-subscriptions`. */
  path?: string | false
  /** Token scopes to read subscriptions and deliveries. Default `['webhooks:read']`. */
  readScopes?: readonly string[]
  /** Token scopes to create, change, delete subscriptions and retry deliveries. Default `['webhooks:write']`. */
  writeScopes?: readonly string[]
  /**
   * A subscription's deliveries carry the entities its events are about, so naming a resource's
   * events in a subscription (creating it, or changing its events or its URL) also needs that
   * resource's read scopes: without them a token of `writeScopes` alone could read every entity
   * through its own endpoint. Default true; `false` asks for `writeScopes` alone.
   */
  eventReadScopes?: boolean
  /**
   * Serve the routes with their scopes although the auth plugin, which alone checks them, is not
   * registered (a gateway in front checks the tokens, or a test): they then let every caller in.
   * Default false: the boot stops, naming the scopes.
   */
  withoutAuth?: boolean
  /**
   * The event types a subscription may name. Default: those of the resources the resource
   * plugin serves (`<name>.created`, `.updated`, `.deleted`, `.restored` when soft-deletable,
   * and each action's past tense), plus `extraEventTypes`.
   */
  eventTypes?: readonly string[]
  /** Event types an application emits itself, added to the default list. Default none. */
  extraEventTypes?: readonly string[]
  /** Delays before each retry: milliseconds, or a comma-separated list of durations (`5s,5m,30m`). Default `5s,5m,30m,2h,5h,10h,10h`. */
  retrySchedule?: string | readonly number[]
  /** Accept `http://` URLs and internal addresses (local development and tests only). Default false. */
  allowInsecureTargets?: boolean
  /**
   * How the refusal of an `http://` URL or an internal address names the setting that allows it
   * (`allowInsecureTargets`), so that a developer knows what to turn on: a service that reads it
   * from its environment names its variable (`'WEBHOOK_ALLOW_INSECURE_TARGETS=true'`); `false`
   * names nothing. Default `'the allowInsecureTargets option of the events plugin'`.
   */
  allowInsecureTargetsHint?: string | false
  /** How long an attempt waits for a 2xx, in ms. Default 15 000. */
  timeoutMillis?: number
  /** Deliveries FAILED in a row that switch a subscription off. Default 20. */
  maxFailures?: number
  /** Whether this instance delivers; `false` only records events. Default true. */
  worker?: boolean
  /**
   * How often an idle instance looks for due deliveries, in ms: a safety net, since the database
   * notifies the instances of every delivery written (LISTEN/NOTIFY) and each instance looks
   * again when a retry it recorded comes due. Behind PgBouncer, where nothing listens, this poll
   * is how an instance learns of events another instance wrote. It also bounds how late the
   * deliveries of an instance that died, or another instance's retries, are attempted. Default 5000.
   */
  pollMillis?: number
  /** Attempts this instance holds: in flight, or claimed and waiting their turn. Default 128. */
  concurrency?: number
  /** Attempts in flight on this instance to one subscription. Default 32. */
  perSubscription?: number
  /** The `User-Agent` of deliveries, as the downstream client takes it. Default `{ product: <service name>, version: 1, comment: 'webhook delivery' }`. */
  userAgent?: DownstreamOptions['userAgent']
  /** How long an ended delivery (SUCCEEDED or FAILED) stays listed, in ms; then it is deleted. Default 7 days. */
  retention?: number
  /** How often ended deliveries past the retention are deleted, in ms; 0 never. Default the retention, at most 1 h. */
  purgeInterval?: number
  /** Table names: `<prefix>_subscriptions`, `<prefix>_deliveries`. Default `event`. */
  tablePrefix?: string
  /** Resolves host names, for the target checks. Default the system's. Tests pass a stub. */
  resolver?: Resolver
  /** The clock of timestamps and schedules. Default the system's. Tests pass one they move. */
  now?: () => Date
}

/** An event a write declares: in the execution context it happened in, with the entity after the change. */
export interface EventInput {
  ctx: string
  /** E.g. `document.created`. */
  type: string
  /** What subscribers receive as `data`: JSON, or a JSON text already serialized. */
  data: unknown
  /** The requestId of the request that made the change; null without one. */
  requestId?: string | null
}

/** What the plugin decorates the instance with. */
export interface Events {
  readonly tables: EventTables
  /** The event types subscriptions may name. */
  readonly types: readonly string[]
  /**
   * Writes the events to the outbox in `tx`, the transaction of the change: they are
   * delivered exactly when it commits. One statement whatever the number of events and
   * subscribers; events of one call share `ctx` and `requestId`.
   */
  emit: (tx: Queryable, events: EventInput | readonly EventInput[]) => Promise<void>
  /** Looks for due deliveries now on this instance (after a commit that emitted events). */
  wake: () => void
}

declare module 'fastify' {
  interface FastifyInstance {
    events: Events
  }
}

const HOUR = 60 * 60 * 1000
// A busy instance tells the others of its new deliveries at most this often (announcer.ts).
const ANNOUNCE_GAP_MILLIS = 25
const SERVICE_NAME = /^[a-z0-9-]{1,60}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h'
const defaults = {
  path: '/webhook-subscriptions',
  readScopes: ['webhooks:read'],
  writeScopes: ['webhooks:write'],
  eventReadScopes: true,
  timeoutMillis: 15_000,
  maxFailures: 20,
  worker: true,
  pollMillis: 5000,
  concurrency: 128,
  perSubscription: 32,
  tablePrefix: 'event',
  retention: 7 * 24 * HOUR
} as const
const OPTION_KEYS: OptionKeys<EventsPluginOptions> = {
  store: true,
  workerStore: true,
  service: true,
  path: true,
  readScopes: true,
  writeScopes: true,
  eventReadScopes: true,
  withoutAuth: true,
  eventTypes: true,
  extraEventTypes: true,
  retrySchedule: true,
  allowInsecureTargets: true,
  allowInsecureTargetsHint: true,
  timeoutMillis: true,
  maxFailures: true,
  worker: true,
  pollMillis: true,
  concurrency: true,
  perSubscription: true,
  userAgent: true,
  tablePrefix: true,
  retention: true,
  purgeInterval: true,
  resolver: true,
  now: true
}

/** Milliseconds of each delay of a schedule such as `5s,5m,30m`; null when one is no duration. */
export function parseRetrySchedule (value: string): number[] | null {
  const parts = value.split(',').map(s => s.trim())
  const out: number[] = []
  for (const p of parts) {
    const ms = parseDuration(p)
    if (ms === null || ms < 0) return null
    out.push(ms)
  }
  return out
}

const checks = optionChecks('events plugin')
const fail: OptionChecks['fail'] = checks.fail
const positiveInteger: OptionChecks['positiveInteger'] = checks.positiveInteger

function stringList (name: string, value: unknown): string[] {
  if (!Array.isArray(value) || value.some(s => typeof s !== 'string' || s === '')) fail(name, value, 'an array of non-empty strings')
  return [...value as string[]]
}

/** The events a served resource's writes emit. */
function resourceEventTypes (served: ServedResource): string[] {
  const def = served.definition
  const verbs = ['created', 'updated', 'deleted']
  if (def.api.softDelete) verbs.push('restored')
  for (const a of def.api.actions) if (a.name !== 'restore') verbs.push(pastTense(a.name))
  return verbs.map(v => `${def.name}.${v}`)
}

function payloadOf (type: string, at: string, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":"${at}","data":${data}}`
}

async function eventsPlugin (fastify: FastifyInstance, opts: EventsPluginOptions): Promise<void> {
  refuseUnknownOptions('events', opts, OPTION_KEYS)
  const { store, service } = opts
  const isStore = (s: unknown): boolean => typeof s === 'object' && s !== null && typeof (s as Store).transaction === 'function'
  if (!isStore(store)) fail('store', store, 'a Store (createStore)')
  const workerStore = opts.workerStore ?? store
  if (!isStore(workerStore)) fail('workerStore', workerStore, 'a Store (createStore) on the same database as store')
  if (typeof service !== 'object' || service === null || typeof service.id !== 'string' || !UUID.test(service.id) || typeof service.name !== 'string' || !SERVICE_NAME.test(service.name)) {
    fail('service', service, '{ id: <a UUID>, name: <[a-z0-9-]{1,60}> }')
  }
  const path = opts.path ?? defaults.path
  if (path !== false && (typeof path !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(path))) fail('path', path, 'an absolute path such as /v1/webhook-subscriptions, or false')
  const readScopes = stringList('readScopes', opts.readScopes ?? defaults.readScopes)
  const writeScopes = stringList('writeScopes', opts.writeScopes ?? defaults.writeScopes)
  scopesNeedAuth(fastify, 'events', opts.withoutAuth, path === false ? [] : [...readScopes, ...writeScopes])
  const eventReadScopes = opts.eventReadScopes ?? defaults.eventReadScopes
  if (typeof eventReadScopes !== 'boolean') fail('eventReadScopes', eventReadScopes, 'a boolean')
  const rawSchedule = opts.retrySchedule ?? DEFAULT_RETRY_SCHEDULE
  const schedule = typeof rawSchedule === 'string' ? parseRetrySchedule(rawSchedule) : Array.isArray(rawSchedule) && rawSchedule.every(n => Number.isSafeInteger(n) && n >= 0) ? [...rawSchedule] : null
  if (schedule === null) fail('retrySchedule', rawSchedule, 'comma-separated durations such as "5s,5m,30m" or an array of milliseconds')
  const allowInsecure = opts.allowInsecureTargets ?? false
  if (typeof allowInsecure !== 'boolean') fail('allowInsecureTargets', allowInsecure, 'a boolean')
  const hint = opts.allowInsecureTargetsHint ?? 'the allowInsecureTargets option of the events plugin'
  if (hint !== false && (typeof hint !== 'string' || hint.trim() === '')) fail('allowInsecureTargetsHint', hint, 'a non-empty string or false')
  const worker = opts.worker ?? defaults.worker
  if (typeof worker !== 'boolean') fail('worker', worker, 'a boolean')
  // Timers: an attempt's deadline (the deliveries' client), and the idle poll.
  const timeoutMillis = checks.timerMillis('timeoutMillis', opts.timeoutMillis ?? defaults.timeoutMillis)
  const maxFailures = positiveInteger('maxFailures', opts.maxFailures ?? defaults.maxFailures)
  const pollMillis = checks.timerMillis('pollMillis', opts.pollMillis ?? defaults.pollMillis)
  const concurrency = positiveInteger('concurrency', opts.concurrency ?? defaults.concurrency)
  const perSubscription = positiveInteger('perSubscription', opts.perSubscription ?? defaults.perSubscription)
  const userAgent = opts.userAgent ?? { product: service.name, version: 1, comment: 'webhook delivery' }
  const prefix = opts.tablePrefix ?? defaults.tablePrefix
  if (typeof prefix !== 'string' || !/^[a-z_][a-z0-9_]{0,40}$/.test(prefix)) fail('tablePrefix', prefix, 'a lowercase SQL name of at most 41 characters')
  const resolver = opts.resolver ?? systemResolver
  if (typeof resolver !== 'function') fail('resolver', resolver, 'a function')
  const now = opts.now ?? (() => new Date())
  if (typeof now !== 'function') fail('now', now, 'a function returning a Date')

  const served = (fastify as unknown as { resources?: ReadonlyMap<string, ServedResource> }).resources ?? new Map<string, ServedResource>()
  // eventTypes replaces the default list that extraEventTypes adds to: with both, the extra ones would be dropped unseen.
  if (opts.eventTypes !== undefined && opts.extraEventTypes !== undefined) {
    throw new TypeError(`events plugin: extraEventTypes adds to the default event types, which eventTypes replaces; give one of them (list ${stringList('extraEventTypes', opts.extraEventTypes).join(', ')} in eventTypes)`)
  }
  const types = opts.eventTypes !== undefined
    ? stringList('eventTypes', opts.eventTypes)
    : [...[...served.values()].flatMap(resourceEventTypes), ...stringList('extraEventTypes', opts.extraEventTypes ?? [])]
  if (types.length === 0) throw new TypeError('events plugin: there are no event types: register the resource plugin before it, or give eventTypes')
  // Offered, a type no subscription could name would be a 400 to every subscriber who tried.
  const unnamable = types.filter(type => !EVENT_TYPE.test(type) || type.length > EVENT_TYPE_MAX_LENGTH)
  if (unnamable.length > 0) {
    throw new TypeError(`events plugin: the event types ${unnamable.map(type => JSON.stringify(type)).join(', ')} cannot be subscribed to: an event type is <name>.<event>, each a lowercase letter, then lowercase letters, digits and hyphens, ${EVENT_TYPE_MAX_LENGTH} characters at most (a resource whose name starts with a digit gives such types)`)
  }
  // An event type `<name>.<verb>` of a served resource is read with that resource's read scopes.
  const readScopesOf = new Map([...served.values()].map(s => [s.definition.name, s.definition.api.scopes.read]))
  const typeScopes = new Map<string, readonly string[]>()
  for (const type of eventReadScopes ? types : []) {
    const scopes = readScopesOf.get(type.slice(0, type.lastIndexOf('.')))
    if (scopes !== undefined) typeScopes.set(type, scopes)
  }

  const { retention, purgeInterval } = retentionOptions('events', opts, defaults.retention)
  const tables = new EventTables(prefix, retention)
  await migrate(store, tables.migrations())
  // Ended deliveries go after their retention, in batches, by one instance at a time (store/purge.ts);
  // measured by the clock their ends are recorded by, not the database's.
  schedulePurge(fastify, purgeInterval, async () => await tables.purge(store, now()), {
    done: 'events: ended deliveries past their retention deleted',
    failed: 'events: deleting ended deliveries failed; trying again later'
  })
  try {
    // The deliveries' client checks its options here; it loads nothing before its first call.
    createDownstream(deliveryClientOptions({ service, userAgent, timeoutMillis }))
  } catch (err) {
    throw new TypeError(`events plugin: ${(err as Error).message.replace(/^downstream plugin: /, '')}`)
  }
  const dispatcher = new Dispatcher({ store: workerStore, tables, service, userAgent, schedule, timeoutMillis, pollMillis, concurrency, perSubscription, maxFailures, allowInsecure, resolver, render: (d) => render(d), now, log: fastify.log })

  // Deliveries were written since the last wake: a request answered after that has committed them.
  let due = false
  // What this instance's autocommit writes committed, told to the others that share the
  // database, and to other apps of this process on the same store (a statement in a
  // transaction notifies them itself as it commits).
  const announcer = new Announcer({
    send: async () => { await tables.announce(store) },
    gapMillis: ANNOUNCE_GAP_MILLIS,
    log: fastify.log
  })
  fastify.addHook('onClose', async () => { await announcer.close() })
  async function emit (tx: Queryable, input: EventInput | readonly EventInput[]): Promise<void> {
    const list: readonly EventInput[] = Array.isArray(input) ? input : [input as EventInput]
    const at = now()
    const stamp = at.toISOString()
    // Grouped by what the statement shares: one statement in the usual case.
    const groups = new Map<string, { ctx: string, requestId: string | null, events: OutboxEvent[] }>()
    for (const e of list) {
      const requestId = e.requestId ?? null
      const key = `${e.ctx}\u0000${requestId ?? ''}`
      const g = groups.get(key) ?? { ctx: e.ctx, requestId, events: [] }
      g.events.push({ type: e.type, payload: payloadOf(e.type, stamp, typeof e.data === 'string' ? e.data : JSON.stringify(e.data)) })
      groups.set(key, g)
    }
    let written = 0
    for (const g of groups.values()) written += await tables.emit(tx, g.ctx, g.requestId, at, g.events)
    if (written > 0) due = true
  }

  // Every change of a served resource adds its deliveries in the statement that makes it, each
  // holding the entity as written; its body is made when it is attempted.
  const formats = Object.fromEntries(Object.entries(conventionFormats).map(([name, def]) => [name, def.validate]))
  const bodies = new Map<string, (d: ClaimedDelivery) => string>()
  const wanted = new WantedEvents((type) => tables.quietPart(type))
  for (const s of served.values()) {
    const def = s.definition
    let serialize: ((entity: unknown) => string) | null = null
    bodies.set(def.name, (d) => {
      serialize ??= fastJson(def.api.entity as SerializerSchema, { schema: fastify.getSchemas() as Record<string, SerializerSchema>, ajv: { formats } })
      const entity = s.representation.toEntity(s.table.snapshot(d.entity as Array<string | null>))
      return payloadOf(d.eventType, d.createdDateTime, serialize(entity))
    })
    s.writer.emitTo({
      part: (type, call, committing, replaced) => tables.outboxPart(type, call.requestId ?? null, now(), !committing, replaced ?? null),
      quiet: (type, call) => wanted.quiet(type, call.ctx),
      heard: (type, call, found) => { wanted.heard(type, call.ctx, found) },
      written: (_count, committed) => {
        due = true
        if (committed) announcer.announce()
      }
    })
  }
  const render = (d: ClaimedDelivery): string => {
    const body = bodies.get(d.eventType.slice(0, d.eventType.lastIndexOf('.')))
    if (body === undefined) throw new Error(`events: no resource renders ${d.eventType}`)
    return body(d)
  }

  fastify.decorate('events', { tables, types, emit, wake: () => { if (worker) dispatcher.wake() } } satisfies Events)

  if (worker) {
    fastify.addHook('onReady', async () => { await dispatcher.start() })
    fastify.addHook('onClose', async () => { await dispatcher.stop() })
    // A change answered here has committed: its deliveries are due now, not at the next poll.
    fastify.addHook('onResponse', async () => {
      if (!due) return
      due = false
      dispatcher.wake()
    })
  }

  if (path !== false) {
    registerSubscriptionRoutes(fastify, { path, store, tables, eventTypes: types, readScopes, writeScopes, typeScopes, allowInsecure, allowedBy: hint === false ? null : hint, resolver, now })
  }
}

export type { SubscriptionRow, DeliveryRow, DeliveryStatus, OutboxEvent } from '../../store/events.js'
export type { ServiceIdentity } from './headers.js'
export type { Resolver, TargetRefusal } from './targets.js'
export { Delivery, DeliveryCollection, Subscription, SubscriptionCreate, SubscriptionPatch } from './schema.js'
// Refusals are problems; subscriptions belong to the execution context (conventions); the collections page through the query plugin.
export default fp(needs('events', ['problem', 'conventions', 'query'], eventsPlugin), { fastify: '5.x', name: 'svc-events' })
