import type { FieldMap, Filter } from '../../model/query.js'
import { junction } from '../../model/query.js'
import { QueryError } from './errors.js'
import { DEFAULT_FIQL_LIMITS, type FiqlLimits } from './fiql.js'
import { parseFilter } from './fiql-check.js'
import { buildSimpleFilter, type SimpleParams, type SimpleValue } from './simple-filter.js'
import { buildHybridFilter, hybridScope, type HybridParams } from './hybrid-filter.js'

/*
 * One filter from all filter parameters of a collection request (conventions:
 * "Collection endpoints"): simple, advanced (`filter`, at most once) and hybrid
 * (`<attribute>Filter`, never together with `filter`), all joined with AND.
 */

export interface FilterParams {
  simple?: SimpleParams
  hybrid?: HybridParams
  filter?: string | readonly string[]
}

/** The parameters of a collection request that are not filters (conventions: "Collection endpoints"). */
export const PAGING_PARAMETERS: readonly string[] = ['limit', 'offset', 'cursor', 'ordering', 'totalCount']

function isSimpleValue (value: unknown): value is SimpleValue {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

function isText (value: unknown): value is string | string[] {
  return typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))
}

function badValue (parameter: string, what: string): never {
  throw new QueryError('value', parameter, `${parameter} must be ${what}.`)
}

/**
 * Sorts the parameters of a query string (or of a POST search body) into simple,
 * hybrid and advanced filters; `reserved` names are skipped (default: paging and
 * ordering). Anything else is an error naming the parameter.
 */
export function splitFilterParams (params: Readonly<Record<string, unknown>>, fields: FieldMap, reserved: readonly string[] = PAGING_PARAMETERS): FilterParams {
  const simple: Record<string, SimpleValue | SimpleValue[]> = {}
  const hybrid: Record<string, string | string[]> = {}
  const out: FilterParams = { simple, hybrid }
  for (const name of Object.keys(params)) {
    const value = params[name]
    if (value === undefined || reserved.includes(name)) continue
    if (name === 'filter') {
      if (!isText(value)) badValue(name, 'a FIQL expression')
      out.filter = value
    } else if (fields.get(name)?.filterable === true) {
      if (!isSimpleValue(value) && !(Array.isArray(value) && value.every(isSimpleValue))) badValue(name, 'a value or a list of values')
      simple[name] = value
    } else if (hybridScope(name, fields) !== undefined) {
      if (!isText(value)) badValue(name, 'a FIQL expression')
      hybrid[name] = value
    } else {
      throw new QueryError('field', name, `${name} is not a parameter of this collection: neither an attribute that can be filtered, nor <attribute>Filter, filter, paging or ordering.`, undefined, name)
    }
  }
  return out
}

/** The filter of a request, or null when nothing filters. */
export function buildFilter (params: FilterParams, fields: FieldMap, limits: Readonly<FiqlLimits> = DEFAULT_FIQL_LIMITS): Filter | null {
  const advanced = typeof params.filter === 'string' ? [params.filter] : params.filter ?? []
  if (advanced.length > 1) {
    // The values sent, as an unknown parameter's are shown.
    throw new QueryError('combination', 'filter', 'The filter parameter may appear once; join expressions with ";" (and) or "," (or).', undefined, advanced.join(','))
  }
  const hybrid = params.hybrid ?? {}
  const hybridName = Object.keys(hybrid).find((name) => hybrid[name] !== undefined)
  if (advanced.length === 1 && hybridName !== undefined) {
    throw new QueryError('combination', 'filter', `filter cannot be used together with the hybrid filter ${hybridName}; use one or the other.`, undefined, advanced[0])
  }
  const parts: Array<Filter | null> = [
    buildSimpleFilter(params.simple ?? {}, fields),
    advanced.length === 1 ? parseFilter(advanced[0] as string, fields, { limits }) : null,
    buildHybridFilter(hybrid, fields, limits)
  ]
  return junction('and', parts.filter((part): part is Filter => part !== null))
}
