/*
 * Which unnamed statements a PostgreSQL server connection prepares. A statement run once is
 * parsed, analysed and planned for that one run; a prepared one skips the parsing and analysis
 * on every later run on the connection (a fifth to a quarter of PostgreSQL's CPU for a 20-row
 * collection page, bench/README.md). The SQL texts of a collection query differ only by the
 * request's shape (which fields it filters and orders on), so a few of them carry most reads.
 *
 * Bounded, because each prepared text costs every connection about 35 KB of server memory:
 * a text gets a name the second time it is seen, and at most `max` texts get one; later texts
 * run unnamed. Names are never reused for another text (pg refuses that on a connection that
 * holds the old one), so nothing is ever deallocated.
 */

/** How many texts seen once are remembered before they are forgotten all together. */
const CANDIDATES = 1000

export class StatementNames {
  readonly max: number
  readonly #names = new Map<string, string>()
  readonly #seen = new Set<string>()

  constructor (max: number) {
    this.max = max
  }

  /** The statement name for `text`, or undefined to run it unnamed this time. */
  nameOf (text: string): string | undefined {
    const name = this.#names.get(text)
    if (name !== undefined || this.#names.size >= this.max) return name
    if (!this.#seen.has(text)) {
      // A text must repeat among the last thousand new ones, so one-off shapes never fill `max`.
      if (this.#seen.size >= CANDIDATES) this.#seen.clear()
      this.#seen.add(text)
      return undefined
    }
    this.#seen.delete(text)
    // ':' keeps these apart from the names callers give fixed texts (QueryOptions.name).
    const fresh = `svc:auto:${this.#names.size + 1}`
    this.#names.set(text, fresh)
    return fresh
  }

  /** How many texts have a name. */
  get size (): number {
    return this.#names.size
  }
}
