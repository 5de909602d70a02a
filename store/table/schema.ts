import { createHash } from 'node:crypto'
import type { FieldDescriptor } from '../../model/query.js'
import { quoteIdent } from '../quote.js'
import type { Migration } from '../types.js'
import { DELETED_COLUMNS, SERVER_COLUMNS, type Column } from './columns.js'

/** One key of a query index: a field path (top-level column or nested JSON path) and its direction. */
export interface IndexKey {
  path: string
  /** The key's SQL, without alias: a quoted column, or a parenthesized expression with its collation. */
  sql: string
  descending: boolean
}

/**
 * The key of an index on a query path, whose SQL is the expression the query compiler orders
 * and compares by (`field.sql`, over the table's own name): a top-level column as it is (text
 * columns have the "C" collation already, `tableDdl`), a nested value as its expression, with
 * COLLATE "C" on text.
 */
export function indexKey (field: FieldDescriptor, descending: boolean): IndexKey {
  const text = field.type === 'string' || field.type === 'enum'
  const sql = field.path.includes('.') ? `${field.sql}${text ? ' COLLATE "C"' : ''}` : quoteIdent(field.path)
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
  /** `field` references `table`'s `(ctx, id)`. */
  references: ReadonlyArray<{ field: string, table: string }>
  /** Query indexes. */
  indexes: readonly TableIndex[]
  /** Fields a page of the collection leaves out (its items are summaries). */
  summaryOmit: readonly string[]
  /**
   * A deletion marks the row (`DELETED_COLUMNS`) instead of removing it; unique fields are
   * unique among the rows not deleted, and pages leave deleted rows out unless asked.
   */
  softDelete: boolean
}

/** A SQL string literal of a trusted value written in a definition (enum values), never of input. */
function literal (value: string): string {
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

/** `CREATE INDEX … (ctx, <keys…>, id)`: the id ends every ordering (conventions: "Sorting"). */
export function indexDdl (table: string, index: TableIndex): string {
  const keys = index.keys.map(k => k.descending ? `${k.sql} DESC` : k.sql)
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${quoteIdent(table)} (ctx, ${keys.join(', ')}, id)`
}

const columnDef = (c: Column): string => `${c.ident} ${c.sqlType}${c.nullable ? '' : ' NOT NULL'}`

/**
 * The DDL of a resource table: primary key `(ctx, id)` (ctx = execution context), the
 * server's columns, typed columns of the fields, UNIQUE `(ctx, field)`, FOREIGN KEY
 * `(ctx, field)` to the referenced table, a CHECK per enum, text in the "C" collation, and
 * the declared query indexes. Every statement is idempotent, so a changed definition that
 * adds fields or indexes re-runs it under a new migration id and only the new columns and
 * indexes appear. An index taken out of the definition is left in place: drop it with a
 * migration of your own.
 */
export function tableDdl (spec: Pick<TableSpec, 'table' | 'columns' | 'unique' | 'references'> & { indexes?: readonly TableIndex[], softDelete?: boolean }): string {
  const t = spec.table
  const T = quoteIdent(t)
  const soft = spec.softDelete === true
  const own = soft ? [...spec.columns, ...DELETED_COLUMNS] : spec.columns
  const defs: string[] = ['ctx text NOT NULL', ...SERVER_COLUMNS.map(columnDef), ...own.map(columnDef)]
  defs.push(`CONSTRAINT ${quoteIdent(constraintNames.primaryKey(t))} PRIMARY KEY (ctx, id)`)
  // Among the rows not deleted only, for a soft-deletable table: a partial unique index below.
  if (!soft) for (const f of spec.unique) defs.push(`CONSTRAINT ${quoteIdent(constraintNames.unique(t, f))} UNIQUE (ctx, ${quoteIdent(f)})`)
  for (const r of spec.references) {
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.foreignKey(t, r.field))} FOREIGN KEY (ctx, ${quoteIdent(r.field)}) REFERENCES ${quoteIdent(r.table)} (ctx, id)`)
  }
  for (const c of spec.columns) {
    if (c.enumValues === undefined) continue
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.check(t, c.field))} CHECK (${c.ident} IN (${c.enumValues.map(literal).join(', ')}))`)
  }
  const statements = [`CREATE TABLE IF NOT EXISTS ${T} (\n  ${defs.join(',\n  ')}\n)`]
  // Fields added to a definition later arrive as nullable columns on existing tables.
  for (const c of own) statements.push(`ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS ${c.ident} ${c.sqlType}`)
  // Before any index is made, so that none is built twice.
  statements.push(collationDdl(t))
  for (const f of soft ? spec.unique : []) {
    const name = constraintNames.unique(t, f)
    // A table made before it was soft-deletable has the constraint: the partial index replaces it.
    statements.push(`ALTER TABLE ${T} DROP CONSTRAINT IF EXISTS ${quoteIdent(name)}`)
    statements.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${T} (ctx, ${quoteIdent(f)}) WHERE "deletedDateTime" IS NULL`)
  }
  // The referencing side of a foreign key is not indexed by PostgreSQL: deleting a parent would
  // scan. A declared index leading with the field serves that lookup already.
  const leading = new Set((spec.indexes ?? []).map(i => (i.keys[0] as IndexKey).path))
  for (const r of spec.references) {
    if (leading.has(r.field)) continue
    statements.push(`CREATE INDEX IF NOT EXISTS ${quoteIdent(constraintNames.index(t, r.field))} ON ${T} (ctx, ${quoteIdent(r.field)})`)
  }
  for (const index of spec.indexes ?? []) statements.push(indexDdl(t, index))
  return statements.join(';\n')
}

/** One migration per table shape: its id changes, and the idempotent DDL runs again, when the shape does. */
export function tableMigration (spec: Parameters<typeof tableDdl>[0]): Migration {
  const sql = tableDdl(spec)
  const digest = createHash('sha256').update(sql).digest('hex').slice(0, 12)
  return { id: `resource:${spec.table}:${digest}`, sql }
}
