import type { CollectionQuery, FieldMap } from '../../model/query.js'
import { quoteIdent } from '../quote.js'
import { compileSql, countStatement, selectStatement } from '../sql-query.js'
import type { Queryable } from '../types.js'
import { DELETED_COLUMNS, rowDecoder, SERVER_COLUMNS, type Column } from './columns.js'
import type { TableSpec } from './schema.js'

type Row = Record<string, unknown>

/** One row a write stores: its id, its new ETag and the API values of the fields it sets. */
export interface RowWrite {
  id: string
  etag: string
  values: Row
}

/** Where a write lands and who makes it: the execution context, and the token's `sub` (or null). */
export interface WriteScope {
  ctx: string
  by: string | null
}

/** The rows a page reads: one execution context, and for a child collection one parent. */
export interface PageScope {
  ctx: string
  parent?: { field: string, id: string }
  /** Of a soft-deletable table, the deleted rows too (the query filters on their deletion). Default false. */
  withDeleted?: boolean
}

export interface PageOptions {
  /** Also count every row the filter matches (offset paging, `totalCount=true`). */
  totalCount?: boolean
}

export interface PageRows {
  /** At most `limit + 1` rows in fetch order (store/sql-query.ts), as API values. */
  rows: Row[]
  totalCount?: number
}

/**
 * Every statement of one resource table, built from its `TableSpec`: reads (one row, the
 * current rows a write locks, a page of the collection) and writes (insert, update, delete),
 * each scoped by `ctx`, the execution context. Writes take a batch of rows in one `jsonb`
 * parameter read by `jsonb_to_recordset`, so a statement has one fixed text whatever the
 * number of rows, and the database converts each member with its column type's input
 * function, exactly as it would a `$n` text parameter (decimals and int64 stay exact).
 * Rows come back as API values (`rowDecoder`). Statements take a `Queryable`: the store, or
 * a transaction.
 */
export class ResourceTable {
  readonly spec: TableSpec
  private readonly T: string
  /** Server columns and fields, in the order rows are read. */
  private readonly all: readonly Column[]
  private readonly decode: (row: Row) => Row
  private readonly selectAll: string
  private readonly selectSummary: string
  private readonly writable: readonly Column[]
  private readonly texts = new Map<string, string>()

  constructor (spec: TableSpec) {
    this.spec = spec
    this.T = quoteIdent(spec.table)
    this.all = [...SERVER_COLUMNS, ...spec.columns, ...(spec.softDelete ? DELETED_COLUMNS : [])]
    this.decode = rowDecoder(this.all)
    this.selectAll = this.all.map(c => c.ident).join(', ')
    this.selectSummary = this.all.filter(c => !spec.summaryOmit.includes(c.field)).map(c => `t.${c.ident}`).join(', ')
    this.writable = spec.columns.filter(c => spec.writable.includes(c.field))
  }

  /**
   * A statement's text, built once per key. Each is fixed, so the store prepares it on a server
   * connection once it repeats (PoolOptions.preparedStatements).
   */
  private text (key: string, build: () => string): string {
    let text = this.texts.get(key)
    if (text === undefined) {
      text = build()
      this.texts.set(key, text)
    }
    return text
  }

  private async rows (db: Queryable, key: string, build: () => string, params: readonly unknown[]): Promise<Row[]> {
    const { rows } = await db.query<Row>(this.text(key, build), params)
    for (const row of rows) this.decode(row)
    return rows
  }

  private record (columns: readonly Column[], rows: readonly RowWrite[]): string {
    return JSON.stringify(rows.map(r => {
      const out: Row = { id: r.id, etag: r.etag }
      // A JSON value goes in as itself: jsonb_to_recordset reads a jsonb member as jsonb.
      for (const c of columns) out[c.field] = r.values[c.field] ?? null
      return out
    }))
  }

  private static recordType (columns: readonly Column[]): string {
    return ['id text', 'etag text', ...columns.map(c => `${c.ident} ${c.sqlType}`)].join(', ')
  }

  private columnsOf (fields: readonly string[]): Column[] {
    return fields.map(f => {
      const c = this.spec.columns.find(x => x.field === f)
      if (c === undefined) throw new TypeError(`ResourceTable ${this.spec.table}: no field ${f}`)
      return c
    })
  }

  /** The row of `id`, or null. */
  async get (db: Queryable, ctx: string, id: string): Promise<Row | null> {
    const rows = await this.rows(db, 'get', () => `SELECT ${this.selectAll} FROM ${this.T} WHERE ctx = $1 AND id = $2`, [ctx, id])
    return rows[0] ?? null
  }

  /** The ETag of `id`, or null when it does not exist. */
  async etagOf (db: Queryable, ctx: string, id: string): Promise<string | null> {
    const { rows } = await db.query<{ etag: string }>(this.text('etag', () => `SELECT etag FROM ${this.T} WHERE ctx = $1 AND id = $2`), [ctx, id])
    return rows[0]?.etag ?? null
  }

  /**
   * The current rows of `ids` that exist, by id, locked until the transaction `db` ends: the
   * checks a write makes on them (existence, preconditions) stay true while it applies. Locked
   * in id order, so two writers of the same rows never wait on each other in a cycle. `full`
   * reads every column, else only `id` and `etag`.
   */
  async current (db: Queryable, ctx: string, ids: readonly string[], full = false): Promise<Map<string, Row>> {
    const select = full ? this.selectAll : this.spec.softDelete ? 'id, etag, "deletedDateTime"' : 'id, etag'
    const rows = await this.rows(db, full ? 'lock_full' : 'lock', () => `SELECT ${select} FROM ${this.T} WHERE ctx = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`, [ctx, ids])
    return new Map(rows.map(r => [r.id as string, r]))
  }

  /** Creates the rows (every field given) and returns them as stored. */
  async insert (db: Queryable, scope: WriteScope, rows: readonly RowWrite[]): Promise<Row[]> {
    const columns = this.spec.columns
    return await this.rows(db, 'insert', () => `INSERT INTO ${this.T} (ctx, ${SERVER_COLUMNS.map(c => c.ident).join(', ')}, ${columns.map(c => c.ident).join(', ')})
      SELECT $1, x.id, x.etag, now(), $2, now(), $2, ${columns.map(c => `x.${c.ident}`).join(', ')}
      FROM jsonb_to_recordset($3::jsonb) AS x(${ResourceTable.recordType(columns)})
      RETURNING ${this.selectAll}`, [scope.ctx, scope.by, this.record(columns, rows)])
  }

  /**
   * Sets `fields` of existing rows (default the writable ones: creation stamps and read-only
   * fields stay, as a replacement keeps them), with a new ETag and modification stamps, and
   * returns them as stored. Rows that do not exist are left out of the result.
   */
  async update (db: Queryable, scope: WriteScope, rows: readonly RowWrite[], fields?: readonly string[]): Promise<Row[]> {
    const columns = fields === undefined ? this.writable : this.columnsOf(fields)
    const key = fields === undefined ? 'update' : `update_${fields.join('_')}`
    return await this.rows(db, key, () => {
      const set = ['etag = x.etag', '"modifiedDateTime" = now()', '"modifiedBy" = $2', ...columns.map(c => `${c.ident} = x.${c.ident}`)]
      return `UPDATE ${this.T} AS t SET ${set.join(', ')}
      FROM jsonb_to_recordset($3::jsonb) AS x(${ResourceTable.recordType(columns)})
      WHERE t.ctx = $1 AND t.id = x.id
      RETURNING ${this.all.map(c => `t.${c.ident}`).join(', ')}`
    }, [scope.ctx, scope.by, this.record(columns, rows)])
  }

  /** Marks rows of a soft-deletable table deleted, by `scope.by` now, with new ETags; returns them as stored. */
  async markDeleted (db: Queryable, scope: WriteScope, rows: readonly RowWrite[]): Promise<Row[]> {
    return await this.rows(db, 'mark_deleted', () => `UPDATE ${this.T} AS t SET etag = x.etag, "deletedDateTime" = now(), "deletedBy" = $2
      FROM jsonb_to_recordset($3::jsonb) AS x(id text, etag text)
      WHERE t.ctx = $1 AND t.id = x.id
      RETURNING ${this.all.map(c => `t.${c.ident}`).join(', ')}`, [scope.ctx, scope.by, this.record([], rows)])
  }

  /** Brings deleted rows back (not deleted any more), as a change by `scope.by`; returns them as stored. */
  async restore (db: Queryable, scope: WriteScope, rows: readonly RowWrite[]): Promise<Row[]> {
    return await this.rows(db, 'restore', () => `UPDATE ${this.T} AS t SET etag = x.etag, "deletedDateTime" = NULL, "deletedBy" = NULL,
        "modifiedDateTime" = now(), "modifiedBy" = $2
      FROM jsonb_to_recordset($3::jsonb) AS x(id text, etag text)
      WHERE t.ctx = $1 AND t.id = x.id
      RETURNING ${this.all.map(c => `t.${c.ident}`).join(', ')}`, [scope.ctx, scope.by, this.record([], rows)])
  }

  /** Deletes the rows of `ids` and returns them as they were. */
  async delete (db: Queryable, ctx: string, ids: readonly string[]): Promise<Row[]> {
    return await this.rows(db, 'delete', () => `DELETE FROM ${this.T} WHERE ctx = $1 AND id = ANY($2::text[]) RETURNING ${this.selectAll}`, [ctx, ids])
  }

  /**
   * A page of the collection: the summary's columns of the rows `query` selects, in its order,
   * at most `limit + 1` (store/sql-query.ts). `fields` maps the query's paths onto this table
   * (alias `t`).
   */
  async page (db: Queryable, query: CollectionQuery, fields: FieldMap, scope: PageScope, opts: PageOptions = {}): Promise<PageRows> {
    const params: unknown[] = [scope.ctx]
    let where = 't.ctx = $1'
    if (scope.parent !== undefined) {
      params.push(scope.parent.id)
      where += ` AND t.${quoteIdent(scope.parent.field)} = $2`
    }
    if (this.spec.softDelete && scope.withDeleted !== true) where += ' AND t."deletedDateTime" IS NULL'
    const sql = compileSql(query, fields, { paramStart: params.length + 1 })
    const from = `${this.T} t`
    const statement = selectStatement(sql, { select: this.selectSummary, from, where, params })
    const { rows } = await db.query<Row>(statement.text, statement.params)
    for (const row of rows) this.decode(row)
    const out: PageRows = { rows }
    if (opts.totalCount === true) {
      const count = countStatement(sql, { from, where, params })
      const total = await db.query<{ totalCount: number }>(count.text, count.params)
      // count(*) always answers one row.
      out.totalCount = (total.rows[0] as { totalCount: number }).totalCount
    }
    return out
  }
}
