import type { Comparison, FieldDescriptor, FieldMap, Filter, Scalar } from '../../model/query.js'
import { junction } from '../../model/query.js'
import { QueryError } from './errors.js'
import { MAX_PATH_DEPTH, pathDepth } from '../../model/fields.js'
import { describeType, expectation, parseScalar } from './values.js'

/*
 * Simple filters (conventions: "Simple filtering"): `<attribute>=<value>` parameters.
 * 1 different attributes AND; 2 a repeated attribute ORs its values; 3 case-sensitive
 * equality; 4 nested `a.b.c`, three levels at most; 5 one `*` as prefix or suffix, on
 * text attributes only; 6 an empty value matches null or "" (for a non-nullable
 * boolean it does not filter); 7 on an array attribute, containment.
 * A `*` is a wildcard at the start or the end of a value only; anywhere else it is a
 * character (`reviewSchedule=0 9 * * 1` is an exact value). A value starting and ending
 * with `*` would be two wildcards and is refused; the `filter` parameter writes any pattern.
 */

/** A value as it arrives: query strings give text, a POST search body may give JSON scalars. */
export type SimpleValue = string | number | boolean | null

/** Attribute parameters only (the caller has set aside paging, ordering and FIQL ones). */
export type SimpleParams = Readonly<Record<string, SimpleValue | readonly SimpleValue[] | undefined>>

function fail (reason: 'field' | 'value', parameter: string, message: string, value?: string): never {
  throw new QueryError(reason, parameter, message, undefined, value)
}

/** The filterable field a parameter names; throws a QueryError otherwise. */
export function simpleField (name: string, fields: FieldMap): FieldDescriptor {
  if (pathDepth(name) > MAX_PATH_DEPTH) fail('field', name, `The attribute ${name} nests more than ${MAX_PATH_DEPTH} levels.`)
  const field = fields.get(name)
  if (field === undefined || !field.filterable) fail('field', name, `${name} is not an attribute that can be filtered.`, name)
  return field
}

function cmp (field: string, op: 'eq' | 'in' | 'isnull', values: Comparison['values']): Comparison {
  return { kind: 'cmp', field, op, values, ci: false }
}

/** Rule 6: what an empty value matches, or null when it does not filter at all. */
function emptyValue (field: FieldDescriptor): Filter[] | null {
  if (field.type === 'boolean' && !field.nullable) return null
  const text = field.type === 'string' || field.type === 'string-array'
  const out: Filter[] = []
  if (field.nullable || !text) out.push(cmp(field.path, 'isnull', [true]))
  if (text) out.push(cmp(field.path, 'eq', ['']))
  return out
}

/** Rule 5: `*x` or `x*` (a `*` inside `x` is a character). */
function wildcard (field: FieldDescriptor, name: string, text: string): Filter {
  if (field.type !== 'string') {
    fail('value', name, `The wildcard * works only on text attributes; ${name} is ${describeType(field.type)}.`, text)
  }
  const last = text.length - 1
  if (text.length === 1 || (text.startsWith('*') && text.endsWith('*'))) {
    fail('value', name, `The value of ${name} may use * as a wildcard once, at its start or its end, with text beside it; use the filter parameter for other patterns.`, text)
  }
  const pattern = text.startsWith('*') ? ['', text.slice(1)] : [text.slice(0, last), '']
  return { kind: 'cmp', field: field.path, op: 'eq', values: [{ wildcard: pattern }], ci: false }
}

/** The filter of one attribute parameter, or null when it does not filter (rule 6). */
function attributeFilter (field: FieldDescriptor, name: string, raw: SimpleValue | readonly SimpleValue[]): Filter | null {
  const list: readonly SimpleValue[] = Array.isArray(raw) ? raw : [raw as SimpleValue]
  const equal: Scalar[] = []
  const others: Filter[] = []
  let empty = false
  for (const item of list) {
    const text = item === null ? '' : String(item)
    if (text === '') {
      if (empty) continue
      empty = true
      const matches = emptyValue(field)
      if (matches === null) return null
      others.push(...matches)
      continue
    }
    // PostgreSQL text cannot hold U+0000: refused here, or the database would fail the whole query (a 500).
    if (text.includes('\u0000')) fail('value', name, `The value of ${name} has a NUL character (U+0000), which no attribute can hold; remove it.`, text)
    if (text.startsWith('*') || text.endsWith('*')) {
      others.push(wildcard(field, name, text))
      continue
    }
    const value = parseScalar(field, text)
    if (value === undefined) fail('value', name, `The value of ${name} is not ${expectation(field)}.`, text)
    equal.push(value)
  }
  // Rule 2 as one `in`, which the SQL back end runs as `= ANY($n)`.
  if (equal.length === 1) others.unshift(cmp(field.path, 'eq', equal))
  else if (equal.length > 1) others.unshift(cmp(field.path, 'in', equal))
  return junction('or', others)
}

/** The filter of the simple parameters (AND across attributes), or null when none filters. */
export function buildSimpleFilter (params: SimpleParams, fields: FieldMap): Filter | null {
  const parts: Filter[] = []
  for (const name of Object.keys(params)) {
    const raw = params[name]
    if (raw === undefined) continue
    const part = attributeFilter(simpleField(name, fields), name, raw)
    if (part !== null) parts.push(part)
  }
  return junction('and', parts)
}
