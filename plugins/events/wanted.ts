import type { QuietPart } from '../../store/statement-parts.js'

/** How many execution contexts' wanted events are kept before they are forgotten. */
const MAX_WANTED = 10_000

/**
 * Which events the subscriptions of each execution context want, as this instance's writes
 * last found. A write of one entity whose event none wants carries the quiet check (no
 * subscription wants it) in place of the outbox's insert, which costs the database more even
 * when it writes no row. Nothing is lost when this is out of date: a quiet write that finds a
 * subscription writes nothing and is made again with its outbox (resource/write/writer.ts),
 * and a write with its outbox that finds none makes the next one quiet again.
 */
export class WantedEvents {
  /** `ctx` and event type, of those a subscription was found to want. */
  private readonly wanted = new Set<string>()
  /** The quiet check of each event type: the served resources' types, a few. */
  private readonly parts = new Map<string, QuietPart>()
  private readonly quietPart: (type: string) => QuietPart
  private readonly max: number

  constructor (quietPart: (type: string) => QuietPart, max = MAX_WANTED) {
    this.quietPart = quietPart
    this.max = max
  }

  /** The quiet check for a write of `type` in `ctx`, or null when a subscription was found to want it. */
  quiet (type: string, ctx: string): QuietPart | null {
    if (this.wanted.has(`${ctx}\u0000${type}`)) return null
    let part = this.parts.get(type)
    if (part === undefined) {
      part = this.quietPart(type)
      this.parts.set(type, part)
    }
    return part
  }

  heard (type: string, ctx: string, wanted: boolean): void {
    const key = `${ctx}\u0000${type}`
    if (!wanted) {
      this.wanted.delete(key)
      return
    }
    // Contexts may have no end: forgetting them all costs each one refused quiet write.
    if (!this.wanted.has(key) && this.wanted.size >= this.max) this.wanted.clear()
    this.wanted.add(key)
  }
}
