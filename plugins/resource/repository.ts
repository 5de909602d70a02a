import { quoteIdent } from '../../store/quote.js'
import type { Queryable } from '../../store/types.js'
import type { Column } from './columns.js'
import type { ResourceDefinition } from './define.js'
import { selectList } from './representation.js'

type Row = Record<string, unknown>

/**
 * A precondition turned into SQL (RFC 9110 §13): `match` is the If-Match list (strong tags;
 * empty matches nothing), `noneMatch` the If-None-Match list. Compared in the same statement
 * that changes the row, so of two writers holding one ETag exactly one wins.
 */
export interface Condition {
  match?: readonly string[] | null
  noneMatch?: readonly string[] | null
}

/** Who and what a write stores. */
export interface Write {
  ctx: string
  id: string
  /** The new ETag. */
  etag: string
  /** The token's `sub`, or null without authentication. */
  by: string | null
  /** API values of the columns the statement sets. */
  values: Row
}

const INSERT_HEAD = ['ctx', 'id', 'etag', '"createdDateTime"', '"createdBy"', '"modifiedDateTime"', '"modifiedBy"']

/**
 * Parameterized SQL for one resource table. Every statement is built once (per condition
 * variant) and only values travel per request; every one is scoped by `ctx`, the
 * execution context. Statements take a `Queryable`: the store, or a transaction.
 */
export class Repository {
  readonly def: ResourceDefinition
  private readonly T: string
  private readonly select: string
  private readonly columns: readonly Column[]
  private readonly writable: readonly Column[]
  private readonly getSql: string
  private readonly getLockedSql: string
  private readonly insertSql: string
  private readonly insertOnlySql: string
  private readonly etagSql: string
  private readonly cache = new Map<string, string>()
  // Statement names: every SQL text here is fixed per table and variant, so the server may
  // prepare it once per connection (QueryOptions.name).
  private readonly names = new Map<string, { name: string }>()

  constructor (def: ResourceDefinition) {
    this.def = def
    this.T = quoteIdent(def.table)
    this.select = selectList(def)
    this.columns = def.columns
    this.writable = def.columns.filter(c => def.writable.includes(c.field))
    this.getSql = `SELECT ${this.select} FROM ${this.T} WHERE ctx = $1 AND id = $2`
    this.getLockedSql = `${this.getSql} FOR UPDATE`
    this.etagSql = `SELECT etag FROM ${this.T} WHERE ctx = $1 AND id = $2`
    const insert = `INSERT INTO ${this.T} (${[...INSERT_HEAD, ...this.columns.map(c => c.ident)].join(', ')})
      VALUES ($1, $2, $3, now(), $4, now(), $4, ${this.columns.map((_, i) => `$${i + 5}`).join(', ')})`
    this.insertSql = `${insert} RETURNING ${this.select}`
    this.insertOnlySql = `${insert} ON CONFLICT (ctx, id) DO NOTHING RETURNING 1 AS ok`
  }

  private params (w: Write, columns: readonly Column[]): unknown[] {
    const out: unknown[] = [w.ctx, w.id, w.etag, w.by]
    for (const c of columns) out.push(c.toParam(w.values[c.field]))
    return out
  }

  private conditionSql (cond: Condition, params: unknown[], target: string): string {
    let sql = ''
    if (cond.match != null) { params.push(cond.match); sql += ` AND ${target}etag = ANY($${params.length})` }
    if (cond.noneMatch != null) { params.push(cond.noneMatch); sql += ` AND ${target}etag <> ALL($${params.length})` }
    return sql
  }

  private cached (key: string, build: () => string): string {
    let sql = this.cache.get(key)
    if (sql === undefined) {
      sql = build()
      this.cache.set(key, sql)
    }
    return sql
  }

  private named (key: string): { name: string } {
    let options = this.names.get(key)
    if (options === undefined) {
      options = { name: `svc_${this.def.table}_${key.replace(/:/g, '_')}` }
      this.names.set(key, options)
    }
    return options
  }

  private static variant (cond: Condition): string {
    return `${cond.match != null ? 'm' : ''}${cond.noneMatch != null ? 'n' : ''}`
  }

  /** The entity row (API values, without ref and derived fields), or null. One round trip. */
  async get (db: Queryable, ctx: string, id: string): Promise<Row | null> {
    const { rows } = await db.query(this.getSql, [ctx, id], this.named('get'))
    return rows[0] ?? null
  }

  /** As get, and locks the row until the transaction `db` ends: no one else changes it meanwhile. */
  async getLocked (db: Queryable, ctx: string, id: string): Promise<Row | null> {
    const { rows } = await db.query(this.getLockedSql, [ctx, id], this.named('get_locked'))
    return rows[0] ?? null
  }

  /** The current ETag, or null when the row does not exist. */
  async etagOf (db: Queryable, ctx: string, id: string): Promise<string | null> {
    const { rows } = await db.query<{ etag: string }>(this.etagSql, [ctx, id], this.named('etag'))
    return rows[0]?.etag ?? null
  }

  /** Creates the row (every column given) and returns it as read. */
  async insert (db: Queryable, w: Write): Promise<Row> {
    const { rows } = await db.query(this.insertSql, this.params(w, this.columns), this.named('insert'))
    return rows[0] as Row
  }

  /** Creates the row unless the id exists (`If-None-Match: *`); false when it existed. */
  async insertOnly (db: Queryable, w: Write): Promise<boolean> {
    const { rows } = await db.query(this.insertOnlySql, this.params(w, this.columns), this.named('insert_only'))
    return rows.length > 0
  }

  /**
   * PUT without If-Match: creates the row, or replaces its writable fields (creation stamps
   * and stored read-only fields stay). With `noneMatch`, an existing row whose ETag is
   * listed is left alone: false.
   */
  async upsert (db: Queryable, w: Write, cond: Condition = {}): Promise<boolean> {
    const params = this.params(w, this.columns)
    const where = this.conditionSql({ noneMatch: cond.noneMatch }, params, `${this.T}.`)
    const key = `upsert:${Repository.variant({ noneMatch: cond.noneMatch })}`
    const sql = this.cached(key, () => {
      const set = ['etag', '"modifiedDateTime"', '"modifiedBy"', ...this.writable.map(c => c.ident)]
        .map(c => `${c} = EXCLUDED.${c}`).join(', ')
      return `${this.insertSql.slice(0, this.insertSql.indexOf(' RETURNING '))} ON CONFLICT (ctx, id) DO UPDATE SET ${set}${where ? ` WHERE ${where.slice(5)}` : ''} RETURNING 1 AS ok`
    })
    const { rows } = await db.query(sql, params, this.named(key))
    return rows.length > 0
  }

  /**
   * Compare-and-set update of an existing row: `scope` `'writable'` sets the writable fields
   * (PUT), `'stored'` every stored field, read-only ones included (PATCH, server-side
   * changes). False when the row is missing or the condition failed.
   */
  async update (db: Queryable, w: Write, cond: Condition, scope: 'writable' | 'stored'): Promise<boolean> {
    const columns = scope === 'writable' ? this.writable : this.columns
    const params = this.params(w, columns)
    const where = this.conditionSql(cond, params, '')
    const key = `update:${scope}:${Repository.variant(cond)}`
    const sql = this.cached(key, () => {
      const set = ['etag = $3', '"modifiedDateTime" = now()', '"modifiedBy" = $4', ...columns.map((c, i) => `${c.ident} = $${i + 5}`)]
      return `UPDATE ${this.T} SET ${set.join(', ')} WHERE ctx = $1 AND id = $2${where} RETURNING 1 AS ok`
    })
    const { rows } = await db.query(sql, params, this.named(key))
    return rows.length > 0
  }

  /** Deletes the row if the condition holds; false when nothing was deleted. */
  async delete (db: Queryable, ctx: string, id: string, cond: Condition = {}): Promise<boolean> {
    const params: unknown[] = [ctx, id]
    const where = this.conditionSql(cond, params, '')
    const key = `delete:${Repository.variant(cond)}`
    const sql = this.cached(key, () =>
      `DELETE FROM ${this.T} WHERE ctx = $1 AND id = $2${where} RETURNING 1 AS ok`)
    const { rows } = await db.query(sql, params, this.named(key))
    return rows.length > 0
  }
}
