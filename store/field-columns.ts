import type { FieldMap, FieldType } from '../model/query.js'
import { quoteIdent } from './quote.js'

/*
 * Where the paths of a field map are stored: the trusted SQL expression of each, written by
 * the store, never from input. The query model names paths only (model/query.ts); the SQL
 * compiler (store/sql-query.ts) and the index keys (store/table/schema.ts) read them from here.
 */

/**
 * The SQL of each path a query may name: a column (`t."name"`) or a parenthesized expression
 * (`(t."metadata"->'source'->>'system')`) whose SQL type matches the field's type (text,
 * integer, bigint, numeric, date, timestamptz, boolean, text, text[]).
 */
export type FieldColumns = ReadonlyMap<string, string>

function quoteLiteral (text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

const JSON_CASTS: Partial<Record<FieldType, string>> = {
  int32: '::integer',
  int64: '::bigint',
  decimal: '::numeric',
  date: '::date',
  'date-time': '::timestamptz',
  boolean: '::boolean'
}

/**
 * The storage model's SQL for a path: a quoted column for a top-level field
 * (`t."pageCount"`), a jsonb extraction cast to the field's type below it
 * (`((t."metadata"->'source'->>'count')::integer)`).
 */
export function defaultColumn (path: string, type: FieldType, alias = 't'): string {
  const names = path.split('.')
  const column = `${alias}.${quoteIdent(names[0] as string)}`
  if (names.length === 1) return column
  const inner = names.slice(1, -1).map((name) => `->${quoteLiteral(name)}`).join('')
  const last = quoteLiteral(names[names.length - 1] as string)
  if (type === 'string-array') {
    const json = `${column}${inner}->${last}`
    return `(CASE WHEN jsonb_typeof(${json}) = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(${json})) END)`
  }
  const text = `${column}${inner}->>${last}`
  const cast = JSON_CASTS[type]
  return cast === undefined ? `(${text})` : `((${text})${cast})`
}

const defaults = new WeakMap<FieldMap, FieldColumns>()

/** `defaultColumn` of every path of `fields` (alias `t`): built once per field map, as every page of it asks. */
export function defaultColumns (fields: FieldMap): FieldColumns {
  let columns = defaults.get(fields)
  if (columns === undefined) {
    columns = new Map([...fields.values()].map((field) => [field.path, defaultColumn(field.path, field.type)]))
    defaults.set(fields, columns)
  }
  return columns
}

/**
 * A text field derived from a stored column by a fixed prefix, as a URN-like reference is from
 * an id (`ref` = `svc:document::` followed by `id`): the query compares the whole text, but
 * equality and `in` compare the column with the prefix stripped, so the column's index serves
 * them, and a value without the prefix matches nothing.
 */
export interface PrefixedColumn {
  readonly prefix: string
  /** The stored column's SQL (`t."id"`). */
  readonly column: string
}

/** The SQL of a prefixed field's text: `('svc:document::' || t."id")`, null when the column is. */
export function prefixedSql (prefixed: PrefixedColumn): string {
  return `(${quoteLiteral(prefixed.prefix)} || ${prefixed.column})`
}

/** A derived reference of a table's rows: `field` is `prefix` followed by the column `of`. */
export interface DerivedRef {
  readonly field: string
  readonly prefix: string
  readonly of: string
}

interface TableColumns {
  columns: FieldColumns
  prefixed: ReadonlyMap<string, PrefixedColumn>
}

const tables = new WeakMap<FieldMap, WeakMap<readonly DerivedRef[], TableColumns>>()

/**
 * The SQL of every path of `fields` on a table whose derived references are `refs` (alias `t`):
 * `defaultColumn` for a stored path, the prefixed text for a reference. Built once per pair.
 */
export function tableColumns (fields: FieldMap, refs: readonly DerivedRef[]): TableColumns {
  let byRefs = tables.get(fields)
  if (byRefs === undefined) {
    byRefs = new WeakMap()
    tables.set(fields, byRefs)
  }
  let out = byRefs.get(refs)
  if (out === undefined) {
    const prefixed = new Map<string, PrefixedColumn>()
    for (const ref of refs) if (fields.has(ref.field)) prefixed.set(ref.field, { prefix: ref.prefix, column: defaultColumn(ref.of, 'string') })
    const columns = new Map([...fields.values()].map((field) => {
      const derived = prefixed.get(field.path)
      return [field.path, derived === undefined ? defaultColumn(field.path, field.type) : prefixedSql(derived)]
    }))
    out = { columns, prefixed }
    byRefs.set(refs, out)
  }
  return out
}
