import type { FieldMap, OrderingTerm } from '../../model/query.js'
import { QueryError } from './errors.js'

/*
 * Ordering (conventions: "Sorting"): `ordering=name&ordering=-createdDateTime`, in
 * priority order, against the sortable fields. The id always ends the ordering as the
 * last tiebreaker, so the order is total and keyset paging never skips or repeats an
 * item (rule 4: a consistent internal default for paging).
 */

export interface OrderingOptions {
  /** Ordering used when the request gives none (default: the id alone). */
  defaultOrdering?: readonly OrderingTerm[]
  /** The unique, non-null identifier path that ends every ordering (default `id`). */
  idField?: string
  /** The query parameter, for errors (default `ordering`). */
  parameter?: string
}

export type OrderingResolver = (values: string | readonly string[] | undefined) => OrderingTerm[]

/** Checks the options once, at setup, and returns the resolver of `ordering` values. */
export function orderingResolver (fields: FieldMap, options: OrderingOptions = {}): OrderingResolver {
  const idField = options.idField ?? 'id'
  const parameter = options.parameter ?? 'ordering'
  if (!fields.has(idField)) throw new TypeError(`ordering: idField ${JSON.stringify(idField)} is not in the field map`)
  const defaults = options.defaultOrdering ?? []
  for (const term of defaults) {
    if (!fields.has(term.field) || (term.direction !== 'asc' && term.direction !== 'desc') || fields.get(term.field)?.type === 'string-array') {
      throw new TypeError(`ordering: defaultOrdering has ${JSON.stringify(term)}, which is not a sortable field with direction asc or desc`)
    }
  }
  const sortable = [...fields.values()].filter((f) => f.sortable).map((f) => f.path)
  const fallback = withId(defaults, idField)

  return function resolve (values) {
    const list = typeof values === 'string' ? [values] : values ?? []
    if (list.length === 0) return fallback.slice()
    const terms: OrderingTerm[] = []
    const seen = new Set<string>()
    for (const value of list) {
      const desc = value.startsWith('-')
      const path = desc ? value.slice(1) : value
      if (fields.get(path)?.sortable !== true) {
        throw new QueryError('field', parameter,
          `${JSON.stringify(value)} is not an attribute to sort by; use one of ${sortable.join(', ')}, with a leading - to sort descending.`, undefined, value)
      }
      if (seen.has(path)) {
        throw new QueryError('combination', parameter, `${path} appears more than once in ordering; give each attribute once.`, undefined, value)
      }
      seen.add(path)
      terms.push({ field: path, direction: desc ? 'desc' : 'asc' })
    }
    return withId(terms, idField)
  }
}

function withId (terms: readonly OrderingTerm[], idField: string): OrderingTerm[] {
  return terms.some((term) => term.field === idField) ? [...terms] : [...terms, { field: idField, direction: 'asc' }]
}

/** `name,-createdDateTime,id`: the ordering as one string, for fingerprints and logs. */
export function orderingKey (ordering: readonly OrderingTerm[]): string {
  return ordering.map((term) => (term.direction === 'desc' ? '-' : '') + term.field).join(',')
}
