/*
 * When may a value be written with the native JSON.stringify instead of the serializer
 * fast-json-stringify compiles from its schema? When both would write the same JSON: every
 * property is declared (the schema's serializer drops undeclared ones), every required one is
 * there (it refuses a value without), and each value already has its schema's JSON type (it
 * coerces the others). A page of such values then costs the native serializer's time and
 * garbage, several times less; any other page keeps the schema's serializer.
 *
 * Only the keywords below are understood; a schema with any other (anyOf, $ref,
 * patternProperties, additionalProperties as a schema, …) never matches, so its values always
 * go through the schema's serializer.
 */

type Json = Record<string, unknown>
/** Whether a value would be written alike by JSON.stringify and by its schema's serializer. */
export type PlainCheck = (value: unknown) => boolean

// Keywords that only validate or annotate: the schema's serializer writes the same output whatever they say.
const INERT = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items',
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'enum',
  'default', 'examples', 'description', 'title', 'readOnly', 'writeOnly', 'deprecated',
  // The suite's own validation keywords (schemas/types.ts).
  'decimalMinimum', 'decimalMaximum', 'decimalDigits'
])

const never: PlainCheck = () => false
// Undefined only as an array item (an undefined property is left out by both): JSON.stringify writes null.
const any: PlainCheck = (v) => v !== undefined

const byType: Record<string, PlainCheck> = {
  string: (v) => typeof v === 'string',
  integer: (v) => Number.isInteger(v),
  // JSON.stringify writes NaN and Infinity as null; the schema's serializer does not.
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null
}

function isPlainObject (v: unknown): v is Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v) as unknown
  return proto === Object.prototype || proto === null
}

function objectCheck (schema: Json, fast: boolean): PlainCheck {
  const props = (schema.properties ?? {}) as Record<string, Json>
  if (typeof props !== 'object' || Array.isArray(props)) return never
  const extra = schema.additionalProperties
  if (extra !== undefined && typeof extra !== 'boolean') return never
  const open = extra === true
  const checks = new Map(Object.entries(props).map(([k, s]) => [k, plainCheck(s, fast)]))
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  const exact: PlainCheck = (v) => {
    if (!isPlainObject(v)) return false
    for (const key of required) if (v[key] === undefined) return false
    for (const key in v) {
      const value = v[key]
      const check = checks.get(key)
      if (check === undefined) {
        // Undeclared: dropped by the schema's serializer unless the object is open.
        if (!open) return false
      } else if (value !== undefined && !check(value)) {
        return false
      }
    }
    return true
  }
  const names = [...checks.keys()]
  // A name Object.prototype has would read through to it: such a schema keeps the loop alone.
  if (!fast || names.some((n) => n in Object.prototype)) return exact
  return straightLine(names, [...checks.values()], new Set(required), exact)
}

/**
 * The same verdict as `exact` for the usual value (every declared property defined, nothing
 * else), by reading each declared property by name and counting the own keys: no loop over
 * keys, no lookup per key. Anything else is left to `exact`.
 */
function straightLine (names: string[], checks: PlainCheck[], required: Set<string>, exact: PlainCheck): PlainCheck {
  // Names as JSON string literals (valid JavaScript), checks by index: no input reaches the code.
  const lines = names.map((name, i) => `x = v[${JSON.stringify(name)}]; if (x !== undefined) { n++; if (!c[${i}](x)) return false }${required.has(name) ? ' else return false' : ''}`)
  // eslint-disable-next-line no-new-func
  const make = new Function('c', 'exact', 'isPlain', `return function (v) {
    if (!isPlain(v)) return false
    let n = 0
    let x
    ${lines.join('\n    ')}
    // Counted by for-in, not Object.keys: no array per value. An enumerable key inherited
    // from a polluted Object.prototype only makes the count larger, so exact() decides.
    let keys = 0
    for (const _ in v) keys++
    return n === keys || exact(v)
  }`) as (c: PlainCheck[], exact: PlainCheck, isPlain: (v: unknown) => boolean) => PlainCheck
  return make(checks, exact, isPlainObject)
}

function arrayCheck (schema: Json, fast: boolean): PlainCheck {
  const items = schema.items
  if (items !== undefined && (typeof items !== 'object' || items === null || Array.isArray(items))) return never
  const check = items === undefined ? any : plainCheck(items as Json, fast)
  return (v) => {
    if (!Array.isArray(v)) return false
    for (let i = 0; i < v.length; i++) if (!check(v[i])) return false
    return true
  }
}

/**
 * The check of `schema`: compiled once, then run on every value written. `fast: false` leaves
 * out the straight-line object checks (the tests compare both).
 */
export function plainCheck (schema: Json, fast = true): PlainCheck {
  if (typeof schema !== 'object' || schema === null) return never
  for (const key of Object.keys(schema)) if (!INERT.has(key)) return never
  const types = schema.type === undefined ? null : Array.isArray(schema.type) ? schema.type as unknown[] : [schema.type]
  // No type: written as JSON.stringify writes it.
  if (types === null) return schema.properties === undefined && schema.items === undefined ? any : never
  const checks: PlainCheck[] = []
  for (const t of types) {
    if (t === 'object') checks.push(objectCheck(schema, fast))
    else if (t === 'array') checks.push(arrayCheck(schema, fast))
    else if (typeof t === 'string' && byType[t] !== undefined) checks.push(byType[t])
    else return never
  }
  return anyOf(checks)
}

/** Whether any of `checks` holds; no closure per call (this runs for every nullable property of every item). */
function anyOf (checks: PlainCheck[]): PlainCheck {
  if (checks.length === 1) return checks[0] as PlainCheck
  const [a, b] = checks as [PlainCheck, PlainCheck]
  if (checks.length === 2) return (v) => a(v) || b(v)
  return (v) => {
    for (let i = 0; i < checks.length; i++) if ((checks[i] as PlainCheck)(v)) return true
    return false
  }
}
