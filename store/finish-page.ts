import type { KeyValue, OrderingTerm, Page, Paging } from '../model/query.js'
import { readPath } from '../model/fields.js'

/*
 * What both back ends share after fetching: they fetch `limit + 1` rows (the extra one
 * tells whether another page exists), a previous page in reversed order, and this
 * module turns those rows into the page and the keysets of its neighbours.
 */

/** The sort-key values of an API-shaped item, the boundary a cursor keeps. */
export function sortKeyOf (item: unknown, ordering: readonly OrderingTerm[]): KeyValue[] {
  return ordering.map((term) => keyValue(readPath(item, term.field)))
}

function keyValue (value: unknown): KeyValue {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Date) return value.toISOString()
  return null
}

/**
 * The page of the items a back end fetched for `paging` (at most `limit + 1`, in fetch
 * order: reversed for a previous page), with `totalCount` when the paging asked for it.
 * A cursor's boundary is the edge item of the page it came from. An empty page reached by one
 * (what lay that way was deleted meanwhile) links back to the items on the other side, which are
 * all there is that way (conventions: `previous` is null only when there is no previous page,
 * `next` only on the last): a cursor with no boundary, read from the collection's other end.
 * A page read from an end has no link past that end.
 */
export function finishPage<T> (rows: readonly T[], paging: Paging, ordering: readonly OrderingTerm[], totalCount?: number): Page<T> {
  const more = rows.length > paging.limit
  const items = rows.slice(0, paging.limit)
  if (paging.kind === 'offset') {
    // One literal each way: a page spread into a larger one would get a shape of its own.
    return totalCount === undefined
      ? { items, hasNext: more, hasPrevious: paging.offset > 0, next: null, previous: null }
      : { items, hasNext: more, hasPrevious: paging.offset > 0, next: null, previous: null, totalCount }
  }
  const backwards = paging.cursor?.direction === 'previous'
  if (backwards) items.reverse()
  const bounded = paging.cursor !== undefined && paging.cursor.values.length > 0
  const link = <D extends 'next' | 'previous'>(direction: D, edge: T | undefined): { direction: D, values: KeyValue[] } =>
    ({ direction, values: edge === undefined ? [] : sortKeyOf(edge, ordering) })
  const next = (backwards ? bounded : more) ? link('next', items[items.length - 1]) : null
  const previous = (backwards ? more : bounded) ? link('previous', items[0]) : null
  return { items, hasNext: next !== null, hasPrevious: previous !== null, next, previous }
}
