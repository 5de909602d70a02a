// What the check reads from the service's OpenAPI document: the collections, what each offers
// (search, bulk, offset paging, filters, ordering), and the schemas to build entities from.
// Nothing here trusts the document's shape: a missing part is a feature not offered.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type Schema = Record<string, unknown>

export interface Collection {
  /** `/v1/authors`, relative to the base URL. */
  path: string
  /** `/v1/authors/{authorId}`, or null when the document has no item path. */
  itemPath: string | null
  /** The last segment, `authors`; its singular names references to it (`authorId`). */
  name: string
  singular: string
  /** The POST body's schema, or null when it offers no create. */
  create: Schema | null
  /** The item PUT body's schema, or null. */
  replace: Schema | null
  patch: boolean
  /** The media type of a PATCH on an item: JSON Merge Patch, unless the document lists only `application/json`. */
  patchType: string
  delete: boolean
  /** PATCH on the collection: the bulk endpoint. */
  bulk: boolean
  /** The bulk body's `operations.maxItems`, or null when the document states none (the convention's default is 100). */
  bulkMax: number | null
  /** POST `<collection>/search`. */
  search: boolean
  /** Offset paging offered; null when not known (no document). */
  offset: boolean | null
  /** A FIQL `filter` parameter; null when not known. */
  fiql: boolean | null
  /** Simple filter parameters: the names of the GET's query parameters that are attributes. */
  simpleFilters: Array<{ name: string, schema: Schema }>
  /** Sort keys the `ordering` parameter takes (without `-`). */
  ordering: string[]
  /** Item properties the document types as a decimal or a 64-bit integer (strings by the convention). */
  numericStrings: string[]
}

export interface ServiceModel {
  /** Where the document came from, or null when there is none. */
  documentSource: string | null
  collections: Collection[]
  /** Paths the document lists without a GET (a safe 405 probe: GET changes nothing). */
  pathsWithoutGet: string[]
}

const PAGING_PARAMS = new Set(['limit', 'offset', 'cursor', 'filter', 'ordering', 'totalCount'])
const MERGE_PATCH = 'application/merge-patch+json'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The node a local `$ref` (`#/a/b`) points at, or undefined. */
export function pointer (doc: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = doc
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isObject(node)) return undefined
    node = node[key]
  }
  return node
}

/**
 * A schema with its `$ref`s followed (siblings of a `$ref` kept, OpenAPI 3.1) and `allOf` merged.
 * Each `$ref` is expanded once per call (`expanded`): a document's schemas may refer to
 * themselves, and `{allOf: [Node, Node, …]}` in Node would otherwise take exponential time. A
 * `$ref` met again while it is being expanded stands for nothing.
 */
export function resolve (doc: Record<string, unknown>, schema: unknown, depth = 0, expanded = new Map<string, Schema | null>()): Schema {
  if (!isObject(schema) || depth > 20) return {}
  let out: Schema = { ...schema }
  if (typeof out.$ref === 'string') {
    const target = refTarget(doc, out.$ref, depth, expanded)
    const { $ref: _ref, ...siblings } = out
    out = { ...target, ...siblings }
  }
  if (Array.isArray(out.allOf)) {
    const parts = out.allOf.map(s => resolve(doc, s, depth + 1, expanded))
    const { allOf: _allOf, ...rest } = out
    out = rest
    for (const part of parts) {
      out = {
        ...part,
        ...out,
        properties: { ...(part.properties as object), ...(out.properties as object) },
        required: [...(Array.isArray(part.required) ? part.required : []), ...(Array.isArray(out.required) ? out.required : [])]
      }
    }
  }
  return out
}

/** The schema a `$ref` points at, resolved once per call to resolve(); null marks one in progress. */
function refTarget (doc: Record<string, unknown>, ref: string, depth: number, expanded: Map<string, Schema | null>): Schema {
  const known = expanded.get(ref)
  if (known !== undefined) return known ?? {}
  expanded.set(ref, null)
  const target = resolve(doc, pointer(doc, ref), depth + 1, expanded)
  expanded.set(ref, target)
  return target
}

/** The schema's properties, each resolved. */
export function propertiesOf (doc: Record<string, unknown>, schema: Schema): Record<string, Schema> {
  const out: Record<string, Schema> = {}
  if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) out[k] = resolve(doc, v)
  return out
}

function operation (doc: Record<string, unknown>, pathItem: unknown, method: string): Record<string, unknown> | null {
  if (!isObject(pathItem)) return null
  const op = pathItem[method]
  return isObject(op) ? op : null
}

function bodySchema (doc: Record<string, unknown>, op: Record<string, unknown> | null): Schema | null {
  if (op === null) return null
  const body = resolve(doc, op.requestBody)
  const content = isObject(body.content) ? body.content : {}
  const json = Object.entries(content).find(([type]) => /json/.test(type))
  return json === undefined ? null : resolve(doc, (json[1] as { schema?: unknown }).schema)
}

function parametersOf (doc: Record<string, unknown>, pathItem: unknown, op: Record<string, unknown> | null): Schema[] {
  const shared = isObject(pathItem) && Array.isArray(pathItem.parameters) ? pathItem.parameters : []
  const own = op !== null && Array.isArray(op.parameters) ? op.parameters : []
  return [...shared, ...own].map(p => resolve(doc, p))
}

/** The media type a PATCH takes: JSON Merge Patch unless the document lists only `application/json` for it. */
function patchTypeOf (doc: Record<string, unknown>, op: Record<string, unknown> | null): string {
  const body = op === null ? {} : resolve(doc, op.requestBody)
  const types = (isObject(body.content) ? Object.keys(body.content) : []).map(t => (t.split(';')[0] as string).trim().toLowerCase())
  return types.includes('application/json') && !types.includes(MERGE_PATCH) ? 'application/json' : MERGE_PATCH
}

/** The item schema of a collection GET's 200 answer (`results.items`), resolved. */
function itemSchema (doc: Record<string, unknown>, op: Record<string, unknown> | null): Schema | null {
  if (op === null || !isObject(op.responses)) return null
  const ok = resolve(doc, op.responses['200'])
  const content = isObject(ok.content) ? ok.content : {}
  const json = Object.entries(content).find(([type]) => /json/.test(type))
  if (json === undefined) return null
  const page = resolve(doc, (json[1] as { schema?: unknown }).schema)
  const results = propertiesOf(doc, page).results
  return results === undefined ? null : resolve(doc, results.items)
}

/** The maximum number of operations a bulk body schema states, or null. */
function bulkMaxOf (doc: Record<string, unknown>, body: Schema | null): number | null {
  const max = body === null ? undefined : resolve(doc, propertiesOf(doc, body).operations).maxItems
  return typeof max === 'number' && Number.isInteger(max) && max >= 0 ? max : null
}

/** Naive English singular of a path segment (`authors` → `author`, `categories` → `category`). */
export function singularOf (name: string): string {
  const camel = name.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
  if (camel.endsWith('ies')) return camel.slice(0, -3) + 'y'
  if (/(ss|sh|ch|x)es$/.test(camel)) return camel.slice(0, -2)
  return camel.endsWith('s') ? camel.slice(0, -1) : camel
}

/** The collections of a document: top-level paths (no parameter) whose GET answers a page of results. */
export function modelOf (doc: Record<string, unknown>, source: string): ServiceModel {
  const paths = isObject(doc.paths) ? doc.paths : {}
  const collections: Collection[] = []
  const pathsWithoutGet: string[] = []
  for (const [path, item] of Object.entries(paths)) {
    // A path is joined to the base URL's origin: one that does not begin with / is no path.
    if (!path.startsWith('/')) continue
    if (operation(doc, item, 'get') === null && !path.includes('{')) pathsWithoutGet.push(path)
    if (path.includes('{') || path.startsWith('/_')) continue
    const get = operation(doc, item, 'get')
    const items = itemSchema(doc, get)
    if (items === null) continue
    const itemPath = Object.keys(paths).find(p => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&')}/\\{[^}/]+\\}$`).test(p)) ?? null
    const itemOps = itemPath === null ? null : paths[itemPath]
    const params = parametersOf(doc, item, get).filter(p => p.in === 'query')
    const names = new Set(params.map(p => String(p.name)))
    const itemProps = propertiesOf(doc, items)
    const orderingParam = params.find(p => p.name === 'ordering')
    const orderingSchema = orderingParam === undefined ? {} : resolve(doc, orderingParam.schema)
    const keys = resolve(doc, orderingSchema.type === 'array' ? orderingSchema.items : orderingSchema).enum
    const name = path.split('/').filter(Boolean).pop() ?? path
    collections.push({
      path,
      itemPath,
      name,
      singular: singularOf(name),
      create: bodySchema(doc, operation(doc, item, 'post')),
      replace: bodySchema(doc, operation(doc, itemOps, 'put')),
      patch: operation(doc, itemOps, 'patch') !== null,
      patchType: patchTypeOf(doc, operation(doc, itemOps, 'patch')),
      delete: operation(doc, itemOps, 'delete') !== null,
      bulk: operation(doc, item, 'patch') !== null,
      bulkMax: bulkMaxOf(doc, bodySchema(doc, operation(doc, item, 'patch'))),
      search: operation(doc, paths[`${path}/search`], 'post') !== null,
      offset: names.has('offset'),
      fiql: names.has('filter'),
      simpleFilters: params.filter(p => !PAGING_PARAMS.has(String(p.name)) && !String(p.name).endsWith('Filter') && String(p.name) in itemProps)
        .map(p => ({ name: String(p.name), schema: resolve(doc, p.schema) })),
      ordering: Array.isArray(keys) ? [...new Set(keys.map(k => String(k).replace(/^-/, '')))] : [],
      numericStrings: Object.entries(itemProps).filter(([, s]) => s.format === 'decimal' || s.format === 'int64').map(([k]) => k)
    })
  }
  return { documentSource: source, collections, pathsWithoutGet }
}

/** A collection known only by its path (`--collection`): what it offers is found by asking. */
export function bareCollection (path: string): Collection {
  const name = path.split('/').filter(Boolean).pop() ?? path
  return { path, itemPath: null, name, singular: singularOf(name), create: null, replace: null, patch: false, patchType: MERGE_PATCH, delete: false, bulk: false, bulkMax: null, search: false, offset: null, fiql: null, simpleFilters: [], ordering: [], numericStrings: [] }
}
