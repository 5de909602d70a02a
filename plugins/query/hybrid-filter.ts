import type { FieldMap, Filter } from '../../model/query.js'
import { junction } from '../../model/query.js'
import { QueryError } from './errors.js'
import { DEFAULT_FIQL_LIMITS, type FiqlLimits } from './fiql.js'
import { parseFilter, type FilterParseOptions } from './fiql-check.js'

/*
 * Hybrid filters (conventions: "Hybrid filtering"): `<attribute>Filter` parameters
 * whose values are FIQL. Selectors are relative to the attribute (reference service,
 * "Collections"): paths inside an object attribute
 * (`metadataFilter=source.system==erp`), the attribute's own name for a scalar one
 * (`pageCountFilter=pageCount=ge=2`). Different hybrid parameters AND, a repeated one ORs.
 */

/** Hybrid parameters by name (`metadataFilter`), each given once or repeated. */
export type HybridParams = Readonly<Record<string, string | readonly string[] | undefined>>

const SUFFIX = 'Filter'

/**
 * How the selectors of a hybrid parameter map to paths, or undefined when the name is
 * not `<attribute>Filter` of a filterable attribute or object.
 */
export function hybridScope (parameter: string, fields: FieldMap): Pick<FilterParseOptions, 'prefix' | 'selector'> | undefined {
  if (!parameter.endsWith(SUFFIX) || parameter.length === SUFFIX.length) return undefined
  const attribute = parameter.slice(0, -SUFFIX.length)
  if (fields.get(attribute)?.filterable === true) return { selector: attribute }
  for (const field of fields.values()) {
    if (field.filterable && field.path.startsWith(attribute + '.')) return { prefix: attribute }
  }
  return undefined
}

/** The filter of the hybrid parameters, or null when there is none. */
export function buildHybridFilter (params: HybridParams, fields: FieldMap, limits: Readonly<FiqlLimits> = DEFAULT_FIQL_LIMITS): Filter | null {
  const parts: Filter[] = []
  for (const parameter of Object.keys(params)) {
    const raw = params[parameter]
    if (raw === undefined) continue
    const scope = hybridScope(parameter, fields)
    if (scope === undefined) {
      throw new QueryError('field', parameter, `${parameter} is not the hybrid filter of an attribute that can be filtered.`, undefined, parameter)
    }
    const values: readonly string[] = typeof raw === 'string' ? [raw] : raw
    const alternatives = values.map((text) => parseFilter(text, fields, { ...scope, parameter, limits }))
    const part = junction('or', alternatives)
    if (part !== null) parts.push(part)
  }
  return junction('and', parts)
}
