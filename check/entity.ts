// Entities the check creates with --writes, built from the document's create schema: required
// properties only, each the plainest value its schema admits. A property named `<entity>Id`
// refers to an entity the check created before, when there is one.
import { propertiesOf, resolve, type Json, type Schema } from './openapi.js'

export interface Made { value: Json, ok: boolean }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The one non-null type of a schema (`["string","null"]` → `string`), or its first `anyOf`/`oneOf` branch that is not null. */
function concrete (doc: Record<string, unknown>, schema: Schema): Schema {
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema[key]
    if (Array.isArray(branches)) {
      const first = branches.map(b => resolve(doc, b)).find(b => b.type !== 'null')
      if (first !== undefined) return concrete(doc, { ...schema, [key]: undefined, ...first })
    }
  }
  const type = Array.isArray(schema.type) ? schema.type.find(t => t !== 'null') : schema.type
  return { ...schema, type }
}

function fits (value: string, schema: Schema): boolean {
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false
  if (typeof schema.pattern === 'string') {
    try { if (!new RegExp(schema.pattern, 'u').test(value)) return false } catch { return true }
  }
  return true
}

const FORMATS: Record<string, (tag: string) => string> = {
  email: tag => `${tag}@example.com`,
  uri: tag => `https://example.invalid/${tag}`,
  'date-time': () => new Date().toISOString(),
  date: () => new Date().toISOString().slice(0, 10),
  decimal: () => '1',
  int64: () => '1',
  uuid: () => crypto.randomUUID(),
  duration: () => 'P1D'
}

function makeString (name: string, schema: Schema, tag: string, refs: ReadonlyMap<string, string>): string | undefined {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return String(schema.enum[0])
  const ref = /^(.+)Id$/.exec(name)
  const referred = ref === null ? undefined : refs.get(ref[1] as string)
  if (referred !== undefined) return referred
  const candidates = [
    ...(name !== 'name' && Array.isArray(schema.examples) ? schema.examples.filter((e): e is string => typeof e === 'string') : []),
    ...(typeof schema.format === 'string' && FORMATS[schema.format] !== undefined ? [(FORMATS[schema.format] as (t: string) => string)(tag)] : []),
    tag, tag.replace(/-/g, ''), tag.toUpperCase().replace(/-/g, '_'), 'a', '1'
  ]
  return candidates.map(c => typeof schema.maxLength === 'number' && c.length > schema.maxLength ? c.slice(0, schema.maxLength) : c).find(c => fits(c, schema))
}

/**
 * A value for `schema`: `ok` is false when some required part could not be made (a pattern
 * none of the candidates matches), and the service's answer will say what it wanted.
 */
export function makeValue (doc: Record<string, unknown>, raw: Schema, name: string, tag: string, refs: ReadonlyMap<string, string>, depth = 0): Made {
  const schema = concrete(doc, resolve(doc, raw))
  if ('const' in schema) return { value: schema.const as Json, ok: true }
  switch (schema.type) {
    case 'string': {
      const value = makeString(name, schema, tag, refs)
      return value === undefined ? { value: tag, ok: false } : { value, ok: true }
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1
      return { value: Math.max(min, Math.min(1, typeof schema.maximum === 'number' ? schema.maximum : 1)), ok: true }
    }
    case 'boolean': return { value: true, ok: true }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0
      if (min === 0 || depth > 4) return { value: [], ok: min === 0 }
      const items = Array.from({ length: min }, (_v, i) => makeValue(doc, resolve(doc, schema.items), name, `${tag}-${i}`, refs, depth + 1))
      return { value: items.map(i => i.value), ok: items.every(i => i.ok) }
    }
    case 'object':
    default: {
      if (depth > 4) return { value: {}, ok: false }
      const props = propertiesOf(doc, schema)
      const required = Array.isArray(schema.required) ? schema.required.map(String) : []
      const out: Record<string, Json> = {}
      let ok = true
      for (const key of required) {
        const made = makeValue(doc, props[key] ?? {}, key, tag, refs, depth + 1)
        out[key] = made.value
        ok &&= made.ok
      }
      return { value: out, ok: ok && isObject(out) }
    }
  }
}
