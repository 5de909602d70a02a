import { quoteIdent } from './quote.js'
import type { Migration, Queryable } from './types.js'

/**
 * The ids of applied deliveries, per producer. Recorded in the transaction of the
 * handler's own writes, so an id is kept exactly when the delivery's effect is.
 */
export class WebhookDeliveries {
  readonly table: string
  private readonly recordSql: string

  constructor (table: string) {
    this.table = table
    // A concurrent insert of the same id waits on the primary key until the first
    // transaction ends: it then inserts (the first rolled back) or does nothing.
    this.recordSql = `INSERT INTO ${quoteIdent(table)} (producer, delivery_id) VALUES ($1, $2)
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
    }]
  }

  /** Records the delivery on `tx`: true when it is new, false when it was recorded before. */
  async record (tx: Queryable, producer: string, id: string): Promise<boolean> {
    const { rows } = await tx.query(this.recordSql, [producer, id])
    return rows.length > 0
  }
}
