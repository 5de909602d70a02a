/** What an Announcer needs. */
export interface AnnouncerOptions {
  /** Sends one notification (EventTables.announce). */
  send: () => Promise<void>
  /** The least time from one notification to the next, in ms. */
  gapMillis: number
  /** Where a notification that could not be sent is logged. */
  log: { warn: (obj: object, msg: string) => void }
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
  #sending: Promise<void> | null = null
  #timer: NodeJS.Timeout | undefined = undefined
  /** Writes were announced since the last notification left. */
  #waiting = false
  #lastAt = -Infinity
  #closed = false

  constructor (o: AnnouncerOptions) {
    this.#o = o
  }

  announce (): void {
    if (this.#closed) return
    this.#waiting = true
    this.#pump()
  }

  /** Resolves once no notification is in flight or waiting for its turn. */
  async settled (): Promise<void> {
    while (this.#sending !== null || this.#timer !== undefined) {
      await (this.#sending ?? new Promise((resolve) => setTimeout(resolve, this.#o.gapMillis)))
    }
  }

  /** Sends what is waiting at once, and nothing after. */
  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#pump()
    await this.settled()
  }

  #pump (): void {
    if (!this.#waiting || this.#sending !== null || this.#timer !== undefined) return
    const wait = this.#lastAt + this.#o.gapMillis - performance.now()
    if (wait > 0 && !this.#closed) {
      this.#timer = setTimeout(() => { this.#timer = undefined; this.#pump() }, wait)
      this.#timer.unref()
      return
    }
    this.#waiting = false
    this.#lastAt = performance.now()
    this.#sending = this.#o.send().catch((err: unknown) => {
      this.#o.log.warn({ err }, 'events: could not tell the other instances of new deliveries; they find them at their next poll')
    }).finally(() => {
      this.#sending = null
      this.#pump()
    })
  }
}
