import { Purge, type PurgeResult } from './purge.js'
import { quoteIdent } from './quote.js'
import type { WriteClaim } from './statement-parts.js'
import type { Migration, Queryable, Store } from './types.js'

/** How long delivery ids are kept: a producer retrying a delivery later than this would see it applied again. */
export const DEFAULT_DELIVERY_RETENTION = 7 * 24 * 60 * 60 * 1000

export interface WebhookDeliveriesOptions {
  /** Milliseconds a delivery id is kept after it was received. Default 7 days. */
  retention?: number
  /** The clock ids are received and purged by: default the database's. Tests pass one they move. */
  now?: () => Date
  /** Ids deleted per statement by `purge`. Default 1000. */
  purgeBatchSize?: number
}

/**
 * The ids of applied deliveries, per producer. Recorded in the transaction of the
 * handler's own writes, so an id is kept exactly when the delivery's effect is; purged once
 * older than the retention, as a producer no longer retries them by then.
 */
export class WebhookDeliveries {
  readonly table: string
  readonly retention: number
  private readonly now: (() => Date) | null
  private readonly recordSql: string
  private readonly seenSql: string
  private readonly T: string
  private readonly purger: Purge

  constructor (table: string, options: WebhookDeliveriesOptions = {}) {
    this.table = table
    this.retention = options.retention ?? DEFAULT_DELIVERY_RETENTION
    this.now = options.now ?? null
    this.purger = new Purge({ table, column: 'received_at', retention: this.retention, ...(options.purgeBatchSize === undefined ? {} : { batchSize: options.purgeBatchSize }) })
    // A concurrent insert of the same id waits on the primary key until the first
    // transaction ends: it then inserts (the first rolled back) or does nothing.
    this.T = quoteIdent(table)
    this.seenSql = `SELECT 1 AS seen FROM ${this.T} WHERE producer = $1 AND delivery_id = $2`
    this.recordSql = `INSERT INTO ${quoteIdent(table)} (producer, delivery_id, received_at) VALUES ($1, $2, coalesce($3::timestamptz, now()))
      ON CONFLICT (producer, delivery_id) DO NOTHING
      RETURNING 1 AS recorded`
  }

  /** The table, created through the store's migrations. */
  migrations (): Migration[] {
    return [{
      id: `webhooks:${this.table}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${quoteIdent(this.table)} (
        producer text NOT NULL,
        delivery_id text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ${quoteIdent(`${this.table}_pkey`)} PRIMARY KEY (producer, delivery_id)
      )`
    }, {
      // The purge finds old ids without reading the whole table.
      id: `webhooks:${this.table}:v2-received-at`,
      sql: `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.table}_received_at_idx`)} ON ${quoteIdent(this.table)} (received_at)`
    }]
  }

  /** Deletes ids older than the retention, in batches, unless another instance is purging them now. */
  async purge (store: Store): Promise<PurgeResult> {
    return await this.purger.run(store, this.now?.() ?? null)
  }

  /** Records the delivery on `tx`: true when it is new, false when it was recorded before. */
  /**
   * The record of a delivery as part of the write that applies it (store/statement-parts.ts):
   * the id is kept exactly when the write commits, in the same statement.
   */
  writeClaim (producer: string, id: string): WriteClaim<true> {
    return {
      part: {
        key: this.T,
        values: [producer, id, this.now?.() ?? null],
        sql: (first, when) => `k AS (INSERT INTO ${this.T} (producer, delivery_id, received_at)
          SELECT $${first}::text, $${first + 1}::text, coalesce($${first + 2}::timestamptz, now())${when === null ? '' : ` WHERE ${when}`}
          ON CONFLICT (producer, delivery_id) DO NOTHING RETURNING 1)`
      },
      take: async (db) => await this.record(db, producer, id) ? null : true,
      holder: async (db) => (await db.query(this.seenSql, [producer, id])).rows.length > 0 ? true : null
    }
  }

  async record (tx: Queryable, producer: string, id: string): Promise<boolean> {
    const { rows } = await tx.query(this.recordSql, [producer, id, this.now?.() ?? null])
    return rows.length > 0
  }
}
