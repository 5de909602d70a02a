import { STATUS_CODES } from 'node:http'
import { formatPattern } from '../../schemas/patterns.js'
import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { canonical, canonicalTexts } from './components.js'

/*
 * Rewrites that keep the document small and readable once every operation is in it
 * (OpenAPI 3.1 §4.8.7, Components): a schema repeated in the document is written once, in
 * `components.schemas`, and referred to elsewhere; a parameter, request body or response
 * repeated across operations becomes a component too. Header names are written in their
 * usual case (`ETag`, `X-Request-ID`): HTTP compares them case-insensitively, readers do not.
 */

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options']

// Header names whose usual spelling is not one capital per word (RFC 9110, RFC 6585, IETF RateLimit fields).
const SPELLED: Record<string, string> = { etag: 'ETag', 'www-authenticate': 'WWW-Authenticate', 'x-request-id': 'X-Request-ID' }

/**
 * `svc-execution-context` → `Svc-Execution-Context`, `etag` → `ETag`. Standard Webhooks'
 * headers (`webhook-id`) are spelled in lower case by their specification, and stay so.
 */
export function headerCase (name: string): string {
  const lower = name.toLowerCase()
  if (lower.startsWith('webhook-')) return lower
  const known = SPELLED[lower]
  if (known !== undefined) return known
  return lower.split('-').map(w => w === 'ratelimit' ? 'RateLimit' : w.charAt(0).toUpperCase() + w.slice(1)).join('-')
}

/** The operations of `paths`, every method of every path item. */
export function operations (paths: Json): Json[] {
  return Object.values(paths).flatMap(item => METHODS.map(m => (item as Json)[m]).filter(isObject))
}

/** Header parameters and response headers of `paths`, renamed to their usual case in place. */
export function caseHeaders (paths: Json): void {
  for (const op of operations(paths)) {
    for (const p of (op.parameters ?? []) as Json[]) if (p.in === 'header') p.name = headerCase(String(p.name))
    for (const r of Object.values(op.responses as Record<string, Json>)) {
      if (r.headers !== undefined) r.headers = Object.fromEntries(Object.entries(r.headers as Json).map(([k, v]) => [headerCase(k), v]))
    }
  }
}

/** Drops `required: false` from the parameters of `paths`, in place: it is the default (OpenAPI 3.1 §4.8.12.2). */
export function omitDefaults (paths: Json): void {
  const all = [...operations(paths), ...Object.values(paths) as Json[]].flatMap(op => (op.parameters ?? []) as Json[])
  for (const p of all) if (p.required === false) delete p.required
}

/**
 * A response's or request body's schema whose description repeats the response's (as
 * @fastify/swagger copies it there) loses its own, in place: readers see it once, above the body.
 */
export function omitEchoedDescriptions (paths: Json): void {
  for (const op of operations(paths)) {
    const holders = [op.requestBody, ...Object.values(op.responses as Json)].filter(isObject)
    for (const holder of holders) {
      for (const media of Object.values((holder.content ?? {}) as Json)) {
        const schema = (media as Json).schema
        if (isObject(schema) && schema.description !== undefined && schema.description === holder.description) delete schema.description
      }
    }
  }
}

/**
 * The path and header parameters every operation of a path takes alike (`{authorId}`, a
 * header a route requires) are stated once, as the path's parameters (OpenAPI 3.1 §4.8.9.1:
 * they apply to every operation under it, and declare the path's template variables), in place.
 */
export function hoistCommonParameters (paths: Json): void {
  for (const item of Object.values(paths) as Json[]) {
    const ops = METHODS.map(m => item[m]).filter(isObject)
    const hoistable = (op: Json): Json[] => ((op.parameters ?? []) as Json[]).filter(p => p.in === 'header' || p.in === 'path')
    const texts = ops.map(op => new Set(hoistable(op).map(canonical)))
    const common = hoistable(ops[0] as Json).filter(p => texts.every(t => t.has(canonical(p))))
    if (common.length === 0) continue
    const hoisted = new Set(common.map(canonical))
    for (const op of ops) {
      const own = (op.parameters as Json[]).filter(p => !hoisted.has(canonical(p)))
      if (own.length > 0) op.parameters = own
      else delete op.parameters
    }
    item.parameters = [...item.parameters as Json[] ?? [], ...common]
  }
}

// Data, never schemas; and maps of schemas by name, whose values are schemas but not the map itself.
const DATA = new Set(['example', 'examples', 'const', 'enum', 'default'])
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas'])
// A repeat becomes a reference (`{"$ref":"…"}`) only when that is clearly shorter: a schema
// about the size of its reference reads better where it is.
const REF_COST = '{"$ref":""}'.length + 20

const pointer = (parts: readonly string[]): string => '#/' + parts.map(p => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** Calls `visit` on every schema under `schema` (itself first), depth first, with its location. */
function walkSchema (schema: unknown, at: string[], visit: (node: Json, at: string[]) => Json | undefined): unknown {
  if (!isObject(schema)) return schema
  const replaced = visit(schema, at)
  if (replaced !== undefined) return replaced
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (DATA.has(key)) out[key] = value
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walkSchema(v, [...at, key, k], visit)]))
    else if (Array.isArray(value)) out[key] = value.map((v, i) => walkSchema(v, [...at, key, String(i)], visit))
    else out[key] = walkSchema(value, [...at, key], visit)
  }
  return out
}

/** Walks the schemas of `paths`: those under a `schema` key of a parameter, a body, a response or a header. */
function walkPaths (node: unknown, visit: (node: Json, at: string[]) => Json | undefined): unknown {
  if (Array.isArray(node)) return node.map(n => walkPaths(n, visit))
  if (!isObject(node)) return node
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'schema' ? walkSchema(v, [], visit) : walkPaths(v, visit)]))
}

/**
 * Every schema of the document that repeats one of `components.schemas` (a whole component,
 * or a part of one such as a property) becomes a `$ref` to that first place: the write bodies
 * refer to the entity's properties, a filter to its field's schema. Returns a copy.
 */
export function shareSchemas (doc: Json): Json {
  const components = doc.components as Json
  const schemas = (components.schemas ?? {}) as Json
  const first = new Map<string, string>()
  // The same places by their text without `required`: a schema that only requires more (a bulk
  // UPDATE's entity, the replacement body with its id required) refers to one and adds its list.
  const loose = new Map<string, { at: string, required: unknown[] }>()
  // The walks below copy; nothing they read is changed, so each node's text is made once.
  const canonicalOf = canonicalTexts()
  const withoutRequired = (node: Json): string => canonicalOf(node, ['required'])
  for (const [name, schema] of Object.entries(schemas)) {
    walkSchema(schema, ['components', 'schemas', name], (node, at) => {
      const text = canonicalOf(node)
      if (text.length < pointer(at).length + REF_COST) return undefined
      if (!first.has(text)) first.set(text, pointer(at))
      const key = withoutRequired(node)
      if (!loose.has(key)) loose.set(key, { at: pointer(at), required: Array.isArray(node.required) ? node.required : [] })
      return undefined
    })
  }
  const refer = (node: Json, at: string[]): Json | undefined => {
    const here = pointer(at)
    const target = first.get(canonicalOf(node))
    if (target !== undefined && target !== here) return { $ref: target }
    if (!Array.isArray(node.required)) return undefined
    const required = node.required
    const wider = loose.get(withoutRequired(node))
    // Sibling keywords of a `$ref` apply too (JSON Schema 2020-12): the two `required` lists add up to this one.
    if (wider === undefined || wider.at === here || !wider.required.every(r => required.includes(r))) return undefined
    return { $ref: wider.at, required }
  }
  const shared = Object.fromEntries(Object.entries(schemas).map(([name, s]) => [name, walkSchema(s, ['components', 'schemas', name], refer)]))
  return { ...doc, paths: walkPaths(doc.paths, (node) => refer(node, ['paths'])), components: { ...components, schemas: shared } }
}

/** A problem answer: a problem body (RFC 9457), and nothing else. */
export const isProblem = (r: Json): boolean => isObject(r.content) && Object.keys(r.content).join() === PROBLEM_MEDIA_TYPE

const pascal = (text: string): string =>
  text.split(/[^A-Za-z0-9]+/).filter(w => w !== '').map(w => w.charAt(0).toUpperCase() + w.slice(1)).join('')

/**
 * Names each object that `found` holds more than once, by its canonical text: the first
 * name proposed for it, numbered when another shape took that name already (`BadRequest2`).
 */
function nameRepeated (found: Array<[string, unknown]>, taken: Set<string>): Map<string, string> {
  const counts = new Map<string, { name: string, n: number }>()
  for (const [name, value] of found) {
    const text = canonical(value)
    const c = counts.get(text)
    if (c === undefined) counts.set(text, { name, n: 1 })
    else c.n++
  }
  const names = new Map<string, string>()
  for (const [text, { name, n }] of counts) {
    if (n < 2) continue
    let unique = name
    for (let k = 2; taken.has(unique); k++) unique = `${name}${k}`
    taken.add(unique)
    names.set(text, unique)
  }
  return names
}

/** The component's name of a parameter: `X-Request-ID` → `XRequestID`, `metadata.source.system` → `MetadataSourceSystem`. */
const parameterName = (p: Json): string => pascal(String(p.name))

/**
 * Parameters, request bodies and responses repeated across operations (a page's parameters
 * on GET and HEAD, a problem answered the same way by many operations) become
 * `components.parameters`, `components.requestBodies` and `components.responses`, each with
 * the response headers it holds as `components.headers`. An object used once stays where it is.
 */
export function shareRepeated (doc: Json): Json {
  const paths = structuredClone(doc.paths as Json)
  // A path's own parameters (hoisted headers) are shared like an operation's.
  const ops = operations(paths)
  const withParameters = [...ops, ...(Object.values(paths) as Json[]).filter(item => item.parameters !== undefined)]
  const responses = ops.flatMap(op => Object.values(op.responses as Record<string, Json>))

  // Headers first: the responses are then compared with their headers as references.
  const headerNames = nameRepeated(responses.flatMap(r => Object.entries((r.headers ?? {}) as Json).map(([k, v]) => [pascal(k), v] as [string, unknown])), new Set())
  const headers: Json = {}
  for (const r of responses) {
    for (const [key, value] of Object.entries((r.headers ?? {}) as Json)) {
      const name = headerNames.get(canonical(value))
      if (name === undefined) continue
      headers[name] = value
      ;(r.headers as Json)[key] = { $ref: `#/components/headers/${name}` }
    }
  }

  const parameterNames = nameRepeated(withParameters.flatMap(op => ((op.parameters ?? []) as Json[]).map(p => [parameterName(p), p] as [string, unknown])), new Set())
  const parameters: Json = {}
  for (const op of withParameters) {
    if (op.parameters === undefined) continue
    op.parameters = (op.parameters as Json[]).map(p => {
      const name = parameterNames.get(canonical(p))
      if (name === undefined) return p
      parameters[name] = p
      return { $ref: `#/components/parameters/${name}` }
    })
  }

  const bodyNames = nameRepeated(ops.filter(op => op.requestBody !== undefined).map(op => [`${pascal(String(op.operationId))}Body`, op.requestBody]), new Set())
  const requestBodies: Json = {}
  for (const op of ops) {
    const name = op.requestBody === undefined ? undefined : bodyNames.get(canonical(op.requestBody))
    if (name === undefined) continue
    requestBodies[name] = op.requestBody
    op.requestBody = { $ref: `#/components/requestBodies/${name}` }
  }

  // Responses are named by status (`NoContent`, `Conflict`: a problem answer of one status,
  // with its example, operation.ts), short, for a reference is written at every use; numbered
  // per other shape (another set of headers). The `default` that stands for several problem
  // statuses is `Problem`; an OPTIONS operation's answers differ from the others' (no token,
  // no rate limit): `OptionsNoContent`.
  const optionsOps = new Set((Object.values(paths) as Json[]).map(item => item.options))
  const responseName = (op: Json, status: string, r: Json): string =>
    isProblem(r) && status === 'default' ? 'Problem' : (optionsOps.has(op) && !isProblem(r) ? 'Options' : '') + pascal(STATUS_CODES[status] ?? String(r.description))
  const responseNames = nameRepeated(ops.flatMap(op => Object.entries(op.responses as Record<string, Json>).map(([status, r]) => [responseName(op, status, r), r] as [string, unknown])), new Set())
  const shared: Json = {}
  for (const op of ops) {
    const own = op.responses as Json
    for (const [status, r] of Object.entries(own)) {
      const name = responseNames.get(canonical(r))
      if (name === undefined) continue
      shared[name] = r
      own[status] = { $ref: `#/components/responses/${name}` }
    }
  }

  const components = doc.components as Json
  const out: Json = { ...components }
  for (const [key, value] of Object.entries({ parameters, requestBodies, responses: shared, headers })) {
    if (Object.keys(value).length > 0) out[key] = value
  }
  return { ...doc, paths, components: out }
}

/**
 * A titled schema names its shape (the query plugin's filter values, `DateTimeFilterQuery`;
 * a bulk request, `DocumentBulkRequest`; a job, `Job`): it becomes the component of that name,
 * each place keeping its own description beside the `$ref`. A titled component is that shape's
 * component already; a title taken by another shape is numbered (`Job2`). Returns a copy.
 */
export function shareTitled (doc: Json): Json {
  const canonicalOf = canonicalTexts()
  const shapeOf = (node: Json): string => canonicalOf(node, ['description'])
  const components = doc.components as Json
  const schemas = (components.schemas ?? {}) as Json
  const names = new Map<string, string>()
  const taken = new Set(Object.keys(schemas))
  for (const [name, s] of Object.entries(schemas)) if (isObject(s) && typeof s.title === 'string') names.set(shapeOf(s), name)
  const added: Json = {}
  const name = (node: Json): undefined => {
    if (typeof node.title !== 'string' || names.has(shapeOf(node))) return undefined
    let unique = node.title
    for (let k = 2; taken.has(unique); k++) unique = `${node.title}${k}`
    taken.add(unique)
    names.set(shapeOf(node), unique)
    const { description: _d, ...rest } = node
    added[unique] = rest
    return undefined
  }
  walkPaths(doc.paths, name)
  for (const s of Object.values(schemas)) walkSchema(s, [], name)
  const refer = (node: Json, at: string[]): Json | undefined => {
    const target = typeof node.title === 'string' ? names.get(shapeOf(node)) : undefined
    // A component's own root, and the root of a titled schema being hoisted, stay whole.
    if (target === undefined || at.length === 0) return undefined
    return node.description === undefined ? { $ref: `#/components/schemas/${target}` } : { $ref: `#/components/schemas/${target}`, description: node.description }
  }
  const inPaths = (node: Json, at: string[]): Json | undefined => refer(node, ['paths', ...at])
  const shared = Object.fromEntries(Object.entries({ ...schemas, ...added }).map(([n, s]) => [n, walkSchema(s, [], refer)]))
  return { ...doc, paths: walkPaths(doc.paths, inPaths), components: { ...components, schemas: shared } }
}

/**
 * The convention's formats whose values bound their own length, by the name of their
 * component; the others (a decimal, a duration) take a `maxLength` per place, so they stay there.
 */
const FORMAT_COMPONENTS: Record<string, string> = { 'date-time': 'DateTime', date: 'Date', int64: 'Int64' }

/**
 * The convention's formats as components (`DateTime`: the type, the format and its pattern),
 * each place of a plain string of that format referring to it and keeping its own keywords
 * (`maxLength`, a description); a place that also admits null refers to `NullableDateTime`. A
 * place whose pattern carries its own bounds (a decimal with a minimum) keeps its schema. Returns a copy.
 */
export function shareFormats (doc: Json): Json {
  const added: Json = {}
  const refer = (node: Json): Json | undefined => {
    const base = typeof node.format === 'string' ? FORMAT_COMPONENTS[node.format] : undefined
    const nullable = canonical(node.type) === canonical(['string', 'null'])
    if (base === undefined || (node.type !== 'string' && !nullable)) return undefined
    const plain = formatPattern({ type: 'string', format: node.format }) as { pattern: string }
    if (node.pattern !== plain.pattern) return undefined
    const { type, format, pattern, ...rest } = node
    // A nullable place refers to a nullable component: a `$ref` to `DateTime` would refuse its null.
    const name = nullable ? `Nullable${base}` : base
    added[name] = { type, format, pattern }
    return { $ref: `#/components/schemas/${name}`, ...rest }
  }
  const components = doc.components as Json
  const schemas = Object.fromEntries(Object.entries((components.schemas ?? {}) as Json).map(([name, s]) => [name, walkSchema(s, [], refer)]))
  return { ...doc, paths: walkPaths(doc.paths, refer), components: { ...components, schemas: { ...schemas, ...added } } }
}

// What a nullable copy of a component may add or change: its type admits null, and it tells its own place.
const OWN = ['type', 'description', 'examples', 'title', '$id']

/**
 * A schema that is a component admitting null too (a job's `problem`: a Problem, or null)
 * refers to it: `anyOf` the component and null, with its own description. Returns a copy.
 */
export function shareNullable (doc: Json): Json {
  const components = doc.components as Json
  const schemas = (components.schemas ?? {}) as Json
  const shapeOf = canonicalTexts()
  const byShape = new Map<string, string>()
  for (const [name, s] of Object.entries(schemas)) {
    if (isObject(s) && typeof s.type === 'string') byShape.set(`${s.type}:${shapeOf(s, OWN)}`, name)
  }
  const refer = (node: Json, at: string[]): Json | undefined => {
    const type = node.type
    if (at.length === 0 || !Array.isArray(type) || type.length !== 2 || type[1] !== 'null') return undefined
    const name = byShape.get(`${String(type[0])}:${shapeOf(node, OWN)}`)
    if (name === undefined) return undefined
    return { anyOf: [{ $ref: `#/components/schemas/${name}` }, { type: 'null' }], ...(node.description === undefined ? {} : { description: node.description }) }
  }
  const shared = Object.fromEntries(Object.entries(schemas).map(([n, s]) => [n, walkSchema(s, [], refer)]))
  return { ...doc, paths: walkPaths(doc.paths, (node, at) => refer(node, ['paths', ...at])), components: { ...components, schemas: shared } }
}
