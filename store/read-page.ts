import type { CollectionQuery, FieldMap, Page } from '../model/query.js'
import { foldCollation, needsFolding } from './case-folding.js'
import type { FieldColumns, PrefixedColumn } from './field-columns.js'
import { finishPage } from './finish-page.js'
import { compileSql, PARENT_EXISTS, selectStatement, TOTAL_COUNT, type StatementParts } from './sql-query.js'

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
  return (await read(db, query, fields, source, options)).page
}

/**
 * `readPage` for a child collection, whose parent `parentExists` says exists (SQL on the
 * source's parameters, e.g. `EXISTS (SELECT 1 FROM authors WHERE ctx = $1 AND id = $2)`): null
 * when the page is empty and the parent is not there, in the same one statement. Its rows show
 * the parent exists, so only an empty page makes the database check.
 */
export async function readChildPage<T = Row> (db: RowSource, query: CollectionQuery, fields: FieldMap, source: StatementParts, parentExists: string, options: ReadPageOptions<T> = {}): Promise<Page<T> | null> {
  const { page, parent } = await read(db, query, fields, { ...source, parentExists }, options)
  return parent === false ? null : page
}

async function read<T> (db: RowSource, query: CollectionQuery, fields: FieldMap, source: StatementParts, options: ReadPageOptions<T>): Promise<{ page: Page<T>, parent: boolean | null }> {
  const fold = needsFolding(query.filter) ? await foldCollation(db) : undefined
  const sql = compileSql(query, fields, { paramStart: (source.params?.length ?? 0) + 1, columns: options.columns, prefixed: options.prefixed, foldCollation: fold })
  const statement = selectStatement(sql, source)
  const { rows } = await db.query<Row>(statement.text, statement.params)
  const decode = options.decode ?? ((row: Row) => row as T)
  let parent: boolean | null = null
  if (source.parentExists !== undefined) {
    // True or false on the one row of an empty page; null on every row of a page with rows.
    parent = (rows[0]?.[PARENT_EXISTS] ?? null) as boolean | null
    for (const row of rows) delete row[PARENT_EXISTS]
  }
  if (!sql.count) {
    const items = parent === null ? rows.map(decode) : []
    return { page: finishPage(items, query.paging, query.ordering), parent }
  }
  // The count's row is always there, even for a page past the end.
  const totalCount = (rows[0] as Row)[TOTAL_COUNT] as number
  for (const row of rows) delete row[TOTAL_COUNT]
  const items = rows.length === 1 && isCountOnly(rows[0] as Row) ? [] : rows.map(decode)
  return { page: finishPage(items, query.paging, query.ordering, totalCount), parent }
}
