import type { ValidateFunction } from 'ajv'
import { INTEGER, NUMBER, typesOf } from './numerals.js'

/*
 * A parameter whose union admits text besides a number (`Type.Union([Type.Integer(),
 * Type.String()])`): Ajv tries the branches in order and coerces the text to the numeric one by
 * JavaScript's rules, so `0x10` became 16 and `1e1` 10. A number in text is written in decimal
 * digits (numerals.ts); any other writing is validated as the text it is, by the schema without
 * those properties' numeric branches.
 */

/** A top-level property (or the items of one) whose `anyOf`/`oneOf` has numeric and string branches. */
interface TextUnion {
  key: string
  array: boolean
  decimal: RegExp
}

// Asked of a union's branches once typesOf has found every branch typed (textUnionOf).
const isNumeric = (branch: unknown): boolean => typesOf(branch).every(t => t === 'integer' || t === 'number')

function unionOf (schema: unknown): { key: 'anyOf' | 'oneOf', branches: unknown[] } | null {
  if (typeof schema !== 'object' || schema === null) return null
  const { anyOf, oneOf } = schema as { anyOf?: unknown, oneOf?: unknown }
  if (Array.isArray(anyOf)) return { key: 'anyOf', branches: anyOf }
  if (Array.isArray(oneOf)) return { key: 'oneOf', branches: oneOf }
  return null
}

function textUnionOf (key: string, schema: unknown, array: boolean): TextUnion | null {
  const union = unionOf(schema)
  const types = typesOf(schema)
  if (union === null || !types.includes('string') || !union.branches.some(isNumeric)) return null
  return { key, array, decimal: types.includes('number') ? NUMBER : INTEGER }
}

export function textUnionsOf (schema: unknown): TextUnion[] {
  const properties = typeof schema === 'object' && schema !== null ? (schema as { properties?: unknown }).properties : undefined
  if (typeof properties !== 'object' || properties === null) return []
  const found: TextUnion[] = []
  for (const [key, property] of Object.entries(properties)) {
    const array = typesOf(property).includes('array')
    const union = textUnionOf(key, array ? (property as { items?: unknown }).items : property, array)
    if (union !== null) found.push(union)
  }
  return found
}

/** `schema` with the numeric branches of `keys` left out (and no `$id`, which names the original only). */
function textOnly (schema: unknown, keys: readonly TextUnion[]): object {
  const { $id: _id, ...rest } = schema as { $id?: unknown, properties: Record<string, unknown> }
  const properties = { ...rest.properties }
  for (const u of keys) {
    const property = properties[u.key] as Record<string, unknown>
    const target = (u.array ? property.items : property) as Record<string, unknown>
    const union = unionOf(target) as { key: 'anyOf' | 'oneOf', branches: unknown[] }
    const stripped = { ...target, [union.key]: union.branches.filter(b => !isNumeric(b)) }
    properties[u.key] = u.array ? { ...property, items: stripped } : stripped
  }
  return { ...rest, properties }
}

function written (u: TextUnion, value: unknown): boolean {
  if (Array.isArray(value)) return value.some(v => written(u, v))
  return typeof value === 'string' && value !== '' && !u.decimal.test(value)
}

/**
 * `validate` (compiled with coercion) for a part that arrives as text, validating a request whose
 * text unions hold a value that is not decimal digits with `compile(textOnly(schema))`, so that
 * value stays the text sent.
 */
export function textUnions (validate: ValidateFunction, schema: unknown, compile: (schema: object) => ValidateFunction): ValidateFunction {
  const unions = textUnionsOf(schema)
  if (unions.length === 0) return validate
  const variants = new Map<string, ValidateFunction>()
  const checked = function textUnionsValidate (data: unknown): boolean {
    const values = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>
    const texts = unions.filter(u => written(u, values[u.key]))
    let v = validate
    if (texts.length > 0) {
      const id = texts.map(u => u.key).join('\u0000')
      v = variants.get(id) ?? compile(textOnly(schema, texts))
      variants.set(id, v)
    }
    const valid = v(data)
    checked.errors = v.errors
    return valid
  } as ValidateFunction
  return checked
}
