import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import type { Agent, request as undiciRequest } from 'undici'
import type { AttemptOutcome, ClaimedDelivery, EventTables } from '../../store/events.js'
import type { Store } from '../../store/types.js'
import { deliveryHeaders, type ServiceIdentity } from './headers.js'
import { guardedLookup, literalRefused, type Resolver } from './targets.js'

export interface DispatcherOptions {
  store: Store
  tables: EventTables
  service: ServiceIdentity
  userAgent: string
  /** Milliseconds before each retry; FAILED after the last. */
  schedule: readonly number[]
  /** How long an attempt waits for a 2xx. */
  timeoutMillis: number
  pollMillis: number
  /** Attempts in flight on this instance. */
  concurrency: number
  /** Attempts in flight on this instance per subscription: a slow receiver holds no more. */
  perSubscription: number
  /** Deliveries FAILED in a row that switch a subscription off. */
  maxFailures: number
  /** Targets are not checked (local development, tests). */
  allowInsecure: boolean
  resolver: Resolver
  now: () => Date
  log: { warn: (obj: object, msg: string) => void }
}

/** How long ended attempts wait for others before one claim refills them all. */
const REFILL_MILLIS = 5
/** How long outcomes gather before one statement records them. */
const FLUSH_MILLIS = 10

/** The id a receiver deduplicates by: one per event and subscription, the same on every retry. */
export const webhookIdOf = (deliveryId: string): string => `msg_${deliveryId}`

/**
 * Delivers due events from this instance: claims them in the database (no other instance
 * attempts the same one), posts each signed to its subscriber, and records how each attempt
 * ended, in batches. It looks for work every `pollMillis`, and at once after `wake` (this
 * instance committed events). A slow or dead subscriber holds at most `perSubscription` of
 * the `concurrency` attempts, so the others keep being delivered.
 */
export class Dispatcher {
  readonly owner = `instance-${randomUUID()}`
  private readonly o: DispatcherOptions
  /** undici, loaded when the first delivery is attempted: a service without subscribers never loads it. */
  private transport: Promise<{ agent: Agent, send: typeof undiciRequest }> | null = null
  private readonly signers = new Map<string, Webhook>()
  /** Attempts held by subscription: running, then waiting their turn. */
  private readonly running = new Map<string, number>()
  private readonly waiting = new Map<string, ClaimedDelivery[]>()
  private held = 0
  private outcomes: AttemptOutcome[] = []
  /** Subscriptions with no failures in a row when their attempts were claimed. */
  private clean = new Set<string>()
  private flushing: Promise<void> | null = null
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | null = null
  /** When the timer fires (Infinity: none set). */
  private dueAt = Infinity
  private looking: Promise<void> | null = null
  private again = false
  private stopped = true

  constructor (o: DispatcherOptions) {
    this.o = o
  }

  private async undici (): Promise<{ agent: Agent, send: typeof undiciRequest }> {
    return await (this.transport ??= import('undici').then(({ Agent, request }) => ({
      // Redirects are not followed (undici's request never does); every address a name has is checked when connecting.
      agent: new Agent({
        connections: this.o.perSubscription,
        headersTimeout: this.o.timeoutMillis,
        bodyTimeout: this.o.timeoutMillis,
        ...(this.o.allowInsecure ? {} : { connect: { lookup: guardedLookup(this.o.resolver) } })
      }),
      send: request
    })))
  }

  start (): void {
    this.stopped = false
    this.schedule(0)
  }

  /** Looks for work now. */
  wake (): void {
    if (this.stopped) return
    if (this.looking !== null) this.again = true
    else this.schedule(0)
  }

  /** Stops claiming; lets attempts in flight end and records them; gives back those not started. */
  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    await this.looking
    const unstarted = [...this.waiting.values()].flat().map(d => d.id)
    this.waiting.clear()
    await Promise.allSettled([...this.inFlight])
    await this.flush()
    try {
      await this.o.tables.release(this.o.store, this.owner, unstarted)
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not give back unattempted deliveries; their lease runs out instead')
    }
    if (this.transport !== null) await (await this.transport).agent.close()
  }

  /** Looks for work shortly: attempts ending meanwhile are refilled by one claim, not one each. */
  private soon (): void {
    if (this.stopped) return
    if (this.looking !== null) {
      this.again = true
      return
    }
    // Unless a look is due sooner anyway (the idle poll's is not).
    if (this.dueAt > Date.now() + REFILL_MILLIS) this.schedule(REFILL_MILLIS)
  }

  private schedule (millis: number): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.dueAt = Date.now() + millis
    this.timer = setTimeout(() => {
      this.timer = null
      this.dueAt = Infinity
      this.looking ??= this.look().finally(() => {
        this.looking = null
        if (this.again && !this.stopped) {
          this.again = false
          this.schedule(0)
        }
      })
    }, millis)
    this.timer.unref()
  }

  private get leaseMillis (): number {
    // Long enough for an attempt that waited its turn: a claim takes at most `perSubscription`
    // of a subscription, so it waits behind at most one round of attempts in flight.
    return 2 * this.o.timeoutMillis + 10_000
  }

  /** Claims while there is room and work; then sleeps until the next poll. */
  private async look (): Promise<void> {
    try {
      while (!this.stopped && this.held < this.o.concurrency) {
        const full = [...this.running].filter(([, n]) => n >= this.o.perSubscription).map(([sub]) => sub)
        const room = this.o.concurrency - this.held
        const claimed = await this.o.tables.claim(this.o.store, this.owner, this.o.now(), this.leaseMillis, room, full, this.o.perSubscription)
        for (const d of claimed) this.take(d)
        if (claimed.length < room) break
      }
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not look for deliveries; trying again later')
    }
    if (!this.stopped) this.schedule(this.o.pollMillis)
  }

  private take (d: ClaimedDelivery): void {
    this.held++
    if (d.failures === 0) this.clean.add(d.subscriptionId)
    else this.clean.delete(d.subscriptionId)
    const sub = d.subscriptionId
    if ((this.running.get(sub) ?? 0) >= this.o.perSubscription) {
      const queue = this.waiting.get(sub) ?? []
      queue.push(d)
      this.waiting.set(sub, queue)
      return
    }
    this.begin(d)
  }

  private begin (d: ClaimedDelivery): void {
    const sub = d.subscriptionId
    this.running.set(sub, (this.running.get(sub) ?? 0) + 1)
    const p = this.attempt(d).then((outcome) => {
      this.outcomes.push(outcome)
      this.flushSoon()
    }).finally(() => {
      this.inFlight.delete(p)
      this.held--
      const left = (this.running.get(sub) as number) - 1
      if (left === 0) this.running.delete(sub)
      else this.running.set(sub, left)
      const next = this.waiting.get(sub)?.shift()
      if (this.waiting.get(sub)?.length === 0) this.waiting.delete(sub)
      if (next !== undefined) this.begin(next)
      else this.soon()
    })
    this.inFlight.add(p)
  }

  private signer (secret: string): Webhook {
    let w = this.signers.get(secret)
    if (w === undefined) {
      w = new Webhook(secret)
      this.signers.set(secret, w)
    }
    return w
  }

  /** One POST; its outcome: SUCCEEDED on a 2xx in time, else the next attempt or FAILED. */
  private async attempt (d: ClaimedDelivery): Promise<AttemptOutcome> {
    let statusCode: number | null = null
    try {
      if (!this.o.allowInsecure && literalRefused(d.url)) throw new Error('internal address')
      const at = this.o.now()
      const webhookId = webhookIdOf(d.id)
      const signature = this.signer(d.secret).sign(webhookId, at, d.payload)
      const headers = deliveryHeaders({ webhookId, timestamp: Math.floor(at.getTime() / 1000), signature, requestId: d.requestId, ctx: d.ctx }, this.o.service, this.o.userAgent)
      const { agent, send } = await this.undici()
      const res = await send(d.url, { method: 'POST', headers, body: d.payload, dispatcher: agent, signal: AbortSignal.timeout(this.o.timeoutMillis) })
      statusCode = res.statusCode
      // The answer's body is not needed; read it so the connection is reused.
      await res.body.dump()
      if (statusCode >= 200 && statusCode < 300) return { id: d.id, status: 'SUCCEEDED', statusCode, next: null }
    } catch {
      // A refused, failed or timed-out connection: retried like an answer that is no 2xx.
    }
    const delay = this.o.schedule[d.tries - 1]
    if (delay === undefined) return { id: d.id, status: 'FAILED', statusCode, next: null }
    return { id: d.id, status: 'PENDING', statusCode, next: new Date(this.o.now().getTime() + delay) }
  }

  private flushSoon (): void {
    if (this.flushing !== null) return
    this.flushing = (async () => {
      // Gathered for a moment: one statement records many attempts; those ending during a write go in the next.
      await sleep(FLUSH_MILLIS, undefined, { ref: false })
      while (this.outcomes.length > 0) await this.flushNow()
    })().finally(() => { this.flushing = null })
  }

  private async flush (): Promise<void> {
    await this.flushing
    await this.flushNow()
  }

  /** Records the outcomes gathered so far in one statement; on failure their leases run out and they are attempted again. */
  private async flushNow (): Promise<void> {
    const batch = this.outcomes
    const clean = this.clean
    this.outcomes = []
    this.clean = new Set()
    if (batch.length === 0) return
    try {
      await this.o.tables.finish(this.o.store, this.owner, batch, this.o.maxFailures, this.o.now(), clean)
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not record delivery attempts; they will be attempted again')
    }
  }
}
