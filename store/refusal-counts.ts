import { Purge, type PurgeResult } from './purge.js'
import { quoteIdent } from './quote.js'
import type { Migration, Store } from './types.js'

/**
 * The auth plugin's refusal counts (its `refusalLimit.shared`) in a table, for instances that
 * share a PostgreSQL database and no Redis: one row per address and window. A row whose window
 * is over counts from 1 again, and the purge deletes such rows.
 */
export class RefusalCounts {
  readonly table: string
  private readonly addSql: string
  private readonly readSql: string
  private readonly purger: Purge

  private readonly store: Store

  constructor (store: Store, table = 'auth_refusals') {
    this.store = store
    this.table = table
    const t = quoteIdent(table)
    // $3: the time in milliseconds since the epoch, as the plugin counts it.
    this.addSql = `INSERT INTO ${t} AS r (key, count, reset_at) VALUES ($1, 1, to_timestamp($3 / 1000.0) + $2 * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN r.reset_at <= to_timestamp($3 / 1000.0) THEN 1 ELSE r.count + 1 END,
        reset_at = CASE WHEN r.reset_at <= to_timestamp($3 / 1000.0) THEN EXCLUDED.reset_at ELSE r.reset_at END`
    this.readSql = `SELECT count, ceil(extract(epoch FROM reset_at - to_timestamp($2 / 1000.0)) * 1000)::int AS reset_in_ms
      FROM ${t} WHERE key = $1 AND reset_at > to_timestamp($2 / 1000.0)`
    this.purger = new Purge({ table, column: 'reset_at', retention: 0 })
  }

  /** The table, created through the store's migrations. */
  migrations (): Migration[] {
    return [{
      id: `auth:${this.table}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${quoteIdent(this.table)} (
        key text PRIMARY KEY,
        count integer NOT NULL,
        reset_at timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.table}_reset_at_idx`)} ON ${quoteIdent(this.table)} (reset_at)`
    }]
  }

  async add (key: string, windowMs: number, now: number): Promise<void> {
    await this.store.query(this.addSql, [key, windowMs, now])
  }

  async read (key: string, now: number): Promise<{ count: number, resetInMs: number }> {
    const { rows } = await this.store.query<{ count: number, reset_in_ms: number }>(this.readSql, [key, now])
    const row = rows[0]
    return row === undefined ? { count: 0, resetInMs: 0 } : { count: row.count, resetInMs: row.reset_in_ms }
  }

  /** Deletes the rows of windows that are over (store/purge.ts). */
  async purge (now: Date | null = null): Promise<PurgeResult> {
    return await this.purger.run(this.store, now)
  }
}
