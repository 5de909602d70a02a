/*
 * A page written by its schema, faster than fast-json-stringify and byte for byte the same.
 * fast-json-stringify writes the JSON piece by piece in JavaScript, escaping each string in a
 * loop; on a list of entities that costs more than the engine's own JSON.stringify over the same
 * data. Here the payload is first copied into fresh objects holding only what the schema writes,
 * in its order (required properties first, as fast-json-stringify orders them), then handed to
 * JSON.stringify once. A schema without an array (one entity, a small object) is left to
 * fast-json-stringify, whose few concatenations cost less than the copy there.
 *
 * Only plain data takes this path: strings, finite numbers, integers, booleans and nulls where
 * the schema's type says so, plain objects and arrays. Anything else (a Date, a number given as
 * a string, a missing required property, a value no branch of a union accepts) makes the whole
 * payload go through fast-json-stringify, which coerces it or refuses it as it always has. A
 * schema using keywords this does not read (allOf, if, patternProperties, $ref, …) is written by
 * fast-json-stringify alone. test/validation/projection.test.ts compares the two on generated
 * payloads.
 */

import { Ajv, _, type Format } from 'ajv'
import addStandardFormats from 'ajv-formats'

/** Thrown through the projection when the payload is not plain: the caller writes it the usual way. */
const NOT_PLAIN = Symbol('not plain')

type Schema = Record<string, unknown>
type Project = (value: unknown) => unknown
/** Whether `value` is valid against one branch of a union, as fast-json-stringify decides it (with Ajv). */
export type BranchTest = (schema: object) => (value: unknown) => boolean

/**
 * Branch tests as fast-json-stringify makes them: an Ajv of its options, with `formats`, where a
 * string may also be an object with `toJSON` (a Date), so that both pick the same branch.
 */
export function branchTest (formats: Record<string, Format>): BranchTest {
  const ajv = new Ajv({ formats, strictSchema: false, validateSchema: false, allowUnionTypes: true })
  addStandardFormats.default(ajv)
  ajv.addKeyword({
    keyword: 'fjs_type',
    type: 'object',
    errors: false,
    code (cxt) { cxt.fail(_`!${cxt.data} || typeof ${cxt.data}.toJSON !== "function"`) }
  })
  // Pages of every collection share their paging's branches: each distinct one is compiled once.
  const compiled = new Map<string, (value: unknown) => boolean>()
  return (schema) => {
    const text = JSON.stringify(schema)
    let test = compiled.get(text)
    if (test === undefined) {
      const validate = ajv.compile(withStringObjects(structuredClone(schema) as Schema))
      test = (value) => validate(value)
      compiled.set(text, test)
    }
    return test
  }
}

/** fast-json-stringify's rewrite of a schema for Ajv: a string type also admits an object the keyword above checks. */
function withStringObjects (schema: Schema): Schema {
  if (schema.type === 'string') {
    schema.fjs_type = 'string'
    schema.type = ['string', 'object']
  } else if (Array.isArray(schema.type) && schema.type.includes('string') && !schema.type.includes('object')) {
    schema.fjs_type = 'string'
    schema.type.push('object')
  }
  for (const [key, value] of Object.entries(schema)) {
    if (typeof value !== 'object' || value === null || key === 'propertyNames') continue
    if (key === 'properties' || key === 'patternProperties' || key === 'definitions' || key === '$defs' || key === 'dependentSchemas' || key === 'dependencies') {
      for (const inner of Object.values(value as Record<string, unknown>)) if (typeof inner === 'object' && inner !== null) withStringObjects(inner as Schema)
    } else if (Array.isArray(value)) {
      for (const inner of value) if (typeof inner === 'object' && inner !== null) withStringObjects(inner as Schema)
    } else withStringObjects(value as Schema)
  }
  return schema
}

/** Keywords that change nothing in what is written: a schema holding only these and the ones read here can be projected. */
const ANNOTATIONS = new Set([
  'title', 'description', 'examples', 'example', 'default', 'readOnly', 'writeOnly', 'deprecated', '$comment', 'format',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'enum', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'contentMediaType', 'contentEncoding',
  // The convention's own formats' keywords (schemas/formats.ts): validation only.
  'decimalMinimum', 'decimalMaximum', 'decimalDigits'
])
const READ = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf'])
/** Object keys JavaScript would not keep in insertion order, or would not keep as data. */
const UNORDERED_KEY = /^(?:0|[1-9]\d*)$|^__proto__$/

/** What the generated code is given: the sentinel's thrower, the defaults, the branch tests. */
interface Program {
  functions: string[]
  /** How many arrays the schema has: the copy pays for itself on a list, not on a small object. */
  arrays: number
  defaults: unknown[]
  branches: Array<(v: unknown) => boolean>
  branch: BranchTest
}

const SCALAR_TEST: Record<string, string> = {
  string: "typeof v === 'string'",
  integer: 'Number.isInteger(v)',
  number: "typeof v === 'number' && Number.isFinite(v)",
  boolean: "typeof v === 'boolean'",
  null: 'v === null'
}

/** Adds a function of the program projecting a value of `schema`; its name, or null when the schema is not one read here. */
function compile (schema: Schema, p: Program): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return null
  if (Object.keys(schema).some((k) => !READ.has(k) && !ANNOTATIONS.has(k))) return null
  if (schema.anyOf !== undefined || schema.oneOf !== undefined) return union(schema, p)
  const type = schema.type
  if (typeof type === 'string') return ofType(type, schema, p)
  // A nullable type, as TypeBox writes one: [T, 'null'] in either order.
  if (!Array.isArray(type) || type.length !== 2 || !type.includes('null')) return null
  const other = type.find((t) => t !== 'null')
  if (typeof other !== 'string') return null
  const inner = ofType(other, schema, p)
  return inner === null ? null : add(p, `return v === null ? null : ${inner}(v)`)
}

function add (p: Program, body: string): string {
  const name = `f${p.functions.length}`
  p.functions.push(`function ${name} (v) {\n${body}\n}`)
  return name
}

function ofType (type: string, schema: Schema, p: Program): string | null {
  if (type === 'object') return objectOf(schema, p)
  if (type === 'array') return arrayOf(schema, p)
  const test = SCALAR_TEST[type]
  return test === undefined ? null : add(p, `return ${test} ? v : fail()`)
}

function objectOf (schema: Schema, p: Program): string | null {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = (schema.required ?? []) as string[]
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return null
  if (!Array.isArray(required) || required.some((k) => !Object.hasOwn(properties, k))) return null
  const keys = Object.keys(properties)
  if (keys.some((k) => UNORDERED_KEY.test(k))) return null
  // fast-json-stringify writes the required properties first, each group in the schema's order:
  // here the required ones in one literal, so that the copy has its final shape at once (a
  // missing one fails its own type test), then the others, present or defaulted.
  const literal: string[] = []
  const after: string[] = []
  for (const key of keys) {
    const property = properties[key] as Schema
    const project = compile(property, p)
    if (project === null) return null
    const k = JSON.stringify(key)
    let value = `${project}(v[${k}])`
    if (property.default !== undefined) {
      // A property left out is written as its default, as fast-json-stringify writes it.
      p.defaults.push(property.default)
      value = `(x = v[${k}]) === undefined ? D[${p.defaults.length - 1}] : ${project}(x)`
    }
    if (required.includes(key)) literal.push(`${k}: ${value}`)
    else if (property.default !== undefined) after.push(`o[${k}] = ${value}`)
    else after.push(`x = v[${k}]; if (x !== undefined) o[${k}] = ${project}(x)`)
  }
  const lines = [
    "if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.toJSON === 'function') fail()",
    'let x',
    `const o = {${literal.join(', ')}}`,
    ...after,
    'return o'
  ]
  return add(p, lines.join('\n'))
}

function arrayOf (schema: Schema, p: Program): string | null {
  const items = schema.items
  if (typeof items !== 'object' || items === null || Array.isArray(items)) return null
  const project = compile(items as Schema, p)
  if (project === null) return null
  p.arrays++
  return add(p, 'if (!Array.isArray(v)) fail()\nconst n = v.length, o = new Array(n)\nfor (let i = 0; i < n; i++) o[i] = ' + project + '(v[i])\nreturn o')
}

function union (schema: Schema, p: Program): string | null {
  const options = (schema.anyOf ?? schema.oneOf) as unknown
  if (!Array.isArray(options) || Object.keys(schema).some((k) => k !== 'anyOf' && k !== 'oneOf' && !ANNOTATIONS.has(k))) return null
  const lines: string[] = []
  for (const option of options) {
    if (typeof option !== 'object' || option === null) return null
    const project = compile(option as Schema, p)
    if (project === null) return null
    let accepts: (v: unknown) => boolean
    try {
      accepts = p.branch(option as object)
    } catch {
      return null // a branch Ajv cannot compile here: fast-json-stringify decides, as it always has
    }
    p.branches.push(accepts)
    // The first branch whose schema accepts the value, as fast-json-stringify picks it.
    lines.push(`if (B[${p.branches.length - 1}](v)) return ${project}(v)`)
  }
  lines.push('return fail()')
  return add(p, lines.join('\n'))
}

function notPlain (): never {
  throw NOT_PLAIN
}

/** The projection of values of `schema`, compiled to one function per node as fast-json-stringify compiles its own; null when the schema uses a keyword not read here. */
function projectionOf (schema: object, branch: BranchTest): Project | null {
  const p: Program = { functions: [], arrays: 0, defaults: [], branches: [], branch }
  const root = compile(schema as Schema, p)
  // With no list to write, fast-json-stringify's few concatenations cost less than a copy.
  if (root === null || p.arrays === 0) return null
  // Code made above from the schema's names, each quoted by JSON.stringify, as fast-json-stringify makes its own.
  // eslint-disable-next-line no-new-func
  const make = new Function('fail', 'D', 'B', `${p.functions.join('\n')}\nreturn ${root}`) as (fail: () => never, d: unknown[], b: Program['branches']) => Project
  return make(notPlain, p.defaults, p.branches)
}

/**
 * A serializer for `schema` writing what `fallback` (fast-json-stringify for the same schema)
 * writes, faster for plain data; `fallback` itself when the schema has no array, or uses
 * keywords not read here.
 */
export function projectingSerializer (schema: object, fallback: (payload: unknown) => string, branch: BranchTest): (payload: unknown) => string {
  const project = projectionOf(schema, branch)
  if (project === null) return fallback
  return (payload) => {
    let plain: unknown
    try {
      plain = project(payload)
    } catch (err) {
      if (err === NOT_PLAIN) return fallback(payload)
      throw err
    }
    return JSON.stringify(plain)
  }
}
