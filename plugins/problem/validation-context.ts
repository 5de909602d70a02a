import type { ErrorObject } from 'ajv'
import type { ContextItem } from '../../schemas/problem.js'
import { describeFormat } from '../../schemas/formats.js'
import { cutShort } from '../shared/cut-short.js'

/**
 * Fastify names the request parts `querystring`/`headers`/`params`; the convention says
 * `query`/`header`. Path parameters get no source: the context item's `source` is one of
 * `body`, `query` or `header`, and optional, so one outside that list is left out rather than
 * made up; the field still names the parameter.
 */
const SOURCES: Record<string, ContextItem['source'] | undefined> = {
  body: 'body',
  querystring: 'query',
  query: 'query',
  headers: 'header',
  header: 'header'
}

/**
 * The field of a violation by the request part as a whole (a body that is not an object): the
 * root, as JSONPath writes it. The convention gives every validation item a field, and the
 * fields below it are relative to it (`pages[0].description`); no camelCase property is `$`.
 */
export const ROOT_FIELD = '$'

/** `/pages/0/description` → `pages[0].description` (conventions: context item `field`). */
export function fieldFromPointer (pointer: string, prefix = ''): string {
  let out = prefix
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^(0|[1-9]\d*)$/.test(seg)) out += `[${seg}]`
    else out += out === '' ? seg : `.${seg}`
  }
  return out
}

function join (base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`
}

/** A JSON value's type in the words of a schema's `type`, to say what was sent instead. */
function typeOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  // A JSON number past about 1.8e308 parses as Infinity, which no number type takes (strictNumbers).
  if (typeof value === 'number') return Number.isFinite(value) ? Number.isInteger(value) ? 'integer' : 'number' : String(value)
  return typeof value
}

function printable (value: unknown): string | undefined {
  if (typeof value === 'string') return cutShort(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return undefined
}

type Schema = Record<string, unknown>

// Keywords that say nothing of a value's form; a branch holding any keyword not here or below is not described.
const ANNOTATIONS = new Set(['title', 'description', 'examples', 'default', 'readOnly', 'writeOnly', '$comment'])
const DESCRIBED = new Set(['type', 'format', 'enum', 'const', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'anyOf', 'oneOf'])

function isSchema (value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function bounds (min: unknown, max: unknown, unit: string): string {
  if (typeof min === 'number' && typeof max === 'number') return min === max ? ` of ${min}${unit}` : ` from ${min} to ${max}${unit}`
  if (typeof max === 'number') return ` of at most ${max}${unit}`
  return typeof min === 'number' ? ` of at least ${min}${unit}` : ''
}

/** A string schema in words; its bounds are part of it, so what is named is what passes. */
function describeString (schema: Schema): string[] {
  if (Array.isArray(schema.enum)) return schema.enum.map(v => String(v))
  if (schema.maxLength === 0) return ['an empty string']
  // A format's own words say what it takes, its length included.
  if (typeof schema.format === 'string') return [describeFormat(schema.format)]
  const pattern = typeof schema.pattern === 'string' ? ` matching the pattern ${schema.pattern}` : ''
  return [`a string${bounds(schema.minLength, schema.maxLength, ' characters')}${pattern}`]
}

/**
 * The values one branch of a union admits, in words (`a decimal number written as a string`,
 * `null`, `a boolean (true or false)`), with the JSON types it takes; undefined when a keyword of the branch
 * is not one this reads, so that no message names a form the value would still fail.
 */
function describeBranch (schema: unknown): { words: string[], types: string[] } | undefined {
  if (!isSchema(schema)) return undefined
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : []
  // The value described is no object or array (unionMessage): such a branch fails by its type alone.
  if (types.length > 0 && types.every(t => t === 'array' || t === 'object')) return { words: types.map(t => `an ${t}`), types }
  if (Object.keys(schema).some(k => !DESCRIBED.has(k) && !ANNOTATIONS.has(k))) return undefined
  const union = schema.anyOf ?? schema.oneOf
  if (union !== undefined) return describeUnion(union)
  if ('const' in schema) return { words: [String(schema.const)], types: [typeOf(schema.const)] }
  if (types.length === 0) return undefined
  const words = types.flatMap(type => {
    switch (type) {
      case 'null': return ['null']
      case 'boolean': return ['a boolean (true or false)']
      case 'string': return describeString(schema)
      case 'integer': return [`an integer${bounds(schema.minimum, schema.maximum, '')}`]
      case 'number': return [`a number${bounds(schema.minimum, schema.maximum, '')}`]
      default: return [`an ${type}`]
    }
  })
  return { words, types }
}

function describeUnion (branches: unknown): { words: string[], types: string[] } | undefined {
  if (!Array.isArray(branches)) return undefined
  const out = { words: [] as string[], types: [] as string[] }
  for (const branch of branches) {
    const described = describeBranch(branch)
    if (described === undefined) return undefined
    out.words.push(...described.words)
    out.types.push(...described.types)
  }
  return out
}

/**
 * The message of a value no branch of a union admits: each admitted form (`must be a 64-bit
 * integer written as a string …, or an empty string`), and the value's type when no branch takes
 * it. Ajv gives the branches only with `verbose`; an object or array value, whose failure may lie
 * inside it, and a branch not described keep the general message.
 */
function unionMessage (e: ErrorObject, data: unknown): string {
  const described = typeof data === 'object' && data !== null ? undefined : describeUnion(e.schema)
  if (described === undefined) return 'does not match any of the allowed forms'
  const words = [...new Set(described.words)]
  const list = words.length === 1 ? words[0] as string : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1] as string}`
  const sent = typeOf(data)
  const taken = described.types.includes(sent) || (sent === 'integer' && described.types.includes('number'))
  return `must be ${list}${taken ? '' : `, not ${sent}`}`
}

interface Mapped { code: string, message: string, field: string, value?: string }

/** Chooses the convention's code and a readable message from the failing keyword. */
function mapError (e: ErrorObject, prefix: string): Mapped {
  const field = fieldFromPointer(e.instancePath, prefix)
  const p = e.params as Record<string, unknown>
  const data: unknown = e.data
  const value = printable(data)
  switch (e.keyword) {
    case 'required':
      return { code: 'INPUT_NULL', message: 'is required', field: join(field, String(p.missingProperty)) }
    case 'type':
      if (data === null) return { code: 'INPUT_NULL', message: 'must not be null', field }
      // The value is a string, as the convention types it: the message says what it was (3.5 is not "3.5").
      return { code: 'INPUT_INVALID', message: `must be ${String(p.type).replace(',', ' or ')}, not ${typeOf(data)}`, field, value }
    case 'minLength':
      if (typeof data === 'string' && data.trim() === '') return { code: 'INPUT_BLANK', message: 'must not be blank', field, value }
      return { code: 'INPUT_MIN_VALUE', message: `must have at least ${String(p.limit)} characters`, field, value }
    case 'maxLength':
      return { code: 'INPUT_MAX_VALUE', message: `must have at most ${String(p.limit)} characters`, field, value }
    case 'minItems':
      if (Array.isArray(data) && data.length === 0) return { code: 'INPUT_EMPTY', message: 'must not be empty', field }
      return { code: 'INPUT_MIN_VALUE', message: `must have at least ${String(p.limit)} items`, field }
    case 'maxItems':
      return { code: 'INPUT_MAX_VALUE', message: `must have at most ${String(p.limit)} items`, field }
    case 'minimum':
      return { code: 'INPUT_MIN_VALUE', message: `must be at least ${String(p.limit)}`, field, value }
    case 'exclusiveMinimum':
      return { code: 'INPUT_MIN_VALUE', message: `must be greater than ${String(p.limit)}`, field, value }
    case 'maximum':
      return { code: 'INPUT_MAX_VALUE', message: `must be at most ${String(p.limit)}`, field, value }
    case 'exclusiveMaximum':
      return { code: 'INPUT_MAX_VALUE', message: `must be less than ${String(p.limit)}`, field, value }
    // Custom keywords of schemas/formats.ts: bounds of decimal strings, compared exactly.
    case 'decimalMinimum':
      return { code: 'INPUT_MIN_VALUE', message: `must be at least ${String(p.limit)}`, field, value }
    case 'decimalMaximum':
      return { code: 'INPUT_MAX_VALUE', message: `must be at most ${String(p.limit)}`, field, value }
    case 'minProperties':
      return { code: 'INPUT_EMPTY', message: `must have at least ${String(p.limit)} properties`, field }
    case 'maxProperties':
      return { code: 'INPUT_MAX_VALUE', message: `must have at most ${String(p.limit)} properties`, field }
    case 'additionalProperties':
      return { code: 'INPUT_INVALID', message: 'is not allowed here', field: join(field, String(p.additionalProperty)) }
    case 'format':
      return { code: 'INPUT_INVALID', message: `must be ${describeFormat(String(p.format))}`, field, value }
    case 'pattern':
      return { code: 'INPUT_INVALID', message: `must match the pattern ${String(p.pattern)}`, field, value }
    case 'enum':
      return { code: 'INPUT_INVALID', message: `must be one of ${(p.allowedValues as unknown[]).map(v => String(v)).join(', ')}`, field, value }
    case 'const':
      return { code: 'INPUT_INVALID', message: `must be ${JSON.stringify(p.allowedValue)}`, field, value }
    case 'uniqueItems':
      return { code: 'INPUT_INVALID', message: `must not repeat items (items ${String(p.j)} and ${String(p.i)} are equal)`, field }
    case 'anyOf':
    case 'oneOf':
      return { code: 'INPUT_INVALID', message: unionMessage(e, data), field, value }
    default:
      return { code: 'INPUT_INVALID', message: e.message ?? 'is invalid', field, value }
  }
}

/**
 * When one value breaks several keywords (an offset date-time fails `maxLength` and `format`,
 * `null` on an enum fails `type` and `enum`), the most telling one speaks for the field:
 * the type first, then a blank string, then the value's shape, then its bounds.
 */
function priority (e: ErrorObject): number {
  switch (e.keyword) {
    case 'type': return 0
    case 'minLength': return typeof e.data === 'string' && e.data.trim() === '' ? 1 : 3
    case 'format': case 'pattern': case 'enum': case 'const': case 'decimalDigits': case 'anyOf': case 'oneOf': return 2
    default: return 3
  }
}

/**
 * A query violation's pointer cut to its parameter (`/name/0` → `/name`): the field of a query
 * item is the parameter's name, which a client wrote, not the position of a repeated value in
 * the array the schema reads them into.
 */
function parameterPointer (pointer: string): string {
  const end = pointer.indexOf('/', 1)
  return end === -1 ? pointer : pointer.slice(0, end)
}

/** Keywords whose item names a child field, so they never compete with the value's own errors. */
const CHILD_KEYWORDS = new Set(['required', 'additionalProperties'])

/**
 * Turns Ajv's errors (collected with `allErrors`) into one context item per violation.
 * Branch errors under a failed `anyOf`/`oneOf` are folded into that one item, so a
 * nullable or union field reports one violation, not one per alternative; and a value
 * that breaks several keywords is reported once, by its most telling keyword.
 */
export function contextFromAjv (errors: readonly ErrorObject[], part: string, fieldPrefix = ''): ContextItem[] {
  const unions = errors.filter(e => e.keyword === 'anyOf' || e.keyword === 'oneOf')
  const unfolded = errors.filter(e => !unions.some(u => u !== e && e.schemaPath.startsWith(u.schemaPath + '/')))
  const best = new Map<string, ErrorObject>()
  for (const e of unfolded) {
    if (CHILD_KEYWORDS.has(e.keyword)) continue
    const current = best.get(e.instancePath)
    if (current === undefined || priority(e) < priority(current)) best.set(e.instancePath, e)
  }
  const kept = unfolded.filter(e => CHILD_KEYWORDS.has(e.keyword) || best.get(e.instancePath) === e)
  const source = SOURCES[part]
  const items: ContextItem[] = []
  for (const e of kept) {
    const m = mapError(source === 'query' ? { ...e, instancePath: parameterPointer(e.instancePath) } : e, fieldPrefix)
    const item: ContextItem = { code: m.code, message: m.message, field: m.field === '' ? ROOT_FIELD : m.field }
    if (source !== undefined) item.source = source
    if (m.value !== undefined) item.value = m.value
    items.push(item)
  }
  return items
}
