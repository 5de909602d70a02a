import { Type, type SchemaOptions, type StringOptions, type TInteger, type TObject, type TSchema, type TString, type TUnsafe, type Static } from '@sinclair/typebox'
import type { DecimalDigits } from './keywords.js'
import { INT64_MAX, INT64_MIN, compareDecimal, isInt64, parseDecimal } from './validators/number.js'
import { DEFAULT_NAMESPACE, REF_MAX_LENGTH, isRefEntity, isRefNamespace } from './validators/ref.js'

// Builders of the convention's types (conventions: "Serialization rules by type"). Each
// returns a plain JSON Schema whose `Static<>` type is right; options such as description,
// examples, default and readOnly pass through. A wrong option throws a TypeError when the
// schema is built, naming the option and its value, so a bad schema never reaches a route.

export const INT32_MIN = -2147483648
export const INT32_MAX = 2147483647

/** The identifier alphabet of the convention; lengths are left to minLength/maxLength so each violation gives one error. */
export const ID_PATTERN = '^[A-Za-z0-9._~-]+$'
export const UPPER_SNAKE_PATTERN = /^[A-Z0-9]+(_[A-Z0-9]+)*$/

function fail (builder: string, option: string, value: unknown, rule: string): never {
  throw new TypeError(`${builder}: ${option} must be ${rule}, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` (or whole seconds), UTC only. */
export function DateTime (options: StringOptions = {}): TString {
  return Type.String({ minLength: 20, maxLength: 24, examples: ['2024-05-01T12:00:00.000Z'], ...options, format: 'date-time' })
}

/** `YYYY-MM-DD`, a real calendar day. */
export function DateOnly (options: StringOptions = {}): TString {
  return Type.String({ minLength: 10, maxLength: 10, examples: ['2024-05-01'], ...options, format: 'date' })
}

export interface DecimalOptions extends StringOptions {
  /** Inclusive lower bound, a decimal string such as `'0'`. */
  minimum?: string
  /** Inclusive upper bound, a decimal string such as `'100'`. */
  maximum?: string
  /** Most digits before the decimal point. */
  maxIntegerDigits?: number
  /** Most digits after the decimal point (0 for whole numbers). */
  maxFractionDigits?: number
}

function checkDecimal (builder: string, option: string, value: string | undefined): void {
  if (value !== undefined && (typeof value !== 'string' || parseDecimal(value) === undefined)) {
    fail(builder, option, value, 'a decimal string like "0" or "-12.5"')
  }
}

function checkCount (builder: string, option: string, value: number | undefined, min: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min)) fail(builder, option, value, `an integer of at least ${min}`)
}

function integerDigits (value: string): number {
  return (parseDecimal(value) as { integer: string }).integer.length
}

/**
 * The longest value the limits allow: sign, integer digits, point and fraction digits.
 * Known only when both digit counts are (the integer count may come from both bounds).
 */
function decimalMaxLength (min: string | undefined, max: string | undefined, intDigits: number | undefined, fracDigits: number | undefined): number | undefined {
  const int = intDigits ?? (min !== undefined && max !== undefined ? Math.max(integerDigits(min), integerDigits(max)) : undefined)
  if (int === undefined || fracDigits === undefined) return undefined
  const sign = min === undefined || min.startsWith('-') ? 1 : 0
  return sign + int + (fracDigits > 0 ? 1 + fracDigits : 0)
}

/** A decimal written as a string (`"10.2"`), never a JSON number, with exact bounds. */
export function Decimal (options: DecimalOptions = {}): TString {
  return decimal('Decimal', options)
}

function decimal (builder: string, options: DecimalOptions): TString {
  const { minimum, maximum, maxIntegerDigits, maxFractionDigits, ...rest } = options
  checkDecimal(builder, 'minimum', minimum)
  checkDecimal(builder, 'maximum', maximum)
  if (minimum !== undefined && maximum !== undefined && compareDecimal(minimum, maximum) > 0) {
    fail(builder, 'minimum', minimum, `at most the maximum ${maximum}`)
  }
  checkCount(builder, 'maxIntegerDigits', maxIntegerDigits, 1)
  checkCount(builder, 'maxFractionDigits', maxFractionDigits, 0)
  const schema: StringOptions = { minLength: 1 }
  const maxLength = decimalMaxLength(minimum, maximum, maxIntegerDigits, maxFractionDigits)
  if (maxLength !== undefined) schema.maxLength = maxLength
  if (minimum !== undefined) schema.decimalMinimum = minimum
  if (maximum !== undefined) schema.decimalMaximum = maximum
  if (maxIntegerDigits !== undefined || maxFractionDigits !== undefined) {
    const digits: DecimalDigits = {}
    if (maxIntegerDigits !== undefined) digits.integer = maxIntegerDigits
    if (maxFractionDigits !== undefined) digits.fraction = maxFractionDigits
    schema.decimalDigits = digits
  }
  return Type.String({ ...schema, examples: [maximum ?? minimum ?? '0'], ...rest, format: 'decimal' })
}

/** A percentage as a fixed-point decimal string without `%`: `'0'` to `'100'` with 2 decimals by default. */
export function Percentage (options: DecimalOptions = {}): TString {
  return decimal('Percentage', { minimum: '0', maximum: '100', maxFractionDigits: 2, ...options })
}

export interface Int32Options extends SchemaOptions {
  minimum: number
  maximum: number
}

/** A 32-bit signed integer; the convention wants explicit bounds, so both are required. */
export function Int32 (options: Int32Options): TInteger {
  const { minimum, maximum } = options
  const rule = `an integer from ${INT32_MIN} to ${INT32_MAX}`
  if (!Number.isInteger(minimum) || minimum < INT32_MIN || minimum > INT32_MAX) fail('Int32', 'minimum', minimum, rule)
  if (!Number.isInteger(maximum) || maximum < INT32_MIN || maximum > INT32_MAX) fail('Int32', 'maximum', maximum, rule)
  if (minimum > maximum) fail('Int32', 'minimum', minimum, `at most the maximum ${maximum}`)
  return Type.Integer({ ...options, minimum, maximum })
}

export interface Int64Options extends StringOptions {
  minimum?: string | bigint
  maximum?: string | bigint
}

/** A 64-bit integer, serialized as a string with format `int64` (digits, optional `-`, no leading zero). */
export function Int64 (options: Int64Options = {}): TString {
  const { minimum, maximum, ...rest } = options
  const bound = (name: string, value: string | bigint | undefined): string | undefined => {
    if (value === undefined) return undefined
    const text = String(value)
    if ((typeof value !== 'string' && typeof value !== 'bigint') || !isInt64(text)) fail('Int64', name, value, `an integer from ${INT64_MIN} to ${INT64_MAX}`)
    return text
  }
  const min = bound('minimum', minimum)
  const max = bound('maximum', maximum)
  if (min !== undefined && max !== undefined && BigInt(min) > BigInt(max)) fail('Int64', 'minimum', min, `at most the maximum ${max}`)
  const schema: StringOptions = { minLength: 1, maxLength: 20, examples: [max ?? min ?? '9007199254740993'] }
  if (min !== undefined) schema.decimalMinimum = min
  if (max !== undefined) schema.decimalMaximum = max
  return Type.String({ ...schema, ...rest, format: 'int64' })
}

/** ISO 8601 duration such as `P1Y2M3DT4H`; at most 64 characters unless told otherwise. */
export function Duration (options: StringOptions = {}): TString {
  return Type.String({ minLength: 3, maxLength: 64, examples: ['P1Y2M10DT2H30M'], ...options, format: 'duration' })
}

/** ISO 8601 interval (`<start>/<end>`, `<start>/<duration>`, `<duration>/<end>`, `R[n]/…`); at most 128 characters unless told otherwise. */
export function Interval (options: StringOptions = {}): TString {
  return Type.String({ minLength: 12, maxLength: 128, examples: ['2024-05-01T00:00:00Z/P1D'], ...options, format: 'interval' })
}

/** A five-field cron schedule (`minute hour day-of-month month weekday`); at most 255 characters unless told otherwise. */
export function CronSchedule (options: StringOptions = {}): TString {
  return Type.String({ minLength: 9, maxLength: 255, examples: ['0 9 * * MON-FRI'], ...options, format: 'cron' })
}

/**
 * An enum of upper-case alphanumerics and underscores (conventions: "Enum"). Written as
 * `{ type: 'string', enum }` so a wrong value gives one `enum` error, not one per literal.
 */
export function UpperSnakeEnum<const T extends readonly string[]> (values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  if (!Array.isArray(values) || values.length === 0) fail('UpperSnakeEnum', 'values', values, 'a non-empty array')
  for (const v of values) {
    if (typeof v !== 'string' || !UPPER_SNAKE_PATTERN.test(v)) fail('UpperSnakeEnum', 'values', v, `upper snake case (${UPPER_SNAKE_PATTERN.source})`)
  }
  if (new Set(values).size !== values.length) fail('UpperSnakeEnum', 'values', values.join(', '), 'without repeated values')
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] })
}

export interface QuantityOptions<U extends readonly string[]> extends SchemaOptions {
  /** Options of the `amount` decimal. */
  amount?: DecimalOptions
  /** Allowed units of measure; any string of 1–50 characters when absent. Units follow their own standard, so case is not forced. */
  uomValues?: U
}

function uom<U extends readonly string[]> (builder: string, values: U | undefined): TUnsafe<U[number]> {
  if (values === undefined) return Type.Unsafe<U[number]>({ type: 'string', minLength: 1, maxLength: 50 })
  if (!Array.isArray(values) || values.length === 0 || values.some(v => typeof v !== 'string' || v === '')) {
    fail(builder, 'uomValues', values, 'a non-empty array of non-empty strings')
  }
  return Type.Unsafe<U[number]>({ type: 'string', enum: [...values] })
}

export type TQuantity<U extends readonly string[]> = TObject<{ amount: TString, uom: TUnsafe<U[number]> }>

/** A quantity as one object `{ amount, uom }` (conventions: "Quantity"). */
export function Quantity<const U extends readonly string[] = readonly string[]> (options: QuantityOptions<U> = {}): TQuantity<U> {
  const { amount, uomValues, ...rest } = options
  return Type.Object({ amount: Decimal(amount), uom: uom('Quantity', uomValues) }, { additionalProperties: false, ...rest })
}

export type TQuantityFields<N extends string, U extends readonly string[]> =
  { [K in N]: TString } & { [K in `${N}Uom`]: TUnsafe<U[number]> }

/**
 * The sibling form of a quantity, `<x>` and `<x>Uom`, to spread into `Type.Object`:
 * `Type.Object({ ...QuantityFields('weight', { uomValues: ['kg', 'g'] }) })`.
 */
export function QuantityFields<const N extends string, const U extends readonly string[] = readonly string[]> (
  name: N, options: { amount?: DecimalOptions, uomValues?: U } = {}
): TQuantityFields<N, U> {
  if (typeof name !== 'string' || !/^[a-z][a-zA-Z0-9]*$/.test(name)) fail('QuantityFields', 'name', name, 'a camelCase property name')
  return { [name]: Decimal(options.amount), [`${name}Uom`]: uom('QuantityFields', options.uomValues) } as TQuantityFields<N, U>
}

export interface RefOptions extends StringOptions {
  /** The sub-entity part, `[a-z0-9]{0,20}`; empty by default (`svc:<entity>::<id>`). */
  subEntity?: string
  /** The namespace, `[a-z]{1,10}`; `svc` by default. */
  namespace?: string
}

/** A URN-like reference pinned to one entity: `Ref('author')` accepts `svc:author::<id>` only. */
export function Ref (entity: string, options: RefOptions = {}): TString {
  const { subEntity = '', namespace = DEFAULT_NAMESPACE, ...rest } = options
  if (typeof entity !== 'string' || !isRefEntity(entity)) fail('Ref', 'entity', entity, '1 to 20 characters of [a-z0-9]')
  if (typeof subEntity !== 'string' || !isRefEntity(subEntity, true)) fail('Ref', 'subEntity', subEntity, '0 to 20 characters of [a-z0-9]')
  if (typeof namespace !== 'string' || !isRefNamespace(namespace)) fail('Ref', 'namespace', namespace, '1 to 10 characters of [a-z]')
  const prefix = `${namespace}:${entity}:${subEntity}:`
  return Type.String({
    minLength: prefix.length + 1,
    maxLength: REF_MAX_LENGTH,
    examples: [`${prefix}123e4567-e89b-42d3-a456-426614174000`],
    ...rest,
    // The prefix has only [a-z0-9:], nothing to escape; the pattern implies the `svc-ref` format.
    pattern: `^${prefix}[A-Za-z0-9._~-]+$`
  })
}

/** An opaque identifier (conventions: "Naming rules", 9): `[A-Za-z0-9._~-]`, 1–128 characters unless told otherwise. */
export function Id (options: StringOptions = {}): TString {
  return Type.String({ minLength: 1, maxLength: 128, pattern: ID_PATTERN, examples: ['123e4567-e89b-42d3-a456-426614174000'], ...options })
}

export type TNullable<T extends TSchema> = TUnsafe<Static<T> | null>

/**
 * `schema` or `null` (conventions: "null" is written, never left out). The same schema with
 * `type: [<type>, 'null']` (and `null` added to its enum), so a wrong value gives one Ajv
 * error and fast-json-stringify writes `null` as `null`. A union gets a `null` branch; any
 * other schema without a `type` (a `$ref`, say) becomes `anyOf [schema, { type: 'null' }]`. Wrap the result in `Type.Optional` when the
 * property may also be absent.
 */
export function Nullable<T extends TSchema> (schema: T, options: SchemaOptions = {}): TNullable<T> {
  // Only the JSON keywords are copied: TypeBox's symbols (Kind, Optional) describe the inner type.
  const json: Record<string, unknown> = { ...Object.fromEntries(Object.entries(schema)), ...options }
  const type = json.type
  if (typeof type !== 'string' && !Array.isArray(type)) {
    // A union gets null as one more branch, so a wrong value still gives one `anyOf` error.
    if (Array.isArray(json.anyOf)) return Type.Unsafe<Static<T> | null>({ ...json, anyOf: [...json.anyOf, Type.Null()] })
    return Type.Unsafe<Static<T> | null>({ ...options, anyOf: [schema, Type.Null()] })
  }
  const types: unknown[] = Array.isArray(type) ? type : [type]
  json.type = types.includes('null') ? types : [...types, 'null']
  if ('const' in json) {
    json.enum = [json.const]
    delete json.const
  }
  if (Array.isArray(json.enum) && !json.enum.includes(null)) json.enum = [...json.enum, null]
  return Type.Unsafe<Static<T> | null>(json)
}
