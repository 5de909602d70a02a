import type { Filter } from '../model/query.js'

/*
 * The collation the case-insensitive operators (`=containsic=` …) fold case under, chosen once
 * per store from what its database offers. ILIKE lower-cases both sides under the collation it
 * is given: the builtin `pg_c_utf8` (PostgreSQL 17 and later) and a libc C.UTF-8 collation map
 * each code point to its Unicode simple lower case; "C" maps only A–Z, so it is the fallback of
 * a server with neither, or a database that is not UTF8. Ordering and the other text operators
 * keep COLLATE "C" whatever is chosen here.
 */

/** A collation the store folds case under. */
export type FoldCollation = 'pg_c_utf8' | 'C.utf8' | 'C.UTF-8' | 'C'

/** What a fold collation does to letters, as the in-memory evaluator reproduces it. */
export type CaseFolding = 'unicode' | 'ascii'

/** What the database offers, best first; one row, or none for "C". */
export const FOLD_COLLATION_SQL = `SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_database d
  WHERE d.datname = current_database() AND d.encoding = pg_catalog.pg_char_to_encoding('UTF8')
    AND c.collnamespace = 'pg_catalog'::regnamespace AND c.collencoding IN (-1, d.encoding)
    AND ((c.collname = 'pg_c_utf8' AND c.collprovider = 'b') OR (c.collname IN ('C.utf8', 'C.UTF-8') AND c.collprovider = 'c'))
  ORDER BY c.collname = 'pg_c_utf8' DESC, c.collname LIMIT 1`

/** What runs the one statement: the store, or anything else readPage reads from. */
export interface CollationSource {
  query: <R extends object>(sql: string, params: unknown[]) => Promise<{ rows: R[] }>
}

const chosen = new WeakMap<CollationSource, Promise<FoldCollation>>()

/**
 * The collation `db` folds case under: asked of the database the first time, then kept for as
 * long as `db` lives (a store: its life), so one statement per store, not one per request. A
 * question that failed is asked again next time.
 */
export function foldCollation (db: CollationSource): Promise<FoldCollation> {
  let collation = chosen.get(db)
  if (collation === undefined) {
    collation = db.query<{ collname: string }>(FOLD_COLLATION_SQL, []).then(({ rows }) => (rows[0]?.collname ?? 'C') as FoldCollation)
    collation.catch(() => { if (chosen.get(db) === collation) chosen.delete(db) })
    chosen.set(db, collation)
  }
  return collation
}

/** What the collation does to letters. */
export function caseFoldingOf (collation: FoldCollation): CaseFolding {
  return collation === 'C' ? 'ascii' : 'unicode'
}

/**
 * How `db`'s case-insensitive operators fold case, for an in-memory evaluation of `filter` that
 * must agree with it (a stored array served as a collection). The database is asked only when
 * `filter` has such an operator; otherwise the answer does not matter and is `'unicode'`.
 */
export async function caseFolding (db: CollationSource, filter: Filter | null): Promise<CaseFolding> {
  return needsFolding(filter) ? caseFoldingOf(await foldCollation(db)) : 'unicode'
}

/** Whether the filter has a case-insensitive operator. */
export function needsFolding (filter: Filter | null): boolean {
  if (filter === null) return false
  return filter.kind === 'cmp' ? filter.ci : filter.children.some(needsFolding)
}
