import { after, type After } from '../shared/after.js'

/** What an Announcer needs. */
export interface AnnouncerOptions {
  /** Sends one notification (EventTables.announce). */
  send: () => Promise<void>
  /** The least time from one notification to the next, in ms. */
  gapMillis: number
  /** Where a notification that could not be sent is logged. */
  log: { warn: (obj: object, msg: string) => void }
  /** The clock the gap is measured on, in ms (`performance.now` by default). */
  now?: () => number
  /** Calls `fn` after `ms` without keeping the process alive, and returns what cancels it (`setTimeout` by default). */
  after?: After
}

/**
 * Tells the other instances that this one's autocommit writes committed new deliveries
 * (store/events.ts, `outboxPart`). At most one notification is in flight, and the next follows
 * at least `gapMillis` after the last one, for every write announced meanwhile: the first write
 * after a quiet spell is announced at once, and those of a busy instance share one notification
 * per gap, where a notification per write would have each commit take PostgreSQL's notify lock in
 * turn. An instance that is delivering claims again as its attempts end, so it needs none of
 * them; one notification that is lost costs the idle instances a poll's wait, never an event.
 */
export class Announcer {
  readonly #o: AnnouncerOptions
  readonly #now: () => number
  readonly #after: After
  #sending: Promise<void> | null = null
  /** The wait for the next turn, while one is set: it resolves when it ends or is cancelled. */
  #pause: { ended: Promise<void>, end: () => void, cancel: () => void } | null = null
  /** Writes were announced since the last notification left. */
  #waiting = false
  #lastAt = -Infinity
  #closed = false

  constructor (o: AnnouncerOptions) {
    this.#o = o
    this.#now = o.now ?? (() => performance.now())
    this.#after = o.after ?? after
  }

  announce (): void {
    if (this.#closed) return
    this.#waiting = true
    this.#pump()
  }

  /** Resolves once no notification is in flight or waiting for its turn. */
  async settled (): Promise<void> {
    for (;;) {
      if (this.#sending !== null) await this.#sending
      else if (this.#pause !== null) await this.#pause.ended
      else return
    }
  }

  /** Sends what is waiting at once, and nothing after. */
  async close (): Promise<void> {
    this.#closed = true
    const pause = this.#pause
    if (pause !== null) {
      this.#pause = null
      pause.cancel()
      pause.end()
    }
    this.#pump()
    await this.settled()
  }

  #pump (): void {
    if (!this.#waiting || this.#sending !== null || this.#pause !== null) return
    const wait = this.#lastAt + this.#o.gapMillis - this.#now()
    if (wait > 0 && !this.#closed) {
      // A timer may fire before the clock reads its delay (Node measures it from the loop's
      // cached time), so the turn is checked again on the clock when it does.
      let end!: () => void
      const ended = new Promise<void>((resolve) => { end = resolve })
      const cancel = this.#after(wait, () => {
        this.#pause = null
        this.#pump()
        end()
      })
      this.#pause = { ended, end, cancel }
      return
    }
    this.#waiting = false
    this.#lastAt = this.#now()
    this.#sending = this.#o.send().catch((err: unknown) => {
      this.#o.log.warn({ err }, 'events: could not tell the other instances of new deliveries; they find them at their next poll')
    }).finally(() => {
      this.#sending = null
      this.#pump()
    })
  }
}
