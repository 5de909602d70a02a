import { quoteIdent } from '../../store/quote.js'
import type { Queryable } from '../../store/types.js'
import type { Column } from '../resource/columns.js'
import type { ResourceDefinition } from '../resource/define.js'

type Row = Record<string, unknown>

/** One row a batched statement writes: its id, its new ETag and the API values of its fields. */
export interface BatchRow {
  id: string
  etag: string
  values: Row
}

/**
 * The record a batch of rows travels in: one `jsonb` parameter read by `jsonb_to_recordset`,
 * each field converted by its column type's input function, exactly as a `$n` text parameter
 * is (decimals and int64 stay exact strings, `text[]` from a JSON array, `jsonb` as is). So
 * every statement here has one fixed text per table, whatever the number of rows.
 */
function recordType (columns: readonly Column[]): string {
  return ['id text', 'etag text', ...columns.map(c => `${c.ident} ${c.sqlType}`)].join(', ')
}

function recordsParam (rows: readonly BatchRow[]): string {
  return JSON.stringify(rows.map(r => ({ ...r.values, id: r.id, etag: r.etag })))
}

/**
 * Set-based SQL for a bulk request (conventions: "Bulk endpoint"): one statement for a run of
 * operations instead of one per operation. Every statement is scoped by `ctx` and has a fixed
 * text, named so a server connection prepares it once (QueryOptions.name). Constraints stay
 * the database's: a batch that breaks one fails whole, and the caller finds the culprit by
 * running the operations one by one.
 */
export class BatchStatements {
  private readonly prefetchSql: string
  private readonly insertSql: string
  private readonly updateSql: string
  private readonly deleteSql: string
  private readonly names: { prefetch: { name: string }, insert: { name: string }, update: { name: string }, delete: { name: string } }

  constructor (def: ResourceDefinition) {
    const T = quoteIdent(def.table)
    const writable = def.columns.filter(c => def.writable.includes(c.field))
    // Rows are locked in id order, so two bulks touching the same rows never wait on each other in a cycle.
    this.prefetchSql = `SELECT id, etag FROM ${T} WHERE ctx = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`
    this.insertSql = `INSERT INTO ${T} (ctx, id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy", ${def.columns.map(c => c.ident).join(', ')})
      SELECT $1, x.id, x.etag, now(), $2, now(), $2, ${def.columns.map(c => `x.${c.ident}`).join(', ')}
      FROM jsonb_to_recordset($3::jsonb) AS x(${recordType(def.columns)})`
    // A replacement sets the writable fields only: creation stamps and stored read-only fields stay (as PUT).
    const set = ['etag = x.etag', '"modifiedDateTime" = now()', '"modifiedBy" = $2', ...writable.map(c => `${c.ident} = x.${c.ident}`)]
    this.updateSql = `UPDATE ${T} AS t SET ${set.join(', ')}
      FROM jsonb_to_recordset($3::jsonb) AS x(${recordType(writable)})
      WHERE t.ctx = $1 AND t.id = x.id`
    this.deleteSql = `DELETE FROM ${T} WHERE ctx = $1 AND id = ANY($2::text[])`
    const name = (key: string): { name: string } => ({ name: `svc_${def.table}_bulk_${key}` })
    this.names = { prefetch: name('prefetch'), insert: name('insert'), update: name('update'), delete: name('delete') }
  }

  /**
   * The current ETag of each of `ids` that exists, by id, with its row locked until the
   * transaction ends: the checks made on these ETags (ifMatch, existence) stay true while
   * the operations apply. Run it inside the bulk's transaction.
   */
  async prefetch (db: Queryable, ctx: string, ids: readonly string[]): Promise<Map<string, string>> {
    const { rows } = await db.query<{ id: string, etag: string }>(this.prefetchSql, [ctx, ids], this.names.prefetch)
    return new Map(rows.map(r => [r.id, r.etag]))
  }

  /** Creates the rows (every column given). */
  async insert (db: Queryable, ctx: string, by: string | null, rows: readonly BatchRow[]): Promise<void> {
    await db.query(this.insertSql, [ctx, by, recordsParam(rows)], this.names.insert)
  }

  /** Replaces the writable fields of existing rows (locked by `prefetch`). */
  async update (db: Queryable, ctx: string, by: string | null, rows: readonly BatchRow[]): Promise<void> {
    await db.query(this.updateSql, [ctx, by, recordsParam(rows)], this.names.update)
  }

  /** Deletes the rows (locked by `prefetch`). */
  async delete (db: Queryable, ctx: string, ids: readonly string[]): Promise<void> {
    await db.query(this.deleteSql, [ctx, ids], this.names.delete)
  }
}
