import { formatPattern } from '../../schemas/patterns.js'

/*
 * Rewrites of the whole document (`transformObject` of @fastify/swagger), after every
 * operation is in it: patterns beside the convention's formats, and operationIds made
 * unique across the document.
 */

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

// Values that are data, never schemas: a string in an example is left as it is.
const DATA = new Set(['example', 'examples', 'const', 'enum'])
// Maps of schemas by name: a property may be called `examples` and still be a schema.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas'])

function isStringSchema (node: Json): boolean {
  return node.type === 'string' || (Array.isArray(node.type) && node.type.includes('string'))
}

/** `schema` with the documented pattern of its format, and what the pattern leaves to the format said in its description. */
function withPattern (schema: Json): Json {
  if (typeof schema.format !== 'string' || schema.pattern !== undefined || !isStringSchema(schema)) return schema
  const found = formatPattern(schema)
  if (found === undefined) return schema
  const out: Json = { ...schema, pattern: found.pattern }
  if (found.unchecked !== undefined) {
    const note = `The pattern does not check ${found.unchecked}; the format ${schema.format} does.`
    out.description = typeof schema.description === 'string' ? `${schema.description} ${note}` : note
  }
  return out
}

/**
 * Adds a pattern to every string schema with one of the convention's formats
 * (schemas/patterns.ts), so a validator that knows only JSON Schema refuses what the
 * service refuses. Returns a copy; examples and other data are left alone.
 */
export function addPatterns (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(addPatterns)
  if (!isObject(node)) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (DATA.has(key)) out[key] = value
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, addPatterns(v)]))
    else out[key] = addPatterns(value)
  }
  return withPattern(out)
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options']

/** Marks an operation whose route takes a body without requiring it (operation.ts); @fastify/swagger copies `x-` keys of a route schema to it. */
export const OPTIONAL_BODY = 'x-optional-body'

/**
 * @fastify/swagger marks every request body required; the operations marked `OPTIONAL_BODY`
 * (a route that reads a missing body as its default, such as an action's) say it may be left
 * out instead. Changes `paths` in place.
 */
export function optionalBodies (paths: Json): void {
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined
      if (op?.[OPTIONAL_BODY] === undefined) continue
      delete op[OPTIONAL_BODY]
      if (isObject(op.requestBody)) op.requestBody.required = false
    }
  }
}

/**
 * Keeps every operationId once (OpenAPI 3.1 §4.8.10: unique among all operations): a
 * repeated one gets the number of its occurrence (`getThing2`). Changes `paths` in place.
 */
export function uniqueOperationIds (paths: Json): void {
  const seen = new Map<string, number>()
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined
      if (typeof op?.operationId !== 'string') continue
      const n = (seen.get(op.operationId) ?? 0) + 1
      seen.set(op.operationId, n)
      if (n > 1) op.operationId = `${op.operationId}${n}`
    }
  }
}
