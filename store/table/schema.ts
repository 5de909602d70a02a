import { createHash } from 'node:crypto'
import type { FieldDescriptor } from '../../model/query.js'
import { defaultColumn, type DerivedRef } from '../field-columns.js'
import { quoteIdent } from '../quote.js'
import type { Migration, StoreKind } from '../types.js'
import { DELETED_COLUMNS, SERVER_COLUMNS, type Column } from './columns.js'

/** One key of a query index: a field path (top-level column or nested JSON path) and its direction. */
export interface IndexKey {
  path: string
  /** The key's SQL, without alias: a quoted column, or a parenthesized expression with its collation. */
  sql: string
  descending: boolean
}

/**
 * The key of an index of `table` on a query path, whose SQL is the expression the query
 * compiler orders and compares by (`defaultColumn`, over the table's own name): a top-level
 * column as it is (text columns have the "C" collation already, `tableDdl`), a nested value as
 * its expression, with COLLATE "C" on text.
 */
export function indexKey (field: FieldDescriptor, descending: boolean, table: string): IndexKey {
  const text = field.type === 'string' || field.type === 'enum'
  const sql = field.path.includes('.') ? `${defaultColumn(field.path, field.type, quoteIdent(table))}${text ? ' COLLATE "C"' : ''}` : quoteIdent(field.path)
  return { path: field.path, sql, descending }
}

/** An index `(ctx, <keys…>, id)` serving the collection queries that filter or order by its keys. */
export interface TableIndex {
  name: string
  keys: readonly IndexKey[]
}

/** The storage face of a resource: everything its table's DDL and statements are built from. */
export interface TableSpec {
  table: string
  /** The entity's own fields (the server's columns are added: `SERVER_COLUMNS`). */
  columns: readonly Column[]
  /** Fields a client's write (PUT, PATCH, a bulk UPDATE) sets; the others keep their value. */
  writable: readonly string[]
  /** Fields unique within an execution context. */
  unique: readonly string[]
  /**
   * A predicate that narrows every unique set to the rows it holds for (a partial unique index
   * instead of a UNIQUE constraint), e.g. `"deletedDateTime" IS NULL` when deleted rows keep
   * their values. Default none.
   */
  uniqueWhere?: string
  /** `field` references `table`'s `(ctx, id)`. */
  references: ReadonlyArray<{ field: string, table: string }>
  /** Query indexes. */
  indexes: readonly TableIndex[]
  /** Fields a page of the collection leaves out (its items are summaries). */
  summaryOmit: readonly string[]
  /**
   * A deletion marks the row (`DELETED_COLUMNS`) instead of removing it, and pages leave deleted
   * rows out unless asked. Unique sets then hold among the rows not deleted (`uniqueWhere`).
   */
  softDelete: boolean
  /** Text fields of the items derived from a column by a prefix (`ref`), which queries may name. Default none. */
  refs?: readonly DerivedRef[]
  /**
   * How full, in percent, new rows leave each page of the table (PostgreSQL's `fillfactor`, 10
   * to 100); default the store's (`defaultFillfactor`).
   */
  fillfactor?: number
}

/**
 * The fillfactor of a resource table whose definition names none. Every write of an entity
 * writes a new version of its row (a new ETag). When the version fits on its row's page and no
 * indexed column changed, PostgreSQL adds no index entry for it (a heap-only tuple), and an
 * update costs a fraction of one that does. The embedded store, whose one connection every
 * request waits for while a job's transaction runs, leaves half of each page for them: a
 * page's rows can all be written again at once (an update of every row, in a job), and the
 * table is as large after one such update as a full one is (docs/operations.md). A server
 * keeps PostgreSQL's own (full pages, null here).
 */
export function defaultFillfactor (kind: StoreKind): number | null {
  return kind === 'pglite' ? 50 : null
}

/** The predicate of a soft-deletable table's unique sets: a deleted row keeps its values without holding them. */
export const NOT_DELETED = '"deletedDateTime" IS NULL'

/** A SQL string literal of a trusted value written in a definition (enum values, defaults), never of input. */
export function literal (value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** Deterministic constraint names, so a violation maps back to its field by name. */
export const constraintNames = {
  primaryKey: (table: string) => `${table}_pkey`,
  unique: (table: string, field: string) => `${table}_${field}_key`,
  foreignKey: (table: string, field: string) => `${table}_${field}_fkey`,
  check: (table: string, field: string) => `${table}_${field}_check`,
  index: (table: string, field: string) => `${table}_${field}_idx`,
  /**
   * A declared query index: `<table>_by_<key>_<key>…`, a key being the path with `_` for
   * `.` and a `_desc` suffix when descending; past 63 bytes (PostgreSQL's limit) it is cut
   * and ends with a hash of the whole name, so the name stays deterministic and distinct.
   */
  queryIndex: (table: string, keys: readonly IndexKey[]) => {
    const name = `${table}_by_${keys.map(k => k.path.replaceAll('.', '_') + (k.descending ? '_desc' : '')).join('_')}`
    if (name.length <= 63) return name
    return `${name.slice(0, 54)}_${createHash('sha256').update(name).digest('hex').slice(0, 8)}`
  }
}

/**
 * Every text column of the table in code-point order (`COLLATE "C"`), the collation the
 * query compiler sorts and compares text with (store/sql-query.ts): only then can the
 * primary key and the other indexes serve an ordering or a keyset condition. Only the
 * columns not yet in "C" are altered, in one statement (their indexes are rebuilt once):
 * a table made before is converted, and running it again costs a catalog lookup.
 */
export function collationDdl (table: string): string {
  const T = quoteIdent(table)
  return `DO $collation$
DECLARE changes text;
BEGIN
  SELECT string_agg(format('ALTER COLUMN %I TYPE text COLLATE "C"', attname), ', ' ORDER BY attnum) INTO changes
  FROM pg_attribute
  WHERE attrelid = ${literal(T)}::regclass AND attnum > 0 AND NOT attisdropped
    AND atttypid = 'text'::regtype AND attcollation <> '"C"'::regcollation;
  IF changes IS NOT NULL THEN
    EXECUTE 'ALTER TABLE ' || ${literal(T)} || ' ' || changes;
  END IF;
END $collation$`
}

/** `CREATE INDEX … (ctx, <keys…>, id)`: the id ends every ordering (conventions: "Sorting"). `on` is the relation, default the table. */
export function indexDdl (table: string, index: TableIndex, on = quoteIdent(table)): string {
  const keys = index.keys.map(k => k.descending ? `${k.sql} DESC` : k.sql)
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${on} (ctx, ${keys.join(', ')}, id)`
}

/** One unique set: `(ctx, field)`, a UNIQUE constraint, or a partial unique index when `where` is set. */
export interface UniqueKey {
  /** `constraintNames.unique`: the constraint's or the index's name, whichever form it takes. */
  name: string
  field: string
  where: string | null
}

/** The unique sets of a table. */
export function uniqueKeys (spec: Pick<TableSpec, 'table' | 'unique' | 'uniqueWhere'>): UniqueKey[] {
  return spec.unique.map(field => ({ name: constraintNames.unique(spec.table, field), field, where: spec.uniqueWhere ?? null }))
}

/** The statement that makes a unique set on `on` (default the table) as an index, partial or not. */
export function uniqueIndexDdl (table: string, key: UniqueKey, on = quoteIdent(table)): string {
  const where = key.where === null ? '' : ` WHERE ${key.where}`
  return `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(key.name)} ON ${on} (ctx, ${quoteIdent(key.field)})${where}`
}

/** An index the table needs besides its primary key: a unique set, a reference's lookup or a query index. */
export interface PlannedIndex {
  name: string
  kind: 'unique' | 'reference' | 'query'
  /** The top-level columns its keys read. */
  columns: readonly string[]
  /** Its keys between ctx and id when each is a column and it has no predicate, else null (an expression). */
  plain: ReadonlyArray<{ column: string, descending: boolean }> | null
  /** Its CREATE statement on a relation (default the table). */
  ddl: (on?: string) => string
}

/**
 * Every index the definition asks for: the unique sets, an index `(ctx, field)` per reference
 * (PostgreSQL does not index the referencing side, so deleting a parent would scan) unless a
 * declared index leads with the field and serves that lookup already, and the query indexes.
 */
export function plannedIndexes (spec: Pick<TableSpec, 'table' | 'unique' | 'uniqueWhere' | 'references'> & { indexes?: readonly TableIndex[] }): PlannedIndex[] {
  const t = spec.table
  const out: PlannedIndex[] = uniqueKeys(spec).map(key => ({
    name: key.name,
    kind: 'unique',
    columns: [key.field],
    plain: key.where === null ? [{ column: key.field, descending: false }] : null,
    ddl: (on) => uniqueIndexDdl(t, key, on)
  }))
  const indexes = spec.indexes ?? []
  const leading = new Set(indexes.map(i => (i.keys[0] as IndexKey).path))
  for (const r of spec.references) {
    if (leading.has(r.field)) continue
    const name = constraintNames.index(t, r.field)
    out.push({
      name,
      kind: 'reference',
      columns: [r.field],
      plain: [{ column: r.field, descending: false }],
      ddl: (on = quoteIdent(t)) => `CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${on} (ctx, ${quoteIdent(r.field)})`
    })
  }
  for (const index of indexes) {
    out.push({
      name: index.name,
      kind: 'query',
      columns: [...new Set(index.keys.map(k => k.path.split('.')[0] as string))],
      plain: index.keys.some(k => k.path.includes('.')) ? null : index.keys.map(k => ({ column: k.path, descending: k.descending })),
      ddl: (on) => indexDdl(t, index, on)
    })
  }
  return out
}

/** `(ctx, field)` references `table`'s `(ctx, id)`. */
export function foreignKeyDdl (table: string, ref: { field: string, table: string }): string {
  return `CONSTRAINT ${quoteIdent(constraintNames.foreignKey(table, ref.field))} FOREIGN KEY (ctx, ${quoteIdent(ref.field)}) REFERENCES ${quoteIdent(ref.table)} (ctx, id)`
}

/** The CHECK of an enum column: its value among the definition's. */
export function enumCheckDdl (table: string, c: Column & { enumValues: readonly string[] }): string {
  return `CONSTRAINT ${quoteIdent(constraintNames.check(table, c.field))} CHECK (${c.ident} IN (${c.enumValues.map(literal).join(', ')}))`
}

const columnDef = (c: Column): string => `${c.ident} ${c.sqlType}${c.nullable ? '' : ' NOT NULL'}`

/**
 * The DDL of a new resource table: primary key `(ctx, id)` (ctx = execution context), the
 * server's columns, typed columns of the fields, UNIQUE `(ctx, field)`, FOREIGN KEY
 * `(ctx, field)` to the referenced table, a CHECK per enum, text in the "C" collation, and
 * the indexes (`plannedIndexes`). Every statement is idempotent. A table that exists already
 * is compared with its definition instead, and changed only where that is safe
 * (store/table/evolve.ts).
 */
export function tableDdl (spec: Pick<TableSpec, 'table' | 'columns' | 'unique' | 'uniqueWhere' | 'references'> & { indexes?: readonly TableIndex[], softDelete?: boolean, fillfactor?: number }, fillfactor: number | null = spec.fillfactor ?? null): string {
  const t = spec.table
  const T = quoteIdent(t)
  const own = spec.softDelete === true ? [...spec.columns, ...DELETED_COLUMNS] : spec.columns
  const defs: string[] = ['ctx text NOT NULL', ...SERVER_COLUMNS.map(columnDef), ...own.map(columnDef)]
  defs.push(`CONSTRAINT ${quoteIdent(constraintNames.primaryKey(t))} PRIMARY KEY (ctx, id)`)
  for (const key of uniqueKeys(spec)) {
    if (key.where === null) defs.push(`CONSTRAINT ${quoteIdent(key.name)} UNIQUE (ctx, ${quoteIdent(key.field)})`)
  }
  for (const r of spec.references) defs.push(foreignKeyDdl(t, r))
  for (const c of spec.columns) {
    if (c.enumValues !== undefined) defs.push(enumCheckDdl(t, { ...c, enumValues: c.enumValues }))
  }
  const statements = [`CREATE TABLE IF NOT EXISTS ${T} (\n  ${defs.join(',\n  ')}\n)${fillfactor === null ? '' : ` WITH (${fillfactorDdl(fillfactor)})`}`]
  // Before any index is made, so that none is built twice.
  statements.push(collationDdl(t))
  for (const index of plannedIndexes(spec)) {
    // A unique set without a predicate is the table's UNIQUE constraint, made above.
    if (index.kind === 'unique' && spec.uniqueWhere === undefined) continue
    statements.push(index.ddl())
  }
  return statements.join(';\n')
}

/** The storage parameter of a table's fillfactor. */
export function fillfactorDdl (fillfactor: number): string {
  return `fillfactor = ${Math.trunc(fillfactor)}`
}

/** The table's creation as a migration, its id a digest of the DDL (the resource plugin compares tables instead: store/evolve.ts). */
export function tableMigration (spec: Parameters<typeof tableDdl>[0]): Migration {
  const sql = tableDdl(spec)
  const digest = createHash('sha256').update(sql).digest('hex').slice(0, 12)
  return { id: `resource:${spec.table}:${digest}`, sql }
}
