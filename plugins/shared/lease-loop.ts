import type { Store } from '../../store/types.js'

/*
 * The loop that claims leased rows on this instance, for jobs and for event deliveries alike
 * (design: "woken by LISTEN/NOTIFY, a slow poll as a safety net, claimed with SKIP LOCKED").
 * It owns when to look and that one look runs at a time; what a look claims, and how long to
 * wait after it, belong to its owner.
 */

export interface LeaseLoopOptions {
  /** Where to listen: the store and the channel its writes notify. */
  store: Pick<Store, 'listen'>
  channel: string
  /** One look for work: claims what there is room for; resolves to the milliseconds to wait before the next (the safety poll). */
  look: () => Promise<number>
  /** A notification came (another instance, or this one, wrote or gave back a row). */
  notified: () => void
  /** A look was asked for while one ran: it may have missed what was announced, so look again. */
  again: () => void
  /** Logged once when the database cannot be listened to: the poll is then all there is. */
  unheard: string
  log: { warn: (obj: object, msg: string) => void }
}

export class LeaseLoop {
  private readonly o: LeaseLoopOptions
  private timer: NodeJS.Timeout | null = null
  /** When the timer fires, by `Date.now()` (Infinity: none set). */
  private due = Infinity
  private looking: Promise<void> | null = null
  private lookAgain = false
  private halted = true
  private unlisten: () => Promise<void> = async () => {}

  constructor (o: LeaseLoopOptions) {
    this.o = o
  }

  /** Stopped, or not started yet: no look begins. */
  get stopped (): boolean {
    return this.halted
  }

  /** When the next look is due, by `Date.now()`; Infinity when none is set. */
  get dueAt (): number {
    return this.due
  }

  /** Listens (a failure leaves the poll alone, logged) and looks at once. */
  async start (): Promise<void> {
    this.halted = false
    try {
      this.unlisten = await this.o.store.listen(this.o.channel, () => { this.o.notified() })
    } catch (err) {
      this.o.log.warn({ err }, this.o.unheard)
    }
    this.schedule(0)
  }

  /** Stops looking: no new look begins, the one running ends. */
  async stop (): Promise<void> {
    this.halted = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.due = Infinity
    await this.unlisten()
    await this.looking
  }

  /** Looks in `millis`, unless a look is due sooner; during a look, asks for another once it ends. */
  soon (millis: number): void {
    if (this.halted) return
    if (this.looking !== null) {
      this.lookAgain = true
      return
    }
    if (this.due > Date.now() + millis) this.schedule(millis)
  }

  /** Looks in `millis`, in place of the look set before, sooner or later. */
  schedule (millis: number): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.due = Date.now() + millis
    this.timer = setTimeout(() => {
      this.timer = null
      this.due = Infinity
      if (this.looking !== null) {
        this.lookAgain = true
        return
      }
      this.looking = this.lookOnce().finally(() => {
        this.looking = null
        if (!this.lookAgain) return
        this.lookAgain = false
        this.o.again()
      })
    }, millis)
    this.timer.unref()
  }

  private async lookOnce (): Promise<void> {
    const wait = await this.o.look()
    if (!this.halted) this.schedule(wait)
  }
}
