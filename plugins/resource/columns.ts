import { createHash } from 'node:crypto'
import type { TSchema } from '@sinclair/typebox'
import { quoteIdent } from '../../store/quote.js'
import type { Migration } from '../../store/types.js'

/**
 * How a field of the entity is stored and read back. Kinds follow the convention's
 * serialization rules; the matching field types of the query core share these names.
 */
export type FieldKind =
  | 'string' | 'enum' | 'date-time' | 'date' | 'decimal' | 'int64' | 'int32' | 'number'
  | 'boolean' | 'string-array' | 'json'

export interface Column {
  /** The API property name; also the column name, quoted. */
  field: string
  /** `quoteIdent(field)`. */
  ident: string
  kind: FieldKind
  sqlType: string
  nullable: boolean
  /** The allowed values of an enum column (checked by a CHECK constraint). */
  enumValues?: readonly string[]
  /** The SELECT expression giving the API value, uniform on PGlite and pg. */
  select: string
  /** Parameter form of an API value (JSON columns take JSON text). */
  toParam: (value: unknown) => unknown
}

const SQL_TYPES: Record<FieldKind, string> = {
  string: 'text',
  enum: 'text',
  'date-time': 'timestamptz(3)',
  date: 'date',
  decimal: 'numeric',
  int64: 'bigint',
  int32: 'integer',
  number: 'double precision',
  boolean: 'boolean',
  'string-array': 'text[]',
  json: 'jsonb'
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` in UTC, whatever the session's time zone (conventions: Date and time). */
export function dateTimeSelect (ident: string): string {
  return `to_char(${ident} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
}

function selectOf (kind: FieldKind, ident: string): string {
  switch (kind) {
    case 'date-time': return `${dateTimeSelect(ident)} AS ${ident}`
    case 'date': return `to_char(${ident}, 'YYYY-MM-DD') AS ${ident}`
    // Decimals and 64-bit integers are strings in the API: text keeps every digit.
    case 'decimal':
    case 'int64': return `${ident}::text AS ${ident}`
    default: return ident
  }
}

const asIs = (v: unknown): unknown => v
const asJson = (v: unknown): unknown => v === null || v === undefined ? null : JSON.stringify(v)

type Json = Record<string, unknown>

/** Splits `T | null` (Nullable's `type: [T, 'null']` or `anyOf [T, null]`) into T and a flag. */
export function unwrapNullable (schema: TSchema): { base: Json, nullable: boolean } {
  const s = schema as Json
  if (Array.isArray(s.type) && s.type.includes('null')) {
    const types = (s.type as string[]).filter(t => t !== 'null')
    const base: Json = { ...s, type: types.length === 1 ? types[0] : types }
    if (Array.isArray(s.enum)) base.enum = (s.enum as unknown[]).filter(v => v !== null)
    return { base, nullable: true }
  }
  if (Array.isArray(s.anyOf)) {
    const branches = s.anyOf as Json[]
    const rest = branches.filter(b => b.type !== 'null')
    if (rest.length === 1 && branches.length === 2) return { base: rest[0] as Json, nullable: true }
  }
  return { base: s, nullable: false }
}

/** The storage kind of a (non-null) schema; throws for a shape the resource layer cannot store. */
export function kindOf (field: string, base: Json): FieldKind {
  switch (base.type) {
    case 'string':
      if (Array.isArray(base.enum)) return 'enum'
      if (base.format === 'date-time') return 'date-time'
      if (base.format === 'date') return 'date'
      if (base.format === 'decimal') return 'decimal'
      if (base.format === 'int64') return 'int64'
      return 'string'
    case 'integer': return 'int32'
    case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'array': {
      const items = base.items as Json | undefined
      return items !== undefined && items.type === 'string' && !Array.isArray(items.enum) && items.format === undefined ? 'string-array' : 'json'
    }
    case 'object': return 'json'
  }
  throw new TypeError(`defineResource: field ${field} must have one JSON type (string, integer, number, boolean, array or object), optionally Nullable, got ${JSON.stringify(base.type ?? base)}`)
}

/** The column of one entity field. */
export function columnOf (field: string, schema: TSchema): Column {
  const { base, nullable } = unwrapNullable(schema)
  const kind = kindOf(field, base)
  const ident = quoteIdent(field)
  const column: Column = {
    field,
    ident,
    kind,
    sqlType: SQL_TYPES[kind],
    nullable,
    select: selectOf(kind, ident),
    toParam: kind === 'json' ? asJson : asIs
  }
  if (kind === 'enum') column.enumValues = base.enum as string[]
  return column
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

/** One key of a query index: a field path (top-level column or nested JSON path) and its direction. */
export interface IndexKey {
  path: string
  /** The key's SQL, without alias: a quoted column, or a parenthesized expression with its collation. */
  sql: string
  descending: boolean
}

/** An index `(ctx, <keys…>, id)` serving the collection queries that filter or order by its keys. */
export interface TableIndex {
  name: string
  keys: readonly IndexKey[]
}

export interface TableSpec {
  table: string
  columns: readonly Column[]
  unique: readonly string[]
  /** `field` references `table`'s `(ctx, id)`. */
  references: ReadonlyArray<{ field: string, table: string }>
  /** Query indexes (define.ts resolves them from the `indexes` option). Default none. */
  indexes?: readonly TableIndex[]
}

/** The server-managed columns every resource table has, besides `ctx` and `id`. */
export const AUDIT_COLUMNS = `etag text NOT NULL,
  "createdDateTime" timestamptz(3) NOT NULL,
  "createdBy" text,
  "modifiedDateTime" timestamptz(3) NOT NULL,
  "modifiedBy" text`

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

/**
 * The DDL of a resource table: primary key `(ctx, id)` (ctx = execution context), typed
 * columns, UNIQUE `(ctx, field)`, FOREIGN KEY `(ctx, field)` to the referenced table, a
 * CHECK per enum, text in the "C" collation, and the declared query indexes. Every
 * statement is idempotent, so a changed definition that adds fields or indexes re-runs it
 * under a new migration id and only the new columns and indexes appear. An index taken out
 * of the definition is left in place: drop it with a migration of your own.
 */
export function tableDdl (spec: TableSpec): string {
  const t = spec.table
  const T = quoteIdent(t)
  const defs: string[] = ['ctx text NOT NULL', 'id text NOT NULL', AUDIT_COLUMNS]
  for (const c of spec.columns) defs.push(`${c.ident} ${c.sqlType}${c.nullable ? '' : ' NOT NULL'}`)
  defs.push(`CONSTRAINT ${quoteIdent(constraintNames.primaryKey(t))} PRIMARY KEY (ctx, id)`)
  for (const f of spec.unique) defs.push(`CONSTRAINT ${quoteIdent(constraintNames.unique(t, f))} UNIQUE (ctx, ${quoteIdent(f)})`)
  for (const r of spec.references) {
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.foreignKey(t, r.field))} FOREIGN KEY (ctx, ${quoteIdent(r.field)}) REFERENCES ${quoteIdent(r.table)} (ctx, id)`)
  }
  for (const c of spec.columns) {
    if (c.enumValues === undefined) continue
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.check(t, c.field))} CHECK (${c.ident} IN (${c.enumValues.map(literal).join(', ')}))`)
  }
  const statements = [`CREATE TABLE IF NOT EXISTS ${T} (\n  ${defs.join(',\n  ')}\n)`]
  // Fields added to a definition later arrive as nullable columns on existing tables.
  for (const c of spec.columns) statements.push(`ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS ${c.ident} ${c.sqlType}`)
  // Before any index is made, so that none is built twice.
  statements.push(collationDdl(t))
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
export function tableMigration (spec: TableSpec): Migration {
  const sql = tableDdl(spec)
  const digest = createHash('sha256').update(sql).digest('hex').slice(0, 12)
  return { id: `resource:${spec.table}:${digest}`, sql }
}
