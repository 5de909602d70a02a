import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Agent } from 'undici'
import type { AttemptOutcome, ClaimedDelivery, EventTables } from '../../store/events.js'
import type { Store } from '../../store/types.js'
import { createDownstream, DownstreamInvalidJsonError, DownstreamResponseError, DownstreamTooLargeError, type DownstreamClient, type DownstreamOptions } from '../downstream/index.js'
import { signStandardWebhook } from '../webhooks/index.js'
import { LeaseLoop } from '../shared/lease-loop.js'
import { PRODUCTION, type ServiceIdentity } from './headers.js'
import { guardedLookup, literalRefused, type Resolver } from './targets.js'

export interface DispatcherOptions {
  /** Where attempts are claimed and recorded. */
  store: Store
  tables: EventTables
  service: ServiceIdentity
  userAgent: DownstreamOptions['userAgent']
  /** Milliseconds before each retry; FAILED after the last. */
  schedule: readonly number[]
  /** How long an attempt waits for a 2xx. */
  timeoutMillis: number
  pollMillis: number
  /** Attempts held by this instance: in flight, or claimed and waiting their turn. */
  concurrency: number
  /** Attempts in flight on this instance per subscription: a slow receiver holds no more. */
  perSubscription: number
  /** Deliveries FAILED in a row that switch a subscription off. */
  maxFailures: number
  /** Targets are not checked (local development, tests). */
  allowInsecure: boolean
  resolver: Resolver
  /** The body of a delivery kept as its entity (`ClaimedDelivery.entity`), made when it is attempted. */
  render: (d: ClaimedDelivery) => string
  now: () => Date
  log: { warn: (obj: object, msg: string) => void }
  /** How long a stop lets attempts in flight end before it aborts them and gives them back. Default STOP_GRACE_MILLIS. */
  stopGraceMillis?: number
}

/** How long ended attempts wait for others before one claim refills them all, while work waits in the outbox. */
const REFILL_MILLIS = 5
/** The same once a claim found less than it could take: a trickle of events is then claimed in batches. */
const TRICKLE_MILLIS = 50
/** How soon a wake looks for work while attempts are in hand, unless their ends look sooner. */
const BUSY_WAKE_MILLIS = 200
/** How long outcomes gather before one statement records them. */
const FLUSH_MILLIS = 50
/**
 * How long a stop waits for attempts in flight, a fraction of a process's time to stop
 * (SHUTDOWN_TIMEOUT): a subscriber may take the whole attempt's timeout to answer, and those
 * still waiting then are given back, to be made again by any instance (at least once).
 */
export const STOP_GRACE_MILLIS = 2000

/** The most of a subscriber's answer read: only its status matters. */
const ANSWER_BYTES = 64 * 1024

/**
 * The options of the downstream client that posts the deliveries: the convention's headers
 * (`User-Agent`, `Svc-Service`, and per call `X-Request-ID` and `Svc-Execution-Context`), no
 * retries of its own (the retry schedule is the outbox's), the attempt's timeout. Checked at
 * boot by `createDownstream`, which loads nothing until a call.
 */
export function deliveryClientOptions (o: Pick<DispatcherOptions, 'service' | 'userAgent' | 'timeoutMillis'>): DownstreamOptions {
  return {
    service: o.service,
    userAgent: o.userAgent,
    retry: false,
    // The attempt's whole time too: a subscriber answering a byte at a time never pauses long.
    timeouts: { headers: o.timeoutMillis, body: o.timeoutMillis, total: o.timeoutMillis },
    maxResponseBytes: ANSWER_BYTES,
    defaultExecutionContext: PRODUCTION
  }
}

/** The id a receiver deduplicates by: one per event and subscription, the same on every retry. */
export const webhookIdOf = (deliveryId: string): string => `msg_${deliveryId}`

/**
 * Delivers due events from this instance: claims them in the database (no other instance
 * attempts the same one), posts each signed to its subscriber, and records how each attempt
 * ended, in batches. It looks for work when the database notifies that a delivery was written
 * or is due again (any instance's, however written: store/events.ts), at once after `wake` (this
 * instance committed events), when a retry it recorded comes due, and every `pollMillis` while
 * idle, a safety net for what nothing announces (a lease that ran out, another instance's
 * retries, a notification lost while the connection was down, no LISTEN behind PgBouncer). A
 * slow or dead subscriber holds at most `perSubscription` of the `concurrency` attempts, so the
 * others keep being delivered.
 */
export class Dispatcher {
  readonly owner = `instance-${randomUUID()}`
  private readonly o: DispatcherOptions
  /** The client, made when the first delivery is attempted: a service without subscribers never loads undici. */
  private transport: Promise<{ agent: Agent, client: DownstreamClient }> | null = null
  /** Attempts by subscription: running, waiting their turn, and both (held). */
  private readonly running = new Map<string, number>()
  private readonly waiting = new Map<string, ClaimedDelivery[]>()
  private readonly heldBy = new Map<string, number>()
  private held = 0
  private outcomes: AttemptOutcome[] = []
  private flushing: Promise<void> | null = null
  private readonly inFlight = new Set<Promise<void>>()
  /** Aborts the attempts in flight when a stop's grace has passed; those are given back, not recorded. */
  private readonly stopping = new AbortController()
  private readonly abandoned: ClaimedDelivery[] = []
  /** Deliveries claimed ahead whose turn came, their subscriptions to be read again (`resume`). */
  private due: ClaimedDelivery[] = []
  /** When the earliest retry this instance recorded comes due, by `Date.now()` (Infinity: none). */
  private retryAt = Infinity
  /** When the last look ended, and whether it left work in the outbox (it took all it could). */
  private lookedAt = 0
  private backlog = false
  private readonly loop: LeaseLoop

  constructor (o: DispatcherOptions) {
    this.o = o
    this.loop = new LeaseLoop({
      store: o.store,
      channel: o.tables.channel,
      look: async () => await this.look(),
      notified: () => { this.wake() },
      again: () => { this.soon() },
      unheard: 'events: cannot listen for new deliveries; looking for them every pollMillis only',
      log: o.log
    })
  }

  private get stopped (): boolean {
    return this.loop.stopped
  }

  private async deliveryClient (): Promise<{ agent: Agent, client: DownstreamClient }> {
    return await (this.transport ??= import('undici').then(({ Agent }) => {
      // Every address a name has is checked when connecting; redirects are not followed (the client
      // never does), and the client gives each call its timeouts (deliveryClientOptions). The
      // agent keeps one pool per origin, which subscriptions on one host share: their attempts
      // in flight are limited here (`perSubscription` each, `concurrency` in all), so the pool's
      // own limit is the instance's, and a silent subscriber cannot fill it for its neighbours.
      const agent = new Agent({
        connections: this.o.concurrency,
        ...(this.o.allowInsecure ? {} : { connect: { lookup: guardedLookup(this.o.resolver) } })
      })
      return { agent, client: createDownstream({ ...deliveryClientOptions(this.o), dispatcher: agent }) }
    }))
  }

  async start (): Promise<void> {
    await this.loop.start()
  }

  /**
   * Looks for work now, unless attempts are in hand: their ends look for more, so a busy
   * instance does not claim once per request that emitted events. Within BUSY_WAKE_MILLIS
   * all the same, for attempts may not end soon: a subscriber that does not answer would
   * otherwise hold every other subscriber's new deliveries until the poll.
   */
  wake (): void {
    if (this.held === 0) this.soon()
    else this.loop.soon(BUSY_WAKE_MILLIS)
  }

  /**
   * Stops claiming; lets attempts in flight end, for a moment, and records them; gives back
   * those not started, and those a subscriber was still answering when the moment passed.
   */
  async stop (): Promise<void> {
    await this.loop.stop()
    const unstarted = [...this.waiting.values()].flat()
    this.waiting.clear()
    const grace = setTimeout(() => { this.stopping.abort() }, this.o.stopGraceMillis ?? STOP_GRACE_MILLIS)
    await Promise.allSettled([...this.inFlight])
    clearTimeout(grace)
    await this.flush()
    await this.giveBack([...unstarted, ...this.abandoned])
    if (this.transport !== null) {
      const { agent, client } = await this.transport
      await client.close()
      await agent.close()
    }
  }

  /**
   * Looks for work shortly: the attempts ending and the events committed meanwhile are served
   * by one claim, not one each; at once when the last look was long enough ago.
   */
  private soon (): void {
    // Unless a look is due sooner anyway (the idle poll's is not); during a look, once it ends.
    this.loop.soon(Math.max(0, this.lookedAt + (this.backlog ? REFILL_MILLIS : TRICKLE_MILLIS) - Date.now()))
  }

  private get leaseMillis (): number {
    // Long enough for an attempt that waited its turn: a subscription with more than
    // `perSubscription` in hand gets no more, and a claim takes at most `perSubscription` of
    // it, so an attempt waits behind at most one round of attempts in flight, then runs.
    return 2 * this.o.timeoutMillis + 10_000
  }

  /** Claims while there is room and work; resolves to how long to wait before the next look. */
  private async look (): Promise<number> {
    // This look serves a retry due by now.
    if (this.retryAt <= Date.now()) this.retryAt = Infinity
    // Left in the outbox: a claim stopped by the room, or by a subscription's share of it.
    let backlog = false
    try {
      backlog = this.held >= this.o.concurrency
      while (!this.stopped && this.held < this.o.concurrency) {
        // A subscription with a round in flight and more waiting has enough in hand.
        const full = [...this.heldBy].filter(([, n]) => n > this.o.perSubscription).map(([sub]) => sub)
        const room = this.o.concurrency - this.held
        const claimed = await this.o.tables.claim(this.o.store, this.owner, this.o.now(), this.leaseMillis, room, full, this.o.perSubscription)
        const bySubscription = new Map<string, number>()
        for (const d of claimed) {
          this.take(d)
          bySubscription.set(d.subscriptionId, (bySubscription.get(d.subscriptionId) ?? 0) + 1)
        }
        backlog = claimed.length === room || [...bySubscription.values()].some(n => n === this.o.perSubscription)
        if (claimed.length < room) break
      }
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not look for deliveries; trying again later')
    }
    this.backlog = backlog
    this.lookedAt = Date.now()
    return this.idleWait()
  }

  private take (d: ClaimedDelivery): void {
    this.held++
    this.heldBy.set(d.subscriptionId, (this.heldBy.get(d.subscriptionId) ?? 0) + 1)
    const sub = d.subscriptionId
    if ((this.running.get(sub) ?? 0) >= this.o.perSubscription) {
      const queue = this.waiting.get(sub) ?? []
      queue.push(d)
      this.waiting.set(sub, queue)
      return
    }
    this.occupy(sub)
    this.begin(d)
  }

  /** Starts an attempt of `d` in a turn of its subscription (`occupy`). */
  private begin (d: ClaimedDelivery): void {
    this.track(this.attemptAndRecord(d), d.subscriptionId)
  }

  private async attemptAndRecord (d: ClaimedDelivery): Promise<void> {
    const outcome = await this.attempt(d)
    if (outcome === null) {
      this.abandoned.push(d)
      return
    }
    this.outcomes.push(outcome)
    this.flushSoon()
  }

  private occupy (sub: string): void {
    this.running.set(sub, (this.running.get(sub) ?? 0) + 1)
  }

  /** Holds a stop until `p` ends; then frees the turn it took of `sub`. */
  private track (p: Promise<void>, sub: string): void {
    this.hold(p.finally(() => { this.vacate(sub) }))
  }

  /** Holds a stop until `p` ends. */
  private hold (p: Promise<void>): void {
    const held = p.finally(() => { this.inFlight.delete(held) })
    this.inFlight.add(held)
  }

  /** A turn of `sub` ended: the next delivery waiting for one takes it. */
  private vacate (sub: string): void {
    this.held--
    const held = (this.heldBy.get(sub) as number) - 1
    if (held === 0) this.heldBy.delete(sub)
    else this.heldBy.set(sub, held)
    const left = (this.running.get(sub) as number) - 1
    if (left === 0) this.running.delete(sub)
    else this.running.set(sub, left)
    const next = this.waiting.get(sub)?.shift()
    if (this.waiting.get(sub)?.length === 0) this.waiting.delete(sub)
    if (next !== undefined) this.resume(next)
    // Claimed ahead: the next claim comes while a round is still in hand, not once it ran dry.
    if (held <= this.o.perSubscription) this.soon()
  }

  /**
   * A delivery claimed ahead whose turn has come: the subscription may have changed while it
   * waited, so its URL and secret are read again (`recheck`, one statement for the turns that
   * come together) and one deleted or switched off meanwhile gets nothing: an attempt after the
   * change was answered would reach a receiver the subscriber has let go.
   */
  private resume (d: ClaimedDelivery): void {
    this.occupy(d.subscriptionId)
    this.due.push(d)
    // A stop waits for the look-up, which gathers the turns coming in this moment.
    if (this.due.length === 1) this.hold(new Promise(resolve => setImmediate(resolve)).then(async () => { await this.recheck() }))
  }

  private async recheck (): Promise<void> {
    const batch = this.due
    this.due = []
    const current = (async () => {
      try {
        const now = await this.o.tables.recheck(this.o.store, this.owner, batch.map(d => d.id))
        // Switched off: given back, due once it is on again (deleted: its deliveries went with it).
        const off = batch.filter(d => !now.has(d.id))
        if (off.length > 0) await this.giveBack(off)
        return now
      } catch (err) {
        // Not attempted: their leases run out and any instance attempts them again.
        this.o.log.warn({ err }, 'events: could not look up the subscriptions of deliveries waiting their turn; they will be attempted again')
        return new Map<string, { url: string, secret: string }>()
      }
    })()
    await Promise.allSettled(batch.map(async (d) => {
      const turn = current.then(async (now) => {
        const target = now.get(d.id)
        if (target === undefined) return
        if (this.stopped) this.abandoned.push(d)
        else {
          // Set in place: a copy spread with them would be an object of another shape on the attempt's path.
          d.url = target.url
          d.secret = target.secret
          await this.attemptAndRecord(d)
        }
      })
      this.track(turn, d.subscriptionId)
      await turn
    }))
  }

  private async giveBack (claimed: readonly ClaimedDelivery[]): Promise<void> {
    try {
      await this.o.tables.release(this.o.store, this.owner, claimed)
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not give back unattempted deliveries; their lease runs out instead')
    }
  }

  /** One POST; its outcome: SUCCEEDED on a 2xx in time, else the next attempt or FAILED; null when a stop aborted it. */
  private async attempt (d: ClaimedDelivery): Promise<AttemptOutcome | null> {
    let statusCode: number | null = null
    try {
      if (!this.o.allowInsecure && literalRefused(d.url)) throw new Error('internal address')
      const body = d.payload ?? this.o.render(d)
      const timestamp = Math.floor(this.o.now().getTime() / 1000)
      const webhookId = webhookIdOf(d.id)
      const headers = {
        'content-type': 'application/json',
        'webhook-id': webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(d.secret, webhookId, timestamp, body)
      }
      const { client } = await this.deliveryClient()
      // The request that made the change, and its execution context, as every outgoing call carries them.
      const res = await client.with({ requestId: d.requestId ?? undefined, executionContext: d.ctx })
        .request({ method: 'POST', url: d.url, headers, body, signal: this.stopping.signal })
      statusCode = res.status
    } catch (err) {
      // Not the subscriber's doing: given back as it was, this attempt not counted.
      if (this.stopping.signal.aborted) return null
      // An answer that is no 2xx, a body past the cap, or one labelled JSON that is not, has a
      // status; a refused, failed or timed-out connection has none.
      if (err instanceof DownstreamResponseError || err instanceof DownstreamTooLargeError || err instanceof DownstreamInvalidJsonError) statusCode = err.status
    }
    // 2xx, whatever the body: a redirect (3xx, never followed) or an error is no success.
    // Recorded under this attempt's claim (`attempt`), not under one made since its lease ran out.
    const attempt = d.attemptCount
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { id: d.id, status: 'SUCCEEDED', statusCode, next: null, attempt }
    const delay = this.o.schedule[d.tries - 1]
    if (delay === undefined) return { id: d.id, status: 'FAILED', statusCode, next: null, attempt }
    return { id: d.id, status: 'PENDING', statusCode, next: new Date(this.o.now().getTime() + delay), attempt }
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
    this.outcomes = []
    if (batch.length === 0) return
    try {
      await this.o.tables.finish(this.o.store, this.owner, batch, this.o.maxFailures, this.o.now())
    } catch (err) {
      this.o.log.warn({ err }, 'events: could not record delivery attempts; they will be attempted again')
      return
    }
    this.retryWhenDue(batch)
  }

  /**
   * Looks again when the earliest retry just recorded comes due, not up to a safety poll later:
   * a retry is no new row, so nothing notifies it (times from the dispatcher's clock, `now`).
   */
  private retryWhenDue (batch: readonly AttemptOutcome[]): void {
    const now = this.o.now().getTime()
    for (const o of batch) if (o.next !== null) this.retryAt = Math.min(this.retryAt, Date.now() + o.next.getTime() - now)
    if (!this.stopped && this.retryAt < this.loop.dueAt) this.loop.schedule(this.idleWait())
  }

  /** How long an idle dispatcher waits before it looks again: the safety poll, or less for a retry due sooner. */
  private idleWait (): number {
    return Math.max(0, Math.min(this.o.pollMillis, this.retryAt - Date.now()))
  }
}
