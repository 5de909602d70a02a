/**
 * Shared schemas as components (OpenAPI 3.1 §4.8.7): every copy of a named schema in the
 * document becomes a `$ref` to `#/components/schemas/<name>`, so clients generate one type
 * per shape. Routes keep their inline schemas (validation and serialization are untouched);
 * only the document is rewritten, once, when it is built.
 */

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** JSON with sorted keys: two copies of a schema give the same text. */
export function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (!isObject(value)) return JSON.stringify(value)
  const keys = Object.keys(value).filter(k => value[k] !== undefined).sort()
  return `{${keys.map(k => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
}

/**
 * `canonical` for a pass that reads a tree without changing it: each object's text is made
 * once and remembered, so asking for a node and then for its parts costs no more than the node.
 * `omit` leaves keys of the node itself out (its parts keep theirs).
 */
export function canonicalTexts (): (value: unknown, omit?: readonly string[]) => string {
  const known = new WeakMap<object, string>()
  const text = (value: unknown, omit?: readonly string[]): string => {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value)
    const remembered = omit === undefined ? known.get(value) : undefined
    if (remembered !== undefined) return remembered
    let out: string
    if (Array.isArray(value)) {
      out = `[${value.map(v => text(v)).join(',')}]`
    } else {
      const node = value as Json
      const keys = Object.keys(node).filter(k => node[k] !== undefined && omit?.includes(k) !== true).sort()
      out = `{${keys.map(k => `${JSON.stringify(k)}:${text(node[k])}`).join(',')}}`
    }
    if (omit === undefined) known.set(value, out)
    return out
  }
  return text
}

/** What identifies a shape: its text without `$id` and the examples a component adds to it. */
const SHAPE_OMITS = ['$id', 'examples']

/** Replaces, top-down, every object equal to a component by its `$ref`; `skipRoot` keeps a component's own root. */
function replace (node: unknown, byText: Map<string, string>, skipRoot: boolean, text: ReturnType<typeof canonicalTexts>): unknown {
  if (Array.isArray(node)) return node.map(n => replace(n, byText, false, text))
  if (!isObject(node)) return node
  if (!skipRoot) {
    const name = byText.get(text(node, SHAPE_OMITS))
    if (name !== undefined) return { $ref: `#/components/schemas/${name}` }
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v, byText, false, text)]))
}

/** Adds `components` to the document (plain JSON, as @fastify/swagger builds it) and points every copy at them. */
export function shareComponents (doc: Json, components: Record<string, unknown>): Json {
  const byText = new Map<string, string>()
  // The document and the components are read, never changed, while they are compared.
  const text = canonicalTexts()
  const shapeOf = (schema: Json): string => text(schema, SHAPE_OMITS)
  const plain: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(components)) {
    // Through JSON: TypeBox's symbol keys and undefined values are not part of the document.
    const json = JSON.parse(JSON.stringify(schema)) as Json
    delete json.$id
    plain[name] = json
    const text = shapeOf(json)
    // A shape under two names keeps the first (e.g. a summary equal to its entity).
    if (!byText.has(text)) byText.set(text, name)
  }
  const shared: Json = {}
  for (const [name, schema] of Object.entries(plain)) {
    if (byText.get(shapeOf(schema as Json)) === name) shared[name] = replace(schema, byText, true, text)
  }
  // @fastify/swagger always writes components.schemas (the plugin adds Problem to it).
  const existing = doc.components as Json
  const schemas = existing.schemas as Json
  return {
    ...doc,
    paths: replace(doc.paths, byText, false, text),
    components: { ...existing, schemas: { ...replace(schemas, byText, true, text) as Json, ...shared } }
  }
}

/**
 * An example entity made of each property's first example, else its default, const or first
 * enum value, else null where null is allowed; a required property with none of these leaves
 * the schema without an example rather than with a wrong one.
 */
export function exampleOf (schema: unknown): unknown {
  if (!isObject(schema)) return undefined
  const examples = schema.examples
  if (Array.isArray(examples) && examples.length > 0) return examples[0]
  if (schema.default !== undefined) return schema.default
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes('object') && isObject(schema.properties)) {
    const out: Json = {}
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
    for (const [k, v] of Object.entries(schema.properties)) {
      const value = exampleOf(v)
      if (value === undefined && required.has(k)) return undefined
      if (value !== undefined) out[k] = value
    }
    return out
  }
  if (types.includes('null')) return null
  const anyOf = Array.isArray(schema.anyOf) ? schema.anyOf : []
  if (anyOf.some(s => isObject(s) && s.type === 'null')) return null
  return plainValue(schema, types)
}

/** Values of the common string formats without examples of their own. */
const FORMAT_EXAMPLES: Record<string, string> = {
  email: 'ann@example.com',
  uri: 'https://example.com/',
  'uri-reference': '/v1/example',
  uuid: '123e4567-e89b-42d3-a456-426614174000',
  'date-time': '2024-05-01T12:00:00.000Z',
  date: '2024-05-01'
}

/** A value of an unconstrained string, number, boolean or array schema; undefined for anything else. */
function plainValue (schema: Json, types: unknown[]): unknown {
  if (types.includes('string') && schema.pattern === undefined && typeof schema.format === 'string') return FORMAT_EXAMPLES[schema.format]
  if (types.includes('string') && schema.pattern === undefined) {
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0
    return 'example'.padEnd(min, 'e').slice(0, typeof schema.maxLength === 'number' ? schema.maxLength : undefined)
  }
  if (types.includes('integer') || types.includes('number')) return typeof schema.minimum === 'number' ? schema.minimum : 0
  if (types.includes('boolean')) return true
  if (types.includes('array') && !((schema.minItems as number) > 0)) return []
  return undefined
}
