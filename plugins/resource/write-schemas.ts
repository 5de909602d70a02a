import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { Ajv, type ValidateFunction } from 'ajv'
import addStandardFormats from 'ajv-formats'
import { addConventionFormats } from '../../schemas/formats.js'
import { unwrapNullable } from '../../store/table/index.js'
import { refusingNul } from '../validation/index.js'
import { compiledOnce } from '../shared/compiled-once.js'

type Json = Record<string, unknown>

/** A plain JSON copy of a schema: TypeBox's symbols (Kind, Optional) are left behind. */
function plain (schema: unknown): Json {
  return Object.fromEntries(Object.entries(schema as Json))
}

/** Whether the API may hold `null` in this field. */
export function isNullable (schema: TSchema): boolean {
  return unwrapNullable(schema).nullable
}

/** Whether a write may leave the field out: it then gets its default, or null. */
export function isOmittable (schema: TSchema): boolean {
  return (schema as Json).default !== undefined || isNullable(schema)
}

/**
 * A schema as a write may send it: inside objects, a member that has a default or may be
 * null may be left out (it is filled on the way in), so only the others are required.
 * Responses keep the full schema: every member present, null written as null.
 */
export function writeForm (schema: TSchema | Json): Json {
  const out = plain(schema)
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as Json[]).map(writeForm)
  if (out.properties !== undefined) {
    const props: Record<string, unknown> = {}
    const required: string[] = []
    for (const [k, s] of Object.entries(out.properties as Json)) {
      props[k] = writeForm(s as Json)
      if (!isOmittable(s as TSchema)) required.push(k)
    }
    out.properties = props
    out.required = required
    // Strict in what it consumes (conventions: Serialization rules): unknown members are refused.
    out.additionalProperties ??= false
  }
  if (out.items !== undefined && !Array.isArray(out.items)) out.items = writeForm(out.items as Json)
  return out
}

function objectSchema (properties: Record<string, unknown>, required: string[], options: Json = {}): TObject {
  return Type.Unsafe({ ...options, type: 'object', properties, required, additionalProperties: false }) as unknown as TObject
}

/**
 * The body of POST and PUT: the writable fields, required unless they have a default or
 * may be null; anything else in the body (read-only fields included) is refused.
 * `optional` names fields a route fills itself (the parent's id on a child collection).
 */
export function createBody (fields: Readonly<Record<string, TSchema>>, writable: readonly string[], optional: readonly string[] = [], extra: Record<string, TSchema> = {}): TObject {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const f of writable) {
    const s = fields[f] as TSchema
    properties[f] = writeForm(s)
    if (!isOmittable(s) && !optional.includes(f)) required.push(f)
  }
  for (const [k, s] of Object.entries(extra)) properties[k] = plain(s)
  return objectSchema(properties, required)
}

/**
 * A field as a JSON Merge Patch may send it (RFC 7396): a value, where an object may be
 * partial, each member again patchable, and an array replaces the whole array, so it keeps
 * its item schema. `null` removes the field, which the write then fills with its default or
 * null: only a field a write may leave out (`isOmittable`) may be sent as null; a required
 * one would be missing after the merge, refused with INPUT_NULL. Defaults are dropped: an
 * omitted member means "unchanged".
 */
export function patchable (schema: TSchema | Json): Json {
  const { base } = unwrapNullable(schema as TSchema)
  // An array replaces the whole array: its items are written as in a POST.
  const out = writeForm(base)
  delete out.default
  if (out.type === 'object' && out.properties !== undefined) {
    const props: Record<string, unknown> = {}
    for (const [k, s] of Object.entries(out.properties as Json)) props[k] = patchable(s as Json)
    out.properties = props
    delete out.required
    out.additionalProperties ??= false
  }
  if (!isOmittable(schema as TSchema)) return out
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null']
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null]
    return out
  }
  return { anyOf: [out, { type: 'null' }] }
}

/** The body of PATCH: every writable field optional and patchable, nothing else. */
export function patchBody (fields: Readonly<Record<string, TSchema>>, writable: readonly string[]): TObject {
  const properties: Record<string, unknown> = {}
  for (const f of writable) properties[f] = patchable(fields[f] as TSchema)
  return objectSchema(properties, [], { minProperties: 0 })
}

/** Fills what a write left out: a default (copied), else null where null is allowed; nested objects too. */
export type Filler = (value: Json) => Json

/** A maker of fresh copies of a default: each write gets its own (`[]`, `{}` made without structuredClone). */
function copier (value: unknown): () => unknown {
  if (typeof value !== 'object' || value === null) return () => value
  if (Array.isArray(value) && value.length === 0) return () => []
  if (!Array.isArray(value) && Object.keys(value).length === 0) return () => ({})
  return () => structuredClone(value)
}

function valueFiller (schema: Json): ((v: unknown) => unknown) | null {
  const { base } = unwrapNullable(schema as TSchema)
  if (base.type === 'object' && base.properties !== undefined) {
    const fill = fillerOf(base.properties as Record<string, TSchema>)
    return (v) => typeof v === 'object' && v !== null && !Array.isArray(v) ? fill(v as Json) : v
  }
  if (base.type === 'array' && base.items !== undefined) {
    const item = valueFiller(base.items as Json)
    if (item === null) return null
    return (v) => Array.isArray(v) ? v.map(item) : v
  }
  return null
}

/**
 * Compiles a filler for an object's properties once; the per-request work is a loop. `present`:
 * the properties the value names are filled inside (a merge patch's whole fields), the others
 * left out.
 */
export function fillerOf (properties: Readonly<Record<string, TSchema>>, present = false): Filler {
  const steps = Object.entries(properties).map(([key, s]) => {
    const json = s as Json
    return { key, hasDefault: json.default !== undefined, copy: copier(json.default), nullable: isNullable(s), nested: valueFiller(json) }
  })
  const known = new Set(steps.map(st => st.key))
  // A new object with the fields in the schema's order: every write's values share one shape,
  // where filling the caller's object in place gave each a shape of its own.
  return (value) => {
    const out: Json = {}
    for (const st of steps) {
      let v = value[st.key]
      if (v === undefined) {
        if (present) continue
        if (st.hasDefault) v = st.copy()
        else if (st.nullable) v = null
        else continue
      }
      out[st.key] = st.nested !== null && v !== null ? st.nested(v) : v
    }
    for (const key in value) if (!known.has(key)) out[key] = value[key]
    return out
  }
}

/** One Ajv for the body validators of the process; bulk and the item routes ask for the same entity schemas. */
let compileBody: ((schema: object) => ValidateFunction) | undefined

function bodyCompiler (): (schema: object) => ValidateFunction {
  const ajv = addConventionFormats(addStandardFormats.default(new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: false,
    verbose: true,
    strict: false,
    coerceTypes: false,
    // As the validation plugin's: a shorter start, nothing measurable lost per request.
    code: { optimize: false }
  })))
  return compiledOnce((schema) => ajv.compile(schema))
}

/**
 * Validates a merged PATCH result like a route body: the validation plugin's strict
 * choices (no coercion, every error, unknown properties refused) and the convention's
 * formats. Compiled once per definition, at registration.
 */
export function compileBodyValidator (schema: TSchema, nulScope?: (data: unknown) => unknown): ValidateFunction {
  compileBody ??= bodyCompiler()
  // U+0000 refused like a schema violation: the store cannot hold it (validation/nul.ts).
  return refusingNul(compileBody(schema as object), nulScope)
}
