import type { CollectionQuery, FieldMap, Page } from '../model/query.js'
import { foldCollation, needsFolding } from './case-folding.js'
import type { FieldColumns, PrefixedColumn } from './field-columns.js'
import { finishPage } from './finish-page.js'
import { compileSql, selectStatement, TOTAL_COUNT, type StatementParts } from './sql-query.js'

type Row = Record<string, unknown>

/** What runs the statement: the store, a transaction, or a bare PGlite. */
export interface RowSource {
  query: <R extends object>(sql: string, params: unknown[]) => Promise<{ rows: R[] }>
}

export interface ReadPageOptions<T> {
  /** The SQL of each path the query names; default `defaultColumns(fields)` (alias `t`). */
  columns?: FieldColumns
  /** Paths whose text is a prefix and a stored column (compileSql's `prefixed`). */
  prefixed?: ReadonlyMap<string, PrefixedColumn>
  /**
   * A row as the item of the page (default the row itself): an API-shaped object, whose
   * ordering paths the cursors keep (`sortKeyOf`).
   */
  decode?: (row: Row) => T
}

/** The row a counting statement answers for a page past the end: nulls and the count. */
function isCountOnly (row: Row): boolean {
  for (const key in row) if (row[key] !== null) return false
  return true
}

/**
 * A finished page of the rows `query` selects from `source` (trusted SQL, with its own leading
 * parameters: partition, parent, soft delete): keyset or offset paging, the neighbours' keysets,
 * and the total count when the paging asks for it, in one statement (`selectStatement`).
 * Every collection the store serves is read through here. The first case-insensitive filter
 * read through `db` also asks the collation to fold case under (store/case-folding.ts), once.
 */
export async function readPage<T = Row> (db: RowSource, query: CollectionQuery, fields: FieldMap, source: StatementParts, options: ReadPageOptions<T> = {}): Promise<Page<T>> {
  const fold = needsFolding(query.filter) ? await foldCollation(db) : undefined
  const sql = compileSql(query, fields, { paramStart: (source.params?.length ?? 0) + 1, columns: options.columns, prefixed: options.prefixed, foldCollation: fold })
  const statement = selectStatement(sql, source)
  const { rows } = await db.query<Row>(statement.text, statement.params)
  const decode = options.decode ?? ((row: Row) => row as T)
  if (!sql.count) return finishPage(rows.map(decode), query.paging, query.ordering)
  // The count's row is always there, even for a page past the end.
  const totalCount = (rows[0] as Row)[TOTAL_COUNT] as number
  for (const row of rows) delete row[TOTAL_COUNT]
  const items = rows.length === 1 && isCountOnly(rows[0] as Row) ? [] : rows.map(decode)
  return finishPage(items, query.paging, query.ordering, totalCount)
}
