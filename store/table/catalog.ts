import { quoteIdent } from '../quote.js'
import type { Queryable } from '../types.js'
import { DELETED_COLUMNS, SERVER_COLUMNS, type Column } from './columns.js'
import { constraintNames, plannedIndexes, type TableSpec } from './schema.js'

/*
 * A resource table as the database has it, read from pg_catalog, and the definition's table
 * rendered by the database itself, so that the two compare as equals: PostgreSQL writes types
 * (`timestamp(3) with time zone`), index keys (`((metadata -> 'source') ->> 'system') COLLATE
 * "C"`) and predicates in its own canonical form, which no hand-written normalisation of ours
 * would match in every case.
 */

export interface LiveColumn {
  name: string
  /** `format_type`: e.g. `text`, `timestamp(3) with time zone`, `text[]`. */
  type: string
  notNull: boolean
  /** A text column outside the "C" collation (a table made before the collation step). */
  notC: boolean
}

export interface LiveIndex {
  name: string
  /** The index without its name and table: `USING btree (ctx, name)`, `UNIQUE … WHERE (…)`. */
  shape: string
  unique: boolean
  primary: boolean
  /** The index of a UNIQUE or PRIMARY KEY constraint (dropped with the constraint, not alone). */
  constraint: boolean
  /** Its predicate, for a partial index. */
  partial: boolean
}

export interface LiveConstraint {
  name: string
  /** `f` a foreign key, `c` a check. */
  type: 'f' | 'c'
  /** `pg_get_constraintdef`. */
  def: string
  columns: string[]
  /** The referenced table of a foreign key. */
  refTable: string | null
  refColumns: string[]
}

export interface LiveTable {
  name: string
  columns: LiveColumn[]
  indexes: LiveIndex[]
  constraints: LiveConstraint[]
  /** Its `fillfactor` storage parameter; null when it has none (PostgreSQL's default, 100). */
  fillfactor?: number | null
}

/** What a CREATE INDEX looks like without its name and relation, as pg_get_indexdef writes it. */
export function indexShape (def: string): string {
  const unique = def.startsWith('CREATE UNIQUE INDEX ')
  return `${unique ? 'UNIQUE ' : ''}${def.slice(def.indexOf(' USING ') + 1)}`
}

/** The table named `table` where the session's search_path finds it, or null when there is none. */
export async function readTable (db: Queryable, table: string): Promise<LiveTable | null> {
  const rel = quoteIdent(table)
  const { rows: found } = await db.query<{ there: boolean, fillfactor: string | null }>(`SELECT to_regclass($1) IS NOT NULL AS there,
      (SELECT substring(o FROM '^fillfactor=(\\d+)$') FROM pg_class, unnest(reloptions) AS o WHERE oid = to_regclass($1) AND o LIKE 'fillfactor=%') AS fillfactor`, [rel])
  if (found[0]?.there !== true) return null
  const { rows: columns } = await db.query<LiveColumn>(`SELECT attname AS name, format_type(atttypid, atttypmod) AS type, attnotnull AS "notNull",
      atttypid = 'text'::regtype AND attcollation <> '"C"'::regcollation AS "notC"
    FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, [rel])
  const { rows: indexes } = await db.query<LiveIndex & { def: string }>(`SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
      i.indisunique AS unique, i.indisprimary AS primary, i.indpred IS NOT NULL AS partial,
      EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = i.indrelid AND k.conindid = i.indexrelid AND k.contype IN ('p', 'u')) AS constraint
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass ORDER BY c.relname`, [rel])
  const { rows: constraints } = await db.query<LiveConstraint>(`SELECT k.conname AS name, k.contype AS type, pg_get_constraintdef(k.oid) AS def,
      ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS u(n, o) JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o) AS columns,
      (SELECT relname::text FROM pg_class WHERE oid = k.confrelid) AS "refTable",
      ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY AS u(n, o) JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o) AS "refColumns"
    FROM pg_constraint k WHERE k.conrelid = $1::regclass AND k.contype IN ('f', 'c') ORDER BY k.conname`, [rel])
  return {
    name: table,
    columns,
    indexes: indexes.map(({ def, ...i }) => ({ ...i, shape: indexShape(def) })),
    constraints,
    fillfactor: found[0].fillfactor === null ? null : Number(found[0].fillfactor)
  }
}

/** The definition's table as the database writes it: each column's type, each index's shape. */
export interface RenderedTable {
  /** By column: `format_type` of its SQL type. */
  types: Map<string, string>
  /** By index name, the primary key's included: those the table has under that name. */
  shapes: Map<string, string>
}

/** The columns of a resource table, in order: `ctx`, the server's, the definition's, the deletion's when soft-deletable. */
export function tableColumns (spec: Pick<TableSpec, 'columns'> & { softDelete?: boolean }): Column[] {
  const ctx: Column = { field: 'ctx', ident: 'ctx', kind: 'string', sqlType: 'text', nullable: false }
  return [ctx, ...SERVER_COLUMNS, ...spec.columns, ...(spec.softDelete === true ? DELETED_COLUMNS : [])]
}

/** The column types of `columns.ts` as `format_type` writes them. */
const FORMATTED: Readonly<Record<string, string>> = {
  text: 'text',
  'timestamptz(3)': 'timestamp(3) with time zone',
  date: 'date',
  numeric: 'numeric',
  bigint: 'bigint',
  integer: 'integer',
  'double precision': 'double precision',
  boolean: 'boolean',
  'text[]': 'text[]',
  jsonb: 'jsonb'
}

/**
 * How PostgreSQL writes the definition's column types and the indexes `live` has under the
 * planned names. An index whose keys are columns is written here, its names quoted by the
 * database (`quote_ident`); one with an expression or a predicate is made on an empty temporary
 * table of the same name, read back and dropped. Run inside a transaction: while it exists the
 * temporary table hides the real one from unqualified names.
 */
export async function renderTable (tx: Queryable, spec: TableSpec, live: LiveTable): Promise<RenderedTable> {
  const types = new Map(tableColumns(spec).map(c => [c.field, FORMATTED[c.sqlType] ?? c.sqlType]))
  const present = new Set(live.indexes.map(i => i.name))
  const planned = plannedIndexes(spec).filter(i => present.has(i.name))
  const names = [...new Set(planned.flatMap(i => i.plain?.map(k => k.column) ?? []))]
  const { rows } = await tx.query<{ name: string, quoted: string }>('SELECT n AS name, quote_ident(n) AS quoted FROM unnest($1::text[]) AS n', [names])
  const quoted = new Map(rows.map(r => [r.name, r.quoted]))
  const shapes = new Map<string, string>([[constraintNames.primaryKey(spec.table), 'UNIQUE USING btree (ctx, id)']])
  const drawn: typeof planned = []
  for (const index of planned) {
    if (index.plain === null) {
      drawn.push(index)
      continue
    }
    const keys = index.plain.map(k => `${quoted.get(k.column) as string}${k.descending ? ' DESC' : ''}`)
    // A query index ends with the id (conventions: "Sorting"); a reference's lookup does not.
    if (index.kind === 'query') keys.push('id')
    shapes.set(index.name, `${index.kind === 'unique' ? 'UNIQUE ' : ''}USING btree (ctx, ${keys.join(', ')})`)
  }
  if (drawn.length === 0) return { types, shapes }
  const T = quoteIdent(spec.table)
  const on = `pg_temp.${T}`
  const columns = tableColumns(spec).map(c => `${c.ident} ${c.sqlType}${c.sqlType === 'text' ? ' COLLATE "C"' : ''}`)
  await tx.exec([`CREATE TEMPORARY TABLE ${T} (${columns.join(', ')})`, ...drawn.map(i => i.ddl(on))].join(';\n'))
  const { rows: indexes } = await tx.query<{ name: string, def: string }>(`SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass`, [on])
  // A failure above aborts the transaction, which takes the temporary table with it.
  await tx.exec(`DROP TABLE ${on}`)
  for (const r of indexes) shapes.set(r.name, indexShape(r.def))
  return { types, shapes }
}
