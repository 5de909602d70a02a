import { checkPropertyName, type Shape } from './names.js'
import { Collector, CONVENTION_SCHEMAS, pointer, type RuleSwitches, type Violation } from './rules.js'

export interface SchemaLintOptions {
  /** Pointer of the schema in what it belongs to. Default `#`. */
  path?: string
  /** Rules switched off by id. */
  rules?: RuleSwitches
  /** The name of what the schema describes (a parameter), when its values are field names (`ordering`). */
  name?: string
  /** `response` adds the rules for a response body's root (no bare array, collection envelope). */
  root?: 'response'
}

type Schema = Record<string, unknown>

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647
const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/
// Formats whose values have a length bound of their own, so maxLength adds nothing.
// `email` is not one of them: its validator bounds no length.
export const BOUNDED_FORMATS: ReadonlySet<string> = new Set(['date-time', 'date', 'time', 'uuid', 'int64', 'ipv4', 'ipv6', 'binary'])
const BRANCHES = ['anyOf', 'oneOf', 'allOf'] as const

function isSchema (value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function ownTypes (schema: Schema): string[] {
  const { type } = schema
  return Array.isArray(type) ? type.map(String) : typeof type === 'string' ? [type] : []
}

function branchesOf (schema: Schema): Schema[] {
  return BRANCHES.flatMap(key => Array.isArray(schema[key]) ? (schema[key] as unknown[]).filter(isSchema) : [])
}

/** The types and formats of a schema and its branches, for the name rules. */
function shapeOf (schema: Schema, shape: { types: Set<string>, formats: Set<string> } = { types: new Set(), formats: new Set() }): Shape {
  for (const type of ownTypes(schema)) shape.types.add(type)
  if (typeof schema.format === 'string') shape.formats.add(schema.format)
  for (const branch of branchesOf(schema)) shapeOf(branch, shape)
  return shape
}

/** Enum values: `enum`, or a union of `const`s (TypeBox's Union of Literals). */
function enumValues (schema: Schema): unknown[] {
  if (Array.isArray(schema.enum)) return schema.enum
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []
  return branches.length > 0 && branches.every(b => isSchema(b) && 'const' in b) ? branches.map(b => (b as Schema).const) : []
}

function checkTypes (schema: Schema, path: string, out: Collector, fieldNames: boolean): void {
  const types = ownTypes(schema)
  const nonNull = types.filter(t => t !== 'null')
  const { format } = schema
  if (types.includes('integer')) {
    const { minimum, maximum } = schema
    if (typeof minimum !== 'number' || typeof maximum !== 'number') {
      out.add('integer-range', path, 'an integer must have an explicit minimum and maximum')
    } else if (minimum < INT32_MIN || maximum > INT32_MAX) {
      out.add('integer-range', path, `an integer must stay inside int32 (${INT32_MIN} to ${INT32_MAX}); a 64-bit integer is a string with format int64`)
    }
  }
  if (format === 'int64' && !types.includes('string')) {
    out.add('int64-string', path, 'a property with format int64 must be a string')
  }
  if (types.includes('number')) {
    out.add('decimal-string', path, 'a decimal is a string with format decimal, never a JSON number')
  } else if (format === 'decimal' && nonNull.some(t => t !== 'string')) {
    out.add('decimal-string', path, 'a property with format decimal must be a string')
  }
  if (types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined &&
    !(typeof format === 'string' && BOUNDED_FORMATS.has(format))) {
    out.add('string-max-length', path, 'a string must have a maxLength')
  }
  const bad = fieldNames ? [] : enumValues(schema).filter(v => typeof v === 'string' && !UPPER_SNAKE.test(v))
  if (bad.length > 0) out.add('enum-upper-snake', path, `enum values are UPPER_SNAKE_CASE, not ${bad.map(v => JSON.stringify(v)).join(', ')}`)
}

function checkResponseRoot (schema: Schema, path: string, out: Collector): void {
  if (shapeOf(schema).types.has('array')) {
    out.add('response-root-array', path, 'a response body is an object, never a bare array: wrap a collection in { results, paging }')
  }
  const properties = isSchema(schema.properties) ? schema.properties : {}
  if (!('results' in properties)) return
  const required = Array.isArray(schema.required) ? schema.required : []
  for (const [field, type] of [['results', 'array'], ['paging', 'object']] as const) {
    const property = properties[field]
    // A `$ref` (the document's CursorPaging) has no type here: only a stated one is checked.
    const types = isSchema(property) ? shapeOf(property).types : new Set(['none'])
    if ((types.size > 0 && !types.has(type)) || !required.includes(field)) {
      out.add('collection-envelope', path, `a collection response must have a required ${type} ${field}`)
    }
  }
}

/** Conventions, Method rules 1 and Limits: "about three levels of nested objects". */
export const MAX_NESTING = 3

/** Levels of nested objects in `schema` (an object is one, arrays add none); a `$ref` is not followed. */
function depthOf (schema: unknown, seen: Set<unknown> = new Set()): number {
  if (!isSchema(schema) || seen.has(schema)) return 0
  seen.add(schema)
  const children: unknown[] = [
    ...(isSchema(schema.properties) ? Object.values(schema.properties) : []),
    schema.items, schema.additionalProperties, ...branchesOf(schema)
  ]
  const below = Math.max(0, ...children.map(c => depthOf(c, seen)))
  seen.delete(schema)
  return shapeOf(schema).types.has('object') || isSchema(schema.properties) ? 1 + below : below
}

/** The convention's envelopes around a list: a collection's `results` (with `paging`), a bulk response's `operations` (with `status`). */
const ENVELOPES: ReadonlyArray<[string, string]> = [['results', 'paging'], ['operations', 'status']]

/**
 * A response nested deeper than three levels of objects. The items of a collection or of a
 * bulk response are counted from their own root: the envelope around them is the
 * convention's, not the resource's.
 */
function checkNesting (schema: Schema, path: string, out: Collector): void {
  const properties = isSchema(schema.properties) ? schema.properties : {}
  const list = ENVELOPES.find(([items, beside]) => isSchema(properties[items]) && beside in properties)?.[0]
  const roots: Array<[unknown, string]> = list === undefined
    ? [[schema, path]]
    : Object.entries(properties).map(([k, v]): [unknown, string] => k === list ? [(v as Schema).items, `${path}/properties/${pointer(k)}/items`] : [v, `${path}/properties/${pointer(k)}`])
  for (const [root, at] of roots) {
    const depth = depthOf(root)
    if (depth > MAX_NESTING) out.add('nesting-depth', at, `a response holds at most ${MAX_NESTING} levels of nested objects, and this one has ${depth}: flatten it, or serve the deeper part as a resource of its own`)
  }
}

/**
 * Whether a parameter's values would be objects, or lists of them: JSON in a query string
 * (Serialization rules by type: query parameter values are never serialized JSON).
 */
export function jsonValued (schema: unknown): boolean {
  if (!isSchema(schema)) return false
  if (isSchema(schema.properties) || shapeOf(schema).types.has('object')) return true
  return jsonValued(schema.items) || branchesOf(schema).some(jsonValued)
}

/** A filter or ordering path (`a.b.c`) deeper than three levels. */
export function checkPathDepth (name: string, path: string, out: Collector): void {
  const levels = name.replace(/^-/, '').split('.').length
  if (levels > MAX_NESTING) out.add('nesting-depth', path, `${name}: filter and ordering paths have at most ${MAX_NESTING} levels (a.b.c), this one has ${levels}`)
}

/**
 * Collection endpoints, Sorting: the values of `ordering` are field names (`-name`), so the
 * enum rule does not apply below a property or parameter of that name.
 */
export const FIELD_NAME_ENUMS: ReadonlySet<string> = new Set(['ordering'])
// The query plugin's sort key, wherever the document puts it (a component of its own, `SortKey`).
const FIELD_NAME_TITLES: ReadonlySet<string> = new Set(['SortKey'])

function walk (schema: unknown, path: string, name: string | undefined, out: Collector, fieldNames = false): void {
  if (!isSchema(schema) || CONVENTION_SCHEMAS.has(String(schema.$id))) return
  // A reference (`{ $ref: '#/components/schemas/Author/properties/email' }`) has its name rules checked where it points.
  if (name !== undefined && typeof schema.$ref !== 'string') checkPropertyName(name, shapeOf(schema), path, out)
  fieldNames ||= typeof schema.title === 'string' && FIELD_NAME_TITLES.has(schema.title)
  checkTypes(schema, path, out, fieldNames)
  if (isSchema(schema.properties)) {
    for (const [key, value] of Object.entries(schema.properties)) walk(value, `${path}/properties/${pointer(key)}`, key, out, fieldNames || FIELD_NAME_ENUMS.has(key))
  }
  for (const key of ['items', 'additionalProperties', 'not'] as const) walk(schema[key], `${path}/${key}`, undefined, out, fieldNames)
  for (const key of [...BRANCHES, 'prefixItems'] as const) {
    const list = schema[key]
    if (Array.isArray(list)) list.forEach((branch, i) => { walk(branch, `${path}/${key}/${i}`, undefined, out, fieldNames) })
  }
}

/**
 * Lints a JSON schema (TypeBox or plain) against the convention's property rules.
 * `$ref`s are not followed: a referenced schema is linted where it is defined.
 */
export function lintSchema (schema: unknown, opts: SchemaLintOptions = {}): Violation[] {
  const out = new Collector(opts.rules)
  const path = opts.path ?? '#'
  if (opts.root === 'response' && isSchema(schema)) {
    checkResponseRoot(schema, path, out)
    checkNesting(schema, path, out)
  }
  if (opts.name !== undefined && isSchema(schema)) {
    checkPathDepth(opts.name, path, out)
    // `ordering` lists the paths it takes as its values.
    if (FIELD_NAME_ENUMS.has(opts.name)) for (const v of enumValues(isSchema(schema.items) ? schema.items : schema)) if (typeof v === 'string') checkPathDepth(v, path, out)
  }
  walk(schema, path, undefined, out, opts.name !== undefined && FIELD_NAME_ENUMS.has(opts.name))
  return out.violations
}
