import type { TSchema } from '@sinclair/typebox'
import { quoteIdent } from '../quote.js'

/**
 * How a field of an entity is stored and read back. Kinds follow the convention's
 * serialization rules; the field types of the query model share these names.
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
  /** The definition's default: a write that leaves the field out stores it, and so do the rows a new column is added to. */
  default?: unknown
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

function column (field: string, kind: FieldKind, nullable: boolean): Column {
  return { field, ident: quoteIdent(field), kind, sqlType: SQL_TYPES[kind], nullable }
}

/**
 * The columns the server sets on every resource row, besides `ctx` (the execution context):
 * the one list the DDL, the reads and the writes of a resource table are built from.
 */
export const SERVER_COLUMNS: readonly Column[] = [
  column('id', 'string', false),
  column('etag', 'string', false),
  column('createdDateTime', 'date-time', false),
  column('createdBy', 'string', true),
  column('modifiedDateTime', 'date-time', false),
  column('modifiedBy', 'string', true)
]

/** The columns of a soft-deletable resource (`TableSpec.softDelete`): null until the entity is deleted. */
export const DELETED_COLUMNS: readonly Column[] = [
  column('deletedDateTime', 'date-time', true),
  column('deletedBy', 'string', true)
]

/** The names of `SERVER_COLUMNS`. */
export const SERVER_FIELDS: readonly string[] = SERVER_COLUMNS.map(c => c.field)

/** The names of `DELETED_COLUMNS`. */
export const DELETED_FIELDS: readonly string[] = DELETED_COLUMNS.map(c => c.field)

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

/** The storage kind of a (non-null) schema; throws for a shape a resource table cannot store. */
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
  const c = column(field, kindOf(field, base), nullable)
  if (c.kind === 'enum') c.enumValues = base.enum as string[]
  // The filler of a write reads the default of the field's own schema, not of its Nullable branch.
  const fallback = (schema as Json).default
  if (fallback !== undefined) c.default = fallback
  return c
}

/**
 * Turns a row as the drivers read it into API values, in place: a 64-bit integer becomes a
 * string of its digits. Date-times, dates, decimals and text already come as the API writes
 * them (store/parsers.ts). Done here rather than in the SELECT list: PostgreSQL evaluates a
 * select list for every row a sort reads, not only for the rows a page returns.
 */
export function rowDecoder (columns: readonly Column[]): (row: Json) => Json {
  const int64s = columns.filter(c => c.kind === 'int64').map(c => c.field)
  return (row) => {
    for (const f of int64s) {
      const v = row[f]
      if (v !== null && v !== undefined) row[f] = String(v)
    }
    return row
  }
}
