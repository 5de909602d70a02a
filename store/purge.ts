import { quoteIdent } from './quote.js'
import type { Store } from './types.js'

/*
 * Deleting what a growing table no longer needs, for every such table alike (idempotency keys,
 * webhook delivery ids, later jobs and events). Batches, each in a transaction of its own, so no
 * purge holds locks on many rows or runs into the statement timeout; each batch first takes a
 * transaction-level advisory lock without waiting, so that while one instance purges a table the
 * others skip it instead of deleting the same rows. Transaction-level, not session-level: it is
 * released at COMMIT whatever happens, and works through a pooler in transaction mode, where a
 * session is no connection of ours.
 */

/** Which rows of a table are past keeping. */
export interface RetentionRule {
  /** The table (a plain name, quoted here). */
  table: string
  /** A timestamptz column: when the row expires, or when it was made. */
  column: string
  /**
   * Milliseconds a row is kept after its `column`: 0 for a column that holds the expiry time
   * itself; for a creation time, how long rows are kept.
   */
  retention: number
  /** Rows deleted per statement. Default 1000. */
  batchSize?: number
  /**
   * Tables whose rows belong to this one's by a foreign key `ON DELETE CASCADE`: deleted first,
   * a batch at a time, so that a batch of this table takes none of them along (a job's steps,
   * up to one per operation, would otherwise make one batch of jobs millions of rows). Default none.
   */
  children?: readonly ChildRows[]
}

/** The rows of a table that belong to a purged table's: `on` pairs a column of theirs with the purged table's. */
export interface ChildRows {
  table: string
  on: ReadonlyArray<readonly [string, string]>
}

/** What one run did: rows deleted, and whether another instance was purging the table meanwhile. */
export interface PurgeResult {
  deleted: number
  /** True when a batch found the table's lock taken: another instance purges it now. */
  skipped: boolean
}

const DEFAULT_BATCH = 1000
// First key of the advisory lock: "SVP" (svc purge), apart from the migrations' "SVC".
const LOCK_CLASS = 1398166528
const NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** The purge of one table; `run` deletes what its rule says is past keeping. */
export class Purge {
  readonly rule: Required<RetentionRule>
  private readonly lockSql: string
  private readonly deleteSql: string
  private readonly childSql: string[]

  constructor (rule: RetentionRule) {
    const batchSize = rule.batchSize ?? DEFAULT_BATCH
    for (const key of ['table', 'column'] as const) {
      if (typeof rule[key] !== 'string' || !NAME.test(rule[key])) throw new TypeError(`purge: ${key} must be a lowercase SQL name, got ${JSON.stringify(rule[key])}`)
    }
    if (!Number.isSafeInteger(rule.retention) || rule.retention < 0) throw new TypeError(`purge: retention must be a non-negative integer of milliseconds, got ${String(rule.retention)}`)
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new TypeError(`purge: batchSize must be a positive integer, got ${String(batchSize)}`)
    const children = rule.children ?? []
    for (const child of children) {
      for (const name of [child.table, ...child.on.flat()]) {
        if (typeof name !== 'string' || !NAME.test(name)) throw new TypeError(`purge: children must name lowercase SQL names, got ${JSON.stringify(name)}`)
      }
    }
    this.rule = { ...rule, batchSize, children }
    const t = quoteIdent(rule.table)
    const c = quoteIdent(rule.column)
    // The batch of rows past keeping, oldest first (the column's index), the same for the
    // children's statements and the table's in one transaction. Rows a request holds are left
    // for the next run, never waited for: a batch waiting, row after row in its own order, for
    // writes that take the same rows in theirs (a subscription's DELETE its deliveries) was a
    // deadlock, and one of them failed. A row changed meanwhile is taken as it is now, if still past.
    const past = `FROM ${t} WHERE ${c} <= coalesce($1::timestamptz, now()) - $2 * interval '1 millisecond' ORDER BY ${c} LIMIT $3 FOR UPDATE SKIP LOCKED`
    // Per table and schema, so that purges of different tables, or of schemas side by side, never wait on each other.
    this.lockSql = `SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(coalesce(current_schema(), '') || '.' || $1::text)) AS locked`
    // The clock is a parameter ($1: null for the database's own), so a test can move it.
    this.deleteSql = `DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid ${past}))`
    // A batch of the children of that batch: while one is full, the table's rows wait.
    this.childSql = children.map(({ table, on }) => {
      const k = quoteIdent(table)
      const join = on.map(([mine, theirs]) => `k.${quoteIdent(mine)} = p.${quoteIdent(theirs)}`).join(' AND ')
      return `DELETE FROM ${k} WHERE ctid = ANY(ARRAY(
      SELECT k.ctid FROM (SELECT ${on.map(([, theirs]) => quoteIdent(theirs)).join(', ')} ${past}) AS p JOIN ${k} AS k ON ${join} LIMIT $3))`
    })
  }

  /**
   * Deletes the rows past keeping, batch after batch until one finds fewer than a batch, or the
   * table's lock taken by another instance. `now` replaces the database's clock (tests).
   */
  async run (store: Store, now: Date | null = null): Promise<PurgeResult> {
    const { table, retention, batchSize } = this.rule
    let deleted = 0
    for (;;) {
      const batch = await store.transaction(async (tx) => {
        const { rows } = await tx.query<{ locked: boolean }>(this.lockSql, [table])
        if (rows[0]?.locked !== true) return null
        for (const sql of this.childSql) {
          // A full batch of children: there may be more; the next transaction goes on.
          if ((await tx.query(sql, [now, retention, batchSize])).rowCount === batchSize) return { rows: 0, more: true }
        }
        const rowCount = (await tx.query(this.deleteSql, [now, retention, batchSize])).rowCount
        return { rows: rowCount, more: rowCount === batchSize }
      })
      if (batch === null) return { deleted, skipped: true }
      deleted += batch.rows
      if (!batch.more) return { deleted, skipped: false }
    }
  }
}
