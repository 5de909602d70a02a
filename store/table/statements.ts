import type { CollectionQuery, FieldMap, Page } from '../../model/query.js'
import { filtersOn } from '../../model/query.js'
import { quoteIdent } from '../quote.js'
import { readChildPage, readPage, type ReadPageOptions } from '../read-page.js'
import type { StatementParts } from '../sql-query.js'
import { tableColumns, type DerivedRef } from '../field-columns.js'
import { statementName, type AttachedPart, type ClaimPart, type OutboxPart, type QuietPart } from '../statement-parts.js'
import type { Queryable } from '../types.js'
import { DELETED_COLUMNS, rowDecoder, SERVER_COLUMNS, type Column } from './columns.js'
import { fromText } from './text-values.js'
import { foundStatement, writeStatement, writesAlone, type Guard, type Returning, type WriteKind, type WriteShape, type WriteTable, type WriteRows } from './write-statement.js'
import type { TableSpec } from './schema.js'

type Row = Record<string, unknown>

/** Ids in the order of the table's key: code units, the bytes of an ASCII id (`COLLATE "C"`). */
const byId = (a: RowWrite, b: RowWrite): number => a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/**
 * The fewest rows a write sends in the key's order (`record`): a smaller batch (a synchronous
 * bulk has 100 at most) rarely puts two keys on one page of the index, and sorting it costs
 * more than it saves (docs/operations.md).
 */
export const KEY_ORDER_MIN_ROWS = 1000

/** One row a write stores: its id, its new ETag and the API values of the fields it sets. */
export interface RowWrite {
  id: string
  etag: string
  values: Row
  /** The ETag the write was decided on, for a guarded write (`TableWrite.guarded`). */
  seen?: string
}

/** One write statement of a table (`ResourceTable.write`). */
export interface TableWrite {
  kind: WriteKind
  scope: WriteScope
  rows: readonly RowWrite[]
  /** An update's fields; default the writable ones. */
  fields?: readonly string[] | undefined
  /**
   * For a decision made without a lock, which rows it still holds for (write-statement.ts):
   * those whose ETag is still their `seen`, or that meet preconditions. Others are left out.
   */
  guard?: Guard | null
  /** Also answer the (one) row's ETag and deletion when the write did not apply (`WriteOutcome.current`). */
  current?: boolean
  /**
   * Prepare the statement under a name of its own (default true). False for a text shaped by
   * a request (the fields a PATCH names): the driver then prepares the texts that repeat, up to
   * its bound (`PoolOptions.preparedStatements`).
   */
  named?: boolean
  /** What the statement answers for each row written (default `'row'`, the row as stored). */
  returning?: Returning
  /** An idempotency claim the write depends on (IdempotencyKeys.claimPart). */
  claim?: ClaimPart | null
  /** The outbox rows the write adds (EventTables.outboxPart). */
  outbox?: OutboxPart | null
  /** In place of `outbox`, the check that no subscription wants the write's event (EventTables.quietPart). */
  quiet?: QuietPart | null
  /** A write of another table made for the rows written, in the same statement (FileContents.putPart). */
  attached?: AttachedPart | null
}

export interface WriteOutcome {
  /** The rows written, as stored (with `returning: 'etag'`, their `id` and `etag` alone; with `'count'`, none). */
  rows: Row[]
  /** With `returning: 'count'`, how many rows were written. */
  count?: number
  /** False when the claim answers for another request: nothing was written. */
  claimed: boolean
  /** Outbox rows written. */
  events: number
  /**
   * With `TableWrite.current`, when the write did not apply: the row's `etag` and
   * `deletedDateTime`, or null when it does not exist (`WriteShape.current`).
   */
  current?: Row | null
  /**
   * With `TableWrite.quiet`, true when the write may have been stopped by a subscription that
   * wants its event: it found one, or (a statement of the write alone, which cannot say) it
   * wrote no row. Nothing was written then; the write is to be made again with its outbox.
   */
  wanted?: boolean
  /** For an upsert that wrote its row: true when it inserted it, false when it replaced a stored one. */
  created?: boolean
}

/** A write statement made ahead of sending it (`ResourceTable.statement`). */
export interface WriteStatement {
  readonly shape: WriteShape
  readonly text: string
  readonly values: readonly unknown[]
  /** Prepared under a name of its own (`TableWrite.named`). */
  readonly named: boolean
  readonly ctx: string
  /** The id of its first row: what a write alone of one row found is read by. */
  readonly first: string | null
}

/** The row a write found, from its statement's `svc:etag` and `svc:deleted`; null when there was none. */
function foundRow (head: Row): Row | null {
  const etag = head['svc:etag'] as string | null
  return etag === null ? null : { etag, deletedDateTime: head['svc:deleted'] ?? null }
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
  /** What a write is decided on when it needs no field: the key, the ETag, the modification date (If-Unmodified-Since), the deletion mark and the unique fields. */
  private readonly selectKeys: string
  private readonly selectSummary: string
  private readonly writable: readonly Column[]
  private readonly texts = new Map<string, string>()
  private readonly parts: WriteTable
  /** Write statements' texts by shape (write-statement.ts). */
  private readonly writeTexts = new Map<string, string>()
  private readonly refs: readonly DerivedRef[]

  constructor (spec: TableSpec) {
    this.spec = spec
    this.T = quoteIdent(spec.table)
    this.all = [...SERVER_COLUMNS, ...spec.columns, ...(spec.softDelete ? DELETED_COLUMNS : [])]
    this.decode = rowDecoder(this.all)
    this.selectAll = this.all.map(c => c.ident).join(', ')
    this.selectKeys = ['id', 'etag', '"modifiedDateTime"', ...spec.softDelete ? ['"deletedDateTime"'] : [], ...spec.unique.map(f => this.columnsOf([f])[0]?.ident)].join(', ')
    this.selectSummary = this.all.filter(c => !spec.summaryOmit.includes(c.field)).map(c => `t.${c.ident}`).join(', ')
    this.writable = spec.columns.filter(c => spec.writable.includes(c.field))
    this.parts = { T: this.T, all: this.all, columns: spec.columns }
    this.refs = spec.refs ?? []
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

  private record (columns: readonly Column[], rows: readonly RowWrite[], seen: boolean): WriteRows {
    const [first] = rows
    if (rows.length === 1 && first !== undefined) {
      const values: unknown[] = seen ? [first.id, first.etag, first.seen ?? null] : [first.id, first.etag]
      for (const c of columns) {
        const value = first.values[c.field] ?? null
        // A JSON column's parameter is its JSON text: the driver would make an array an SQL array.
        values.push(c.kind === 'json' && value !== null ? JSON.stringify(value) : value)
      }
      return values
    }
    // A large batch goes in the key's order: each row's entry then goes into the key's index
    // beside the one before, not onto a page anywhere in it, and a job's transaction is shorter.
    // Rows come back matched by id, never by position.
    const ordered = rows.length >= KEY_ORDER_MIN_ROWS ? [...rows].sort(byId) : rows
    return JSON.stringify(ordered.map(r => {
      const out: Row = seen ? { id: r.id, etag: r.etag, seen: r.seen ?? null } : { id: r.id, etag: r.etag }
      // A JSON value goes in as itself: jsonb_to_recordset reads a jsonb member as jsonb.
      for (const c of columns) out[c.field] = r.values[c.field] ?? null
      return out
    }))
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
   * The current rows of `ids` that exist, by id. `lock`: locked until the transaction `db`
   * ends, so the checks a write makes on them (existence, preconditions) stay true while it
   * applies; in id order, so two writers of the same rows never wait on each other in a cycle.
   * Without it, a write decided on them is guarded instead (`TableWrite.guarded`). `full` reads
   * every column, else only `id`, `etag`, the deletion mark and the unique fields (whether a
   * write changes one decides whether a bulk's writes may leave request order).
   */
  async current (db: Queryable, ctx: string, ids: readonly string[], full = false, lock = true): Promise<Map<string, Row>> {
    const select = full ? this.selectAll : this.selectKeys
    const key = `${lock ? 'lock' : 'read'}${full ? '_full' : ''}`
    const rows = await this.rows(db, key, () => `SELECT ${select} FROM ${this.T} WHERE ctx = $1 AND id = ANY($2::text[])${lock ? ' ORDER BY id FOR UPDATE' : ''}`, [ctx, ids])
    return new Map(rows.map(r => [r.id as string, r]))
  }

  /**
   * Writes `rows` in one statement (write-statement.ts): inserts them, sets `fields` of existing
   * ones (default the writable ones: creation stamps and read-only fields stay, as a
   * replacement keeps them), marks them deleted or restores them, or deletes them; each with
   * its new ETag and stamps, by `scope.by`, now. Rows that do not exist (or, guarded, whose ETag
   * moved on) are left out of the result, which holds the rows as stored (as they were, for a
   * delete). With a claim, nothing is written unless the claim is taken.
   */
  async write (db: Queryable, w: TableWrite): Promise<WriteOutcome> {
    return await this.send(db, this.statement(w))
  }

  /**
   * `write`'s statement, made ahead of sending it (`send`): its text chosen and its values
   * gathered, the rows' JSON text among them. A transaction then holds its connection only
   * while the database runs it.
   */
  statement (w: TableWrite): WriteStatement {
    const guard = w.guard ?? null
    const set = w.kind !== 'update' && w.kind !== 'upsert' ? [] : w.fields === undefined ? this.writable : this.columnsOf(w.fields)
    const shape: WriteShape = { kind: w.kind, set, guard, claim: w.claim ?? null, outbox: w.outbox ?? null, quiet: w.quiet ?? null, attached: w.attached ?? null, current: w.current ?? false, returning: w.returning ?? 'row' }
    const columns = w.kind === 'insert' || w.kind === 'upsert' ? this.spec.columns : set
    const { text, values } = writeStatement(this.parts, this.writeTexts, shape, w.scope.ctx, w.scope.by, this.record(columns, w.rows, guard?.by === 'seen'))
    return { shape, text, values, named: w.named !== false, ctx: w.scope.ctx, first: w.rows[0]?.id ?? null }
  }

  /** Runs a statement `statement` made: what `write` answers. */
  async send (db: Queryable, s: WriteStatement): Promise<WriteOutcome> {
    const { shape } = s
    const { rows, rowCount } = await db.query<Row>(s.text, s.values, s.named ? { name: statementName(s.text) } : undefined)
    const counted = shape.returning === 'count'
    const created = shape.kind === 'upsert' ? rows[0]?.['svc:created'] as boolean | null | undefined : undefined
    if (writesAlone(shape)) {
      for (const row of rows) this.decode(row)
      const count = counted ? rowCount : rows.length
      if (count === 0 && shape.current && s.first !== null) return await this.found(db, shape, s.ctx, s.first)
      if (counted) return shape.quiet === null ? { rows, count, claimed: true, events: 0 } : { rows, count, claimed: true, events: 0, wanted: count === 0 }
      const alone: WriteOutcome = shape.quiet === null ? { rows, claimed: true, events: 0 } : { rows, claimed: true, events: 0, wanted: count === 0 }
      if (created != null) {
        alone.created = created
        for (const row of rows) delete row['svc:created']
      }
      return alone
    }
    const head = rows[0] as Row
    if (counted) {
      const outcome: WriteOutcome = { rows: [], count: head['svc:count'] as number, claimed: head['svc:claimed'] as boolean, events: head['svc:events'] as number }
      if (shape.current) outcome.current = foundRow(head)
      if (shape.quiet !== null) outcome.wanted = head['svc:wanted'] === true
      return outcome
    }
    const claimed = head['svc:claimed'] as boolean
    const events = head['svc:events'] as number
    const current = foundRow(head)
    const wanted = head['svc:wanted'] === true
    const written: Row[] = []
    for (const row of rows) {
      if (row.id === null) continue
      delete row['svc:claimed']
      delete row['svc:events']
      delete row['svc:etag']
      delete row['svc:deleted']
      delete row['svc:wanted']
      if (created !== undefined) delete row['svc:created']
      written.push(this.decode(row))
    }
    const outcome: WriteOutcome = shape.current ? { rows: written, claimed, events, current } : { rows: written, claimed, events }
    if (shape.quiet !== null) outcome.wanted = wanted
    if (created != null) outcome.created = created
    return outcome
  }

  /** What a write alone that wrote nothing found (`foundStatement`): the row's ETag and deletion, and whether a subscription wants the event. */
  private async found (db: Queryable, shape: WriteShape, ctx: string, id: string): Promise<WriteOutcome> {
    const { text, values } = foundStatement(this.parts, this.writeTexts, shape, ctx, id)
    const { rows } = await db.query<Row>(text, values, { name: statementName(text) })
    const head = rows[0] as Row
    const outcome: WriteOutcome = shape.returning === 'count' ? { rows: [], count: 0, claimed: true, events: 0, current: foundRow(head) } : { rows: [], claimed: true, events: 0, current: foundRow(head) }
    if (shape.quiet !== null) outcome.wanted = head['svc:wanted'] === true
    return outcome
  }

  /** A row as an outbox holds it (`ARRAY[<column>::text, …]`, write-statement.ts), back as API values. */
  snapshot (texts: ReadonlyArray<string | null>): Row {
    const row: Row = {}
    for (let i = 0; i < this.all.length; i++) {
      const c = this.all[i] as Column
      const text = texts[i] ?? null
      row[c.field] = text === null ? null : fromText(c.kind, text)
    }
    return this.decode(row)
  }

  /**
   * A finished page of the collection (store/read-page.ts, one statement): the summary's columns
   * of the rows `query` selects, in its order, with the total count when its paging asks for it.
   * `fields` names the query's paths; they are this table's columns (`defaultColumns`, alias `t`).
   * Deleted rows of a soft-deletable table are hidden unless the query filters on their deletion
   * (reference contract: Soft delete).
   */
  async page (db: Queryable, query: CollectionQuery, fields: FieldMap, scope: PageScope): Promise<Page<Row>> {
    const { source, options } = this.pageSource(query, fields, scope)
    return await readPage(db, query, fields, source, options)
  }

  /**
   * `page` of a child collection, the rows of `scope.parent` in `parentTable`: null when it is
   * empty and the parent is not there (a 404), answered by the same one statement.
   */
  async childPage (db: Queryable, query: CollectionQuery, fields: FieldMap, scope: Required<PageScope>, parentTable: ResourceTable): Promise<Page<Row> | null> {
    const { source, options } = this.pageSource(query, fields, scope)
    return await readChildPage(db, query, fields, source, `EXISTS (SELECT 1 FROM ${parentTable.T} WHERE ctx = $1 AND id = $2)`, options)
  }

  private pageSource (query: CollectionQuery, fields: FieldMap, scope: PageScope): { source: StatementParts, options: ReadPageOptions<Row> } {
    const params: unknown[] = [scope.ctx]
    let where = 't.ctx = $1'
    if (scope.parent !== undefined) {
      params.push(scope.parent.id)
      where += ` AND t.${quoteIdent(scope.parent.field)} = $2`
    }
    if (this.spec.softDelete && !filtersOn(query.filter, 'deletedDateTime')) where += ' AND t."deletedDateTime" IS NULL'
    const { columns, prefixed } = tableColumns(fields, this.refs)
    return { source: { select: this.selectSummary, from: `${this.T} t`, where, params }, options: { decode: this.decode, columns, prefixed } }
  }
}
