import type { CollectionQuery, Comparison, FieldDescriptor, FieldMap, FieldType, Filter, Keyset, Operand, OrderingTerm } from '../model/query.js'
import { isWildcard } from '../model/query.js'
import type { FoldCollation } from './case-folding.js'
import { defaultColumns, type FieldColumns, type PrefixedColumn } from './field-columns.js'

/*
 * Compiles a collection query to PostgreSQL (PGlite or a server). Every value is a
 * bound parameter cast to the field's type; only the trusted column SQL of each path
 * (store/field-columns.ts) and fixed keywords are written into the text.
 *
 * Semantics kept identical to store/memory-query.ts:
 * - text compares and sorts with COLLATE "C" (code-point order, the same on every
 *   server locale); the case-insensitive operators are ILIKE under the store's fold
 *   collation (store/case-folding.ts): Unicode simple lower case of each code point, or
 *   ASCII letters only under "C", on a database without a UTF-8 collation for it;
 * - every operator but `isnull` excludes nulls (conventions: "Advanced filtering" 3):
 *   `ne`, `out` and `notlike` say `IS NOT NULL` explicitly, as a negation would let
 *   null rows through;
 * - in ordering, null is greater than every value: last ascending, first descending,
 *   PostgreSQL's default, which the keyset condition follows.
 */

const CASTS: Record<FieldType, string> = {
  string: 'text',
  int32: 'integer',
  int64: 'bigint',
  decimal: 'numeric',
  date: 'date',
  'date-time': 'timestamptz',
  boolean: 'boolean',
  enum: 'text',
  'string-array': 'text'
}

// E'\\' is one backslash whatever standard_conforming_strings says.
const ESCAPE = "ESCAPE E'\\\\'"

const RANGE_OPS = { lt: '<', le: '<=', gt: '>', ge: '>=' } as const

export interface SqlQuery {
  /** Condition of the filter and the keyset; `TRUE` when there is none. */
  where: string
  /** The ORDER BY list, without the keywords. */
  orderBy: string
  /** `LIMIT n` or `LIMIT n OFFSET m`, asking one row more than the page to learn whether another follows. */
  limit: string
  /** Values of `$paramStart` … in order. */
  params: unknown[]
  paramStart: number
  /** The rows come in reverse order (a previous page); finishPage restores it. */
  reversed: boolean
  /** The page comes with the total count of the filter (offset paging with `totalCount`): `selectStatement` counts. */
  count: boolean
}

export interface SqlCompileOptions {
  /** Number of the first parameter, after the caller's own (default 1). */
  paramStart?: number
  /** The SQL of each path the query names; default `defaultColumns(fields)` (alias `t`). */
  columns?: FieldColumns
  /** The collation the case-insensitive operators fold case under (`foldCollation`); default "C", ASCII letters only. */
  foldCollation?: FoldCollation
  /** Paths whose text is a prefix and a stored column (a `ref`): equality and `in` compare the column. */
  prefixed?: ReadonlyMap<string, PrefixedColumn>
}

/** LIKE pattern text: `%`, `_` and `\` escaped, one `%` between segments. */
export function likePattern (segments: readonly string[]): string {
  let out = ''
  for (let s = 0; s < segments.length; s++) {
    if (s > 0) out += '%'
    const segment = segments[s] as string
    for (let i = 0; i < segment.length; i++) {
      const ch = segment[i] as string
      out += ch === '%' || ch === '_' || ch === '\\' ? '\\' + ch : ch
    }
  }
  return out
}

class Compiler {
  readonly params: unknown[] = []
  private readonly fields: FieldMap
  private readonly columns: FieldColumns
  private readonly prefixed: ReadonlyMap<string, PrefixedColumn>
  private readonly start: number
  private readonly fold: string

  constructor (fields: FieldMap, columns: FieldColumns, prefixed: ReadonlyMap<string, PrefixedColumn>, start: number, fold: FoldCollation) {
    this.fields = fields
    this.columns = columns
    this.prefixed = prefixed
    this.start = start
    this.fold = `"${fold}"`
  }

  bind (value: unknown): string {
    this.params.push(value)
    return `$${this.start + this.params.length - 1}`
  }

  field (path: string): FieldDescriptor {
    const field = this.fields.get(path)
    if (field === undefined) throw new TypeError(`sql-query: the query names ${path}, which is not in the field map`)
    return field
  }

  /** The trusted SQL of a field. */
  column (field: FieldDescriptor): string {
    const sql = this.columns.get(field.path)
    if (sql === undefined) throw new TypeError(`sql-query: the query names ${field.path}, which has no column`)
    return sql
  }

  /** The expression a field is sorted and range-compared by: text under COLLATE "C". */
  sortExpression (field: FieldDescriptor): string {
    const sql = this.column(field)
    return field.type === 'string' || field.type === 'enum' ? `${sql} COLLATE "C"` : sql
  }

  filter (node: Filter): string {
    if (node.kind !== 'cmp') return `(${node.children.map((child) => this.filter(child)).join(node.kind === 'and' ? ' AND ' : ' OR ')})`
    return this.comparison(node)
  }

  private comparison (node: Comparison): string {
    const field = this.field(node.field)
    const col = this.column(field)
    const text = this.sortExpression(field)
    const cast = CASTS[field.type]
    const array = field.type === 'string-array'
    const value = node.values[0] as Operand
    switch (node.op) {
      case 'isnull':
        return `${col} IS ${value === true ? '' : 'NOT '}NULL`
      case 'eq':
      case 'ne': {
        const negate = node.op === 'ne'
        if (isWildcard(value)) {
          return this.notNull(negate, col, `${text} ${negate ? 'NOT ' : ''}LIKE ${this.bind(likePattern(value.wildcard))} ${ESCAPE}`)
        }
        if (array) return this.notNull(negate, col, `${negate ? 'NOT ' : ''}(${col} @> ARRAY[${this.bind(value)}::text])`)
        const prefixed = negate ? undefined : this.prefixed.get(field.path)
        if (prefixed !== undefined) return this.stripped(prefixed, [value as string])
        // Equality needs no COLLATE (deterministic collations compare bytes); an index serves it when
        // it has the expression's own collation (resource tables keep text columns in "C", columns.ts).
        return this.notNull(negate, col, `${col} ${negate ? '<>' : '='} ${this.bind(value)}::${cast}`)
      }
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge':
        return `${text} ${RANGE_OPS[node.op]} ${this.bind(value)}::${cast}`
      case 'in':
      case 'out': {
        const negate = node.op === 'out'
        const prefixed = negate ? undefined : this.prefixed.get(field.path)
        if (prefixed !== undefined) return this.stripped(prefixed, node.values as string[])
        const list = `${this.bind(node.values)}::${cast}[]`
        if (array) return this.notNull(negate, col, `${negate ? 'NOT ' : ''}(${col} && ${list})`)
        return this.notNull(negate, col, negate ? `${col} <> ALL(${list})` : `${col} = ANY(${list})`)
      }
      default: {
        const negate = node.op === 'notlike'
        const pattern = likePattern(textPattern(node.op, value))
        // ILIKE lower-cases both sides under the collation of its text; LIKE compares bytes.
        const test = node.ci ? `(${col} COLLATE ${this.fold}) ${negate ? 'NOT ' : ''}ILIKE` : `${text} ${negate ? 'NOT ' : ''}LIKE`
        return this.notNull(negate, col, `${test} ${this.bind(pattern)} ${ESCAPE}`)
      }
    }
  }

  /**
   * A prefixed field equal to one of `values`: its column equal to one of them without the
   * prefix, which its index serves; a value without the prefix matches nothing.
   */
  private stripped (prefixed: PrefixedColumn, values: readonly string[]): string {
    const ids = values.filter((v) => v.startsWith(prefixed.prefix)).map((v) => v.slice(prefixed.prefix.length))
    if (ids.length === 0) return 'FALSE'
    return ids.length === 1 ? `${prefixed.column} = ${this.bind(ids[0])}::text` : `${prefixed.column} = ANY(${this.bind(ids)}::text[])`
  }

  /** A negated test also excludes nulls, explicitly (conventions: "Advanced filtering" 3). */
  private notNull (negate: boolean, col: string, test: string): string {
    return negate ? `(${col} IS NOT NULL AND ${test})` : test
  }

  /**
   * Rows strictly after the boundary in the given ordering. In general, nested OR/AND chains
   * (any mix of directions and nulls, where a row comparison cannot):
   * after(1) OR (equal(1) AND (after(2) OR (equal(2) AND …))).
   * PostgreSQL cannot bound an index scan by an OR, so:
   * - when every term goes the same way on a field that cannot be null, the condition is
   *   the equivalent row comparison `(e1, e2, …) > (v1, v2, …)`, which an index on those
   *   expressions in that order starts exactly at;
   * - otherwise the chain is preceded by the redundant `e1 >= v1` (`<=` descending) of the
   *   first term when it is a plain comparison: the index scan starts among the rows tied
   *   with the boundary on that term instead of at the first row of the collection.
   * A field that cannot be null gets no `OR … IS NULL` branch, which would defeat the index
   * the same way.
   */
  keyset (ordering: readonly OrderingTerm[], keyset: Keyset): string {
    if (keyset.values.length !== ordering.length) {
      throw new TypeError(`sql-query: the cursor has ${keyset.values.length} values for an ordering of ${ordering.length}`)
    }
    const direction = (ordering[0] as OrderingTerm).direction
    if (ordering.length > 1 && ordering.every((term, i) => term.direction === direction && !this.field(term.field).nullable && keyset.values[i] !== null)) {
      const fields = ordering.map((term) => this.field(term.field))
      const values = fields.map((field, i) => `${this.bind(keyset.values[i])}::${CASTS[field.type]}`)
      return `(${fields.map((field) => this.sortExpression(field)).join(', ')}) ${direction === 'asc' ? '>' : '<'} (${values.join(', ')})`
    }
    let condition = ''
    let bound: string | null = null
    for (let i = ordering.length - 1; i >= 0; i--) {
      const term = ordering[i] as OrderingTerm
      const field = this.field(term.field)
      const value = keyset.values[i]
      const col = this.column(field)
      const expr = this.sortExpression(field)
      let after: string | null
      let equal: string
      bound = null
      if (value === null) {
        // Null is the greatest value: nothing follows it ascending; every value does descending.
        equal = `${col} IS NULL`
        after = term.direction === 'asc' ? null : `${col} IS NOT NULL`
      } else {
        const param = `${this.bind(value)}::${CASTS[field.type]}`
        equal = `${expr} = ${param}`
        if (term.direction === 'desc') {
          after = `${expr} < ${param}`
          bound = `${expr} <= ${param}`
        } else if (field.nullable) {
          after = `(${expr} > ${param} OR ${col} IS NULL)`
        } else {
          after = `${expr} > ${param}`
          bound = `${expr} >= ${param}`
        }
      }
      if (i === ordering.length - 1) condition = after ?? 'FALSE'
      else condition = after === null ? `(${equal} AND ${condition})` : `(${after} OR (${equal} AND ${condition}))`
    }
    // `bound` is the first term's by now; alone, that term's condition is already a plain comparison.
    return bound === null || ordering.length === 1 ? condition : `${bound} AND ${condition}`
  }
}

/** Segments of a text operator's pattern: `contains x` is `*x*`, and so on. */
function textPattern (op: Comparison['op'], value: Operand): readonly string[] {
  if (isWildcard(value)) return value.wildcard
  const text = value as string
  return op === 'contains' ? ['', text, ''] : op === 'startswith' ? [text, ''] : ['', text]
}

function reverse (ordering: readonly OrderingTerm[]): OrderingTerm[] {
  return ordering.map((term) => ({ field: term.field, direction: term.direction === 'asc' ? 'desc' : 'asc' }))
}

function checkCount (name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`sql-query: ${name} must be an integer of at least ${min}, got ${String(value)}`)
}

/** Compiles filter, ordering and paging; see SqlQuery. */
export function compileSql (query: CollectionQuery, fields: FieldMap, options: SqlCompileOptions = {}): SqlQuery {
  const paramStart = options.paramStart ?? 1
  checkCount('paramStart', paramStart, 1)
  const { paging } = query
  checkCount('limit', paging.limit, 1)
  const compiler = new Compiler(fields, options.columns ?? defaultColumns(fields), options.prefixed ?? new Map(), paramStart, options.foldCollation ?? 'C')
  const filterWhere = query.filter === null ? 'TRUE' : compiler.filter(query.filter)
  const cursor = paging.kind === 'cursor' ? paging.cursor : undefined
  // A previous page is the next page of the reversed ordering, read backwards.
  const reversed = cursor?.direction === 'previous'
  const ordering = reversed ? reverse(query.ordering) : query.ordering
  let where = filterWhere
  // A cursor with no boundary reads from the collection's end its direction starts at.
  if (cursor !== undefined && cursor.values.length > 0) {
    const keyset = compiler.keyset(ordering, cursor)
    where = query.filter === null ? keyset : `${filterWhere} AND ${keyset}`
  }
  let limit = `LIMIT ${paging.limit + 1}`
  if (paging.kind === 'offset') {
    checkCount('offset', paging.offset, 0)
    limit += ` OFFSET ${paging.offset}`
  }
  const orderBy = ordering.map((term) => `${compiler.sortExpression(compiler.field(term.field))} ${term.direction === 'asc' ? 'ASC' : 'DESC'}`).join(', ')
  return { where, orderBy, limit, params: compiler.params, paramStart, reversed, count: paging.kind === 'offset' && paging.totalCount }
}

/** The caller's part of a statement: trusted SQL, with its own leading parameters. */
export interface StatementParts {
  /** Select list, e.g. `t.*`. */
  select: string
  /** From clause, e.g. `documents t` (the alias of the column SQL: `t` by default). */
  from: string
  /** Extra condition (partition, parent, soft delete) using `$1 … $(paramStart-1)`. */
  where?: string
  params?: readonly unknown[]
  /**
   * For a child collection: the SQL of its parent's existence (an `EXISTS (…)` on the same
   * params), which the statement answers as column `PARENT_EXISTS` only when the page has no
   * row. Rows reference their parent, so a page with rows shows it exists, and the database
   * never runs the check then (an uncorrelated subquery runs the first time it is needed).
   */
  parentExists?: string
}

export interface Statement {
  text: string
  params: unknown[]
}

function conditions (parts: StatementParts, query: SqlQuery, own: string): string {
  if ((parts.params?.length ?? 0) !== query.paramStart - 1) {
    throw new TypeError(`sql-query: the statement brings ${parts.params?.length ?? 0} params but the query was compiled with paramStart ${query.paramStart}`)
  }
  const list = [parts.where, own].filter((c): c is string => c !== undefined && c !== '' && c !== 'TRUE')
  return list.length === 0 ? '' : ` WHERE ${list.map((c) => `(${c})`).join(' AND ')}`
}

/** The column of the total count in the rows of a counting page statement. */
export const TOTAL_COUNT = '$totalCount'

/** The column of the parent's existence (`StatementParts.parentExists`): null on each row of a page, true or false on the one row of an empty page. */
export const PARENT_EXISTS = '$parentExists'

/**
 * The page statement: rows in fetch order, at most limit + 1 of them. When the query counts
 * (`SqlQuery.count`), the same statement also counts the filter's rows: the one row of the
 * count LEFT JOINs the page, so each row carries it as column `TOTAL_COUNT` and a page past the
 * end is one row of nulls with the count (store/read-page.ts drops it). PostgreSQL can run a
 * join ON TRUE only as a nested loop, outer the preserved side's one row, so the rows keep the
 * page's order. With `parentExists`, the page is LEFT JOINed to one row the same way (to the
 * count's, when it counts), and an empty page's row answers it. Offset paging has no keyset:
 * the page's condition is the filter's, and both read the same params.
 */
export function selectStatement (query: SqlQuery, parts: StatementParts): Statement {
  const where = conditions(parts, query, query.where)
  const page = `SELECT ${parts.select} FROM ${parts.from}${where} ORDER BY ${query.orderBy} ${query.limit}`
  // `p IS NULL`: the row the LEFT JOIN makes when the page has none.
  const parent = parts.parentExists === undefined ? '' : `, CASE WHEN p IS NULL THEN ${parts.parentExists} END AS "${PARENT_EXISTS}"`
  let text = page
  if (query.count) text = `SELECT p.*, c."${TOTAL_COUNT}"${parent} FROM (SELECT count(*)::integer AS "${TOTAL_COUNT}" FROM ${parts.from}${where}) c LEFT JOIN (${page}) p ON TRUE`
  else if (parent !== '') text = `SELECT p.*${parent} FROM (VALUES (1)) AS one LEFT JOIN (${page}) p ON TRUE`
  return { text, params: [...(parts.params ?? []), ...query.params] }
}
