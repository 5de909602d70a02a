import type { FastifyRequest } from 'fastify'
import type { FieldMap, OrderingTerm } from '../../model/query.js'
import type { FiqlLimits } from './fiql.js'
import { orderingResolver, type OrderingResolver } from './ordering.js'
import { INT32_MAX } from '../../schemas/types.js'
import { refuseUnknownKeys, shownValue, type OptionKeys } from '../shared/options.js'

/** `routeOptions.config.collection`: the route answers a collection GET, or its POST search. */
export interface CollectionConfig {
  /** The filterable and sortable paths of the items (`createFieldMap`, `fieldsFromSchema`). */
  fields: FieldMap
  /** Page size when the request gives no `limit`. Default: the plugin's `defaultLimit`. */
  defaultLimit?: number
  /** Largest page size; a larger `limit` gets this one (conventions: "Limits"). Default: the plugin's `maxLimit`. */
  maxLimit?: number
  /** Whether offset paging (`offset`, `totalCount`) is offered besides cursor paging. Default true. */
  offset?: boolean
  /**
   * What a cursor must not cross besides filter and ordering: the collection, its parent
   * and the execution context. Default: the route path (without `/search`), the path
   * parameters and `request.executionContext`.
   */
  scope?: (request: FastifyRequest) => string
  /** Ordering when the request gives none; the id always ends it. Default: the id alone. */
  defaultOrdering?: readonly OrderingTerm[]
  /** The unique, non-null identifier path (default `id`). */
  idField?: string
  /** Strong `ETag` over each page (a search's too) and `If-None-Match` → 304 on GET/HEAD. Default true. */
  etag?: boolean
}

const CONFIG_KEYS: OptionKeys<CollectionConfig> = { fields: true, defaultLimit: true, maxLimit: true, offset: true, scope: true, defaultOrdering: true, idField: true, etag: true }

/** What a parameter name is to a collection route. */
export type ParamKind = 'limit' | 'offset' | 'cursor' | 'totalCount' | 'ordering' | 'filter' | 'simple' | 'hybrid'

/** The paging members, in the order links carry them. */
export const PAGING_NAMES = ['limit', 'offset', 'cursor', 'totalCount'] as const

// `paging` holds the paging members of a POST search body.
const RESERVED: ReadonlySet<string> = new Set([...PAGING_NAMES, 'ordering', 'filter', 'paging'])

/** A collection route's configuration, checked and resolved once, when the route is added. */
export interface CollectionRoute {
  readonly fields: FieldMap
  readonly defaultLimit: number
  readonly maxLimit: number
  readonly offset: boolean
  readonly etag: boolean
  readonly limits: Readonly<FiqlLimits>
  readonly ordering: OrderingResolver
  /** Every parameter name the route takes, by kind. */
  readonly names: ReadonlyMap<string, ParamKind>
  /** Sortable paths, for the documentation. */
  readonly sortable: readonly string[]
  /** The route path without `/search`: the GET form of the collection. */
  readonly collectionUrl: string
  readonly scope: (request: FastifyRequest) => string
  /** Fingerprints of this route's queries by scope and spelling (resolve.ts fingerprintOf). */
  readonly fingerprints: Map<string, string>
}

export interface RouteDefaults {
  defaultLimit: number
  maxLimit: number
  limits: Readonly<FiqlLimits>
}

export const SEARCH_SUFFIX = '/search'

/** The path of a collection URL without a trailing `/search` (or `/search/`). */
export function collectionPath (path: string): string {
  const end = path.endsWith('/') ? path.length - 1 : path.length
  return path.endsWith(SEARCH_SUFFIX, end) ? path.slice(0, end - SEARCH_SUFFIX.length) : path
}

/** A page size option: an integer from 1 to 2^31-1 (conventions: "Limits"). */
export function checkLimit (where: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > INT32_MAX) {
    throw new TypeError(`${where}: ${name} must be an integer from 1 to ${INT32_MAX}, got ${shownValue(value)}`)
  }
  return value
}

function defaultScope (collectionUrl: string): (request: FastifyRequest) => string {
  // executionContext is set by the conventions plugin, when it is registered.
  return (request) => `${collectionUrl}\u0000${JSON.stringify(request.params)}\u0000${String((request as { executionContext?: string }).executionContext ?? '')}`
}

/** Every parameter name of the field map: attributes, `<attribute>Filter`, paging, ordering and filter. */
function parameterNames (fields: FieldMap, offset: boolean, where: string): Map<string, ParamKind> {
  const names = new Map<string, ParamKind>()
  for (const name of PAGING_NAMES) if (offset || (name !== 'offset' && name !== 'totalCount')) names.set(name, name)
  names.set('ordering', 'ordering')
  names.set('filter', 'filter')
  for (const field of fields.values()) {
    if (!field.filterable) continue
    if (RESERVED.has(field.path)) throw new TypeError(`${where}: the attribute ${field.path} has the name of a paging or filter parameter and cannot be filtered`)
    names.set(field.path, 'simple')
  }
  // A hybrid filter names a filterable attribute or an object above one (hybrid-filter.ts).
  for (const field of fields.values()) {
    if (!field.filterable) continue
    let end = field.path.length
    while (end > 0) {
      const hybrid = field.path.slice(0, end) + 'Filter'
      if (!names.has(hybrid)) names.set(hybrid, 'hybrid')
      end = field.path.lastIndexOf('.', end - 1)
    }
  }
  return names
}

/** Checks `config.collection` of a route once; throws a TypeError naming the option and its value. */
export function resolveRoute (config: unknown, url: string, where: string, base: RouteDefaults): CollectionRoute {
  if (typeof config !== 'object' || config === null) throw new TypeError(`${where}: config.collection must be an object or false, got ${shownValue(config)}`)
  // Misspelt, a key would be ignored and the plugin's default kept: the opposite of what was asked.
  refuseUnknownKeys(`${where}: `, config, CONFIG_KEYS, 'config.collection.')
  const c = config as Partial<CollectionConfig>
  if (!(c.fields instanceof Map) || c.fields.size === 0) throw new TypeError(`${where}: config.collection.fields must be a field map (createFieldMap, fieldsFromSchema), got ${shownValue(c.fields)}`)
  const maxLimit = c.maxLimit === undefined ? base.maxLimit : checkLimit(where, 'config.collection.maxLimit', c.maxLimit)
  const defaultLimit = c.defaultLimit === undefined ? Math.min(base.defaultLimit, maxLimit) : checkLimit(where, 'config.collection.defaultLimit', c.defaultLimit)
  if (defaultLimit > maxLimit) throw new TypeError(`${where}: config.collection.defaultLimit (${defaultLimit}) must not exceed maxLimit (${maxLimit})`)
  for (const name of ['offset', 'etag'] as const) {
    if (c[name] !== undefined && typeof c[name] !== 'boolean') throw new TypeError(`${where}: config.collection.${name} must be a boolean, got ${shownValue(c[name])}`)
  }
  if (c.scope !== undefined && typeof c.scope !== 'function') throw new TypeError(`${where}: config.collection.scope must be a function of the request, got ${shownValue(c.scope)}`)
  const offset = c.offset ?? true
  const fields = c.fields
  let ordering: OrderingResolver
  try {
    ordering = orderingResolver(fields, { defaultOrdering: c.defaultOrdering, idField: c.idField })
  } catch (err) {
    throw new TypeError(`${where}: config.collection: ${(err as Error).message}`)
  }
  const collectionUrl = collectionPath(url)
  return {
    fields,
    defaultLimit,
    maxLimit,
    offset,
    etag: c.etag ?? true,
    limits: base.limits,
    ordering,
    names: parameterNames(fields, offset, where),
    sortable: [...fields.values()].filter((f) => f.sortable).map((f) => f.path),
    collectionUrl,
    scope: c.scope ?? defaultScope(collectionUrl),
    fingerprints: new Map()
  }
}
