import type { ErrorObject, ValidateFunction } from 'ajv'

/*
 * Query strings, headers and path parameters arrive as text, which Ajv coerces to the schema's
 * types by JavaScript's rules: `1e1` became the integer 10, `0x10` 16 and `%20` (a space) 0,
 * and an error showed the coerced value, not the one sent. The convention wants a service strict
 * in what it consumes: a number in text is written in decimal digits. Values the schema types as
 * integer or number are checked as they were sent, before Ajv coerces them, and refused with the
 * value sent.
 */

export const INTEGER = /^-?[0-9]+$/
export const NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

/** A top-level property typed as a number: its value, or each item of its array, is a numeral. */
interface Numeral {
  key: string
  pointer: string
  integer: boolean
  array: boolean
  /** An empty value is Ajv's null here. */
  nullable: boolean
}

/** The JSON types a schema admits, from `type` or its union's branches (TypeBox's `Union`); [] when not all are typed. */
export function typesOf (schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return []
  const { type, anyOf, oneOf } = schema as { type?: unknown, anyOf?: unknown, oneOf?: unknown }
  if (typeof type === 'string') return [type]
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string')
  const branches = anyOf ?? oneOf
  if (!Array.isArray(branches)) return []
  const each = branches.map(typesOf)
  return each.some(types => types.length === 0) ? [] : each.flat()
}

/** JSON Pointer escaping (RFC 6901), as Ajv writes `instancePath`. */
const escaped = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1')

/** The properties of an object schema whose text is to be read as a number. */
export function numeralsOf (schema: unknown): Numeral[] {
  const properties = typeof schema === 'object' && schema !== null ? (schema as { properties?: unknown }).properties : undefined
  if (typeof properties !== 'object' || properties === null) return []
  const found: Numeral[] = []
  for (const [key, property] of Object.entries(properties)) {
    const own = typesOf(property)
    const array = own.includes('array')
    const types = array ? typesOf((property as { items?: unknown }).items) : own
    // Text is taken as it is where the schema admits a string.
    if (types.includes('string') || !(types.includes('integer') || types.includes('number'))) continue
    found.push({ key, pointer: `/${escaped(key)}`, integer: !types.includes('number'), array, nullable: types.includes('null') })
  }
  return found
}

function refusal (n: Numeral, instancePath: string, data: string): ErrorObject {
  // Digits past the largest number JavaScript holds (about 1.8e308) would read as Infinity.
  const written = (n.integer ? INTEGER : NUMBER).test(data)
  return {
    keyword: 'numeral',
    instancePath,
    schemaPath: `#/properties/${escaped(n.key)}`,
    params: { type: n.integer ? 'integer' : 'number' },
    message: written
      ? `must be ${n.integer ? 'an integer' : 'a number'} between -1.7976931348623157e308 and 1.7976931348623157e308`
      : n.integer ? 'must be an integer in decimal digits, such as 42 or -7' : 'must be a number in decimal digits, such as 4.2, -7 or 1.5e3',
    data
  }
}

function admitted (n: Numeral, value: unknown): boolean {
  if (typeof value !== 'string') return true
  if (value === '' && n.nullable) return true
  return (n.integer ? INTEGER : NUMBER).test(value) && Number.isFinite(Number(value))
}

/** The value sent at `instancePath`, when it lies under a numeral (`sent` holds each numeral's value). */
function sentAt (numerals: readonly Numeral[], sent: readonly unknown[], instancePath: string): unknown {
  for (const [k, n] of numerals.entries()) {
    if (instancePath === n.pointer) return sent[k]
    if (!n.array || !instancePath.startsWith(`${n.pointer}/`)) continue
    const value = sent[k]
    // A single value of an array parameter is its first and only item.
    return Array.isArray(value) ? value[Number(instancePath.slice(n.pointer.length + 1))] : value
  }
  return undefined
}

/**
 * `validate` (compiled with coercion) for a part that arrives as text, refusing first a value
 * the schema types as a number that is not written in decimal digits. Ajv's errors on a value
 * refused here are about its coerced form, and are dropped; its other errors on a number show
 * the value as it was sent (`007`, not 7).
 */
export function strictNumerals (validate: ValidateFunction, schema: unknown): ValidateFunction {
  const numerals = numeralsOf(schema)
  if (numerals.length === 0) return validate
  const checked = function strictNumeralsValidate (data: unknown): boolean {
    // Read, arrays copied, before Ajv coerces them in place; not an object, Ajv alone says what is wrong with it.
    const values = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>
    const sent = numerals.map(n => {
      const value = values[n.key]
      return Array.isArray(value) ? [...value] : value
    })
    let refused: ErrorObject[] | undefined
    for (const [k, n] of numerals.entries()) {
      const value = sent[k]
      if (Array.isArray(value)) {
        value.forEach((v, i) => { if (!admitted(n, v)) (refused ??= []).push(refusal(n, `${n.pointer}/${i}`, v as string)) })
      } else if (!admitted(n, value)) {
        (refused ??= []).push(refusal(n, n.array ? `${n.pointer}/0` : n.pointer, value as string))
      }
    }
    const valid = validate(data)
    if (refused === undefined && validate.errors == null) {
      checked.errors = validate.errors
      return valid
    }
    const paths = (refused ?? []).map(r => r.instancePath)
    const others = (validate.errors ?? [])
      .filter(e => !paths.some(p => e.instancePath === p || e.instancePath.startsWith(`${p}/`)))
      .map(e => {
        const value = sentAt(numerals, sent, e.instancePath)
        return typeof value === 'string' ? { ...e, data: value } : e
      })
    checked.errors = [...(refused ?? []), ...others]
    return refused === undefined ? valid : false
  } as ValidateFunction
  return checked
}
