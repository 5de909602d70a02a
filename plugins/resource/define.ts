import { Type, OptionalKind, type TObject, type TProperties, type TSchema, type TString } from '@sinclair/typebox'
import { Nullable, type TNullable } from '../../schemas/types.js'
import { standardProperties } from '../../schemas/standard.js'
import { columnOf, constraintNames, tableMigration, type Column, type IndexKey, type TableIndex } from './columns.js'
import { isNullable, isOmittable } from './write-schemas.js'
import { defaultColumn, fieldsFromSchema } from '../query/fields.js'
import type { FieldMap } from '../query/model.js'
import { quoteIdent } from '../../store/quote.js'
import type { Migration } from '../../store/types.js'

/** A field computed from the stored ones on the way out (e.g. `authorRef` from `authorId`). */
export interface DerivedField<S extends TSchema = TSchema> {
  schema: S
  value: (entity: Record<string, unknown>) => unknown
}

/** `field` holds the id of a `resource` (a foreign key: a missing target is 409). */
export interface ReferenceOptions {
  field: string
  resource: ResourceDefinition
  /** Adds the read-only `<entity>Ref` property (`svc:<entity>::<id>`) under this name, e.g. `authorRef`. */
  ref?: string
}

/** A child collection: `POST <parent path>/:<parent idParam>/<collection>` takes `field` from the path. */
export interface ParentOptions {
  resource: ResourceDefinition
  field: string
}

/** A query index of the table, `(ctx, <fields…>, id)`. */
export interface IndexOptions {
  /** Filterable or sortable paths (nested ones too), in index order; `-path` for descending. */
  fields: readonly string[]
}

export interface ResourceOptions<P extends TProperties, D extends TProperties = Record<never, never>> {
  /** Singular, lowercase `[a-z0-9]{1,20}`: the entity part of `ref` (`svc:<name>::<id>`). */
  name: string
  /** Plural: the table and the collection segment (`/v1/<collection>`). */
  collection: string
  /** Path of the collection, e.g. `/v1/documents`; items live at `<path>/:<idParam>`. */
  path: string
  /** Name of the item path parameter, e.g. `documentId`. */
  idParam: string
  /** The entity's own fields (the server adds id, ref, etag and the audit fields). */
  fields: P
  /** Fields clients never write (besides the server-managed ones), e.g. `fingerprint`. */
  readOnly?: ReadonlyArray<keyof P & string>
  /** Fields unique within an execution context (a duplicate is 409). */
  unique?: ReadonlyArray<keyof P & string>
  references?: readonly ReferenceOptions[]
  parent?: ParentOptions
  /** PUT, PATCH and DELETE need `If-Match` (428 without it). Default false. */
  requireIfMatch?: boolean
  /** Token scopes for reading (GET, HEAD) and writing (POST, PUT, PATCH, DELETE). Default none. */
  scopes?: { read?: readonly string[], write?: readonly string[] }
  /** Fields (dotted paths) collection endpoints may filter on. */
  filterable?: readonly string[]
  /** Fields (dotted paths) collection endpoints may sort on. */
  sortable?: readonly string[]
  /**
   * Indexes of the table for collection queries, each `(ctx, <fields…>, id)`: a list of
   * filterable or sortable paths, or `{ fields }`; `-path` sorts the key descending. Lead
   * with the fields filtered by equality, then the ordering's fields in its directions:
   * `['kind', '-pageCount']` serves `kind=INVOICE&ordering=-pageCount`, every page of it
   * (the id tiebreaker ascends, so a descending ordering needs its `-`). The primary key
   * already serves the default ordering by id. Default none.
   */
  indexes?: ReadonlyArray<readonly string[] | IndexOptions>
  /** Fields left out of collection items (conventions: items are summaries). */
  summary?: { omit: ReadonlyArray<keyof P & string> }
  /** Read-only fields computed from the stored ones. */
  derived?: { [K in keyof D]: DerivedField<D[K]> }
  /** Table name. Default the collection. */
  table?: string
}

/** The properties the server manages on every entity. */
export interface ServerProperties extends TProperties {
  id: TString
  ref: TString
  createdDateTime: TString
  createdBy: TNullable<TString>
  modifiedDateTime: TString
  modifiedBy: TNullable<TString>
  etag: TString
}

export const SERVER_MANAGED = ['id', 'ref', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy'] as const

export interface ResourceDefinition<P extends TProperties = TProperties, D extends TProperties = TProperties> {
  readonly name: string
  readonly collection: string
  readonly path: string
  readonly idParam: string
  readonly table: string
  /** The whole entity as GET returns it: `type Author = Static<typeof authors.entity>`. */
  readonly entity: TObject<ServerProperties & P & D>
  /** A collection item: the entity without `summary.omit`. */
  readonly summaryEntity: TObject
  readonly fields: Readonly<P>
  /** Fields a client may write (all fields but the read-only ones). */
  readonly writable: readonly string[]
  /** Every property a client may not send: server-managed, `readOnly`, derived. */
  readonly readOnly: ReadonlySet<string>
  /** Stored read-only fields (`readOnly`), kept by PUT and PATCH. */
  readonly storedReadOnly: readonly string[]
  readonly unique: readonly string[]
  readonly references: readonly ReferenceOptions[]
  readonly parent: ParentOptions | null
  readonly requireIfMatch: boolean
  readonly scopes: { read: readonly string[], write: readonly string[] }
  readonly filterable: readonly string[]
  readonly sortable: readonly string[]
  readonly summaryOmit: readonly string[]
  readonly derived: Readonly<Record<string, DerivedField>>
  readonly columns: readonly Column[]
  /** The query indexes the migration creates (`indexes`). */
  readonly indexes: readonly TableIndex[]
  /** Creates or extends the table (store migrations). */
  readonly migration: Migration
  /** `svc:<name>::<id>`. */
  ref: (id: string) => string
  /** `<path>/<id>`. */
  itemPath: (id: string) => string
}

const ENTITY = /^[a-z0-9]{1,20}$/
const SQL_NAME = /^[a-z_][a-z0-9_]{0,40}$/
const PROPERTY = /^[a-z][A-Za-z0-9]*$/
const PATH = /^(\/[A-Za-z0-9._~-]+)+$/

function fail (option: string, value: unknown, rule: string): never {
  throw new TypeError(`defineResource: ${option} must be ${rule}, got ${JSON.stringify(value)}`)
}

function names (list: readonly unknown[] | undefined, option: string): string[] {
  if (list === undefined) return []
  if (!Array.isArray(list) || list.some(x => typeof x !== 'string')) fail(option, list, 'an array of field names')
  return [...list] as string[]
}

const STORED_SERVER_FIELDS = ['id', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy']

/** The paths of one `indexes` entry, checked: strings, at least one, each once. */
function indexPaths (entry: unknown): Array<{ path: string, descending: boolean }> {
  const list = Array.isArray(entry) ? entry : (entry as IndexOptions | null)?.fields
  if (!Array.isArray(list) || list.length === 0 || list.some(f => typeof f !== 'string')) {
    fail('indexes', entry, 'an array of indexes, each a non-empty list of field paths or { fields: [...] }')
  }
  const keys = (list as string[]).map(f => f.startsWith('-') ? { path: f.slice(1), descending: true } : { path: f, descending: false })
  const paths = keys.map(k => k.path)
  if (new Set(paths).size !== paths.length) fail('indexes', entry, 'indexes naming each field once')
  return keys
}

/**
 * Resolves `indexes` against the entity: every key must be a filterable or sortable,
 * stored, non-array path, and gets the SQL the query compiler uses for it (the field map's
 * `defaultColumn`, with COLLATE "C" on nested text, the collation it sorts text with).
 */
function resolveIndexes (entries: unknown, table: string, summary: TObject, queried: readonly string[], stored: ReadonlySet<string>): TableIndex[] {
  if (entries === undefined) return []
  if (!Array.isArray(entries)) fail('indexes', entries, 'an array of indexes, each a non-empty list of field paths or { fields: [...] }')
  const resolved = entries.map(indexPaths)
  const paths = [...new Set(resolved.flat().map(k => k.path))]
  for (const path of paths) {
    if (path === 'id') fail('indexes', path, 'fields other than the id, which ends every index')
    if (!queried.includes(path)) fail('indexes', path, `filterable or sortable fields (${queried.join(', ')}), with a leading - for descending`)
  }
  const T = quoteIdent(table)
  let fields: FieldMap
  try {
    fields = fieldsFromSchema(summary, {
      filterable: paths,
      column: (path, type) => stored.has(path.split('.')[0] as string) ? defaultColumn(path, type, T) : undefined
    })
  } catch (err) {
    throw new TypeError(`defineResource: indexes must name stored fields of the collection items: ${(err as Error).message}`)
  }
  const names = new Set<string>()
  return resolved.map(entry => {
    const keys = entry.map(({ path, descending }): IndexKey => {
      const field = fields.get(path) as NonNullable<ReturnType<FieldMap['get']>>
      if (field.type === 'string-array') fail('indexes', path, 'fields that are not arrays (a btree index does not serve array operators)')
      const text = field.type === 'string' || field.type === 'enum'
      // A top-level column has the "C" collation already (columns.ts); a nested value is an expression.
      const sql = path.includes('.') ? `${field.sql}${text ? ' COLLATE "C"' : ''}` : quoteIdent(path)
      return { path, sql, descending }
    })
    const name = constraintNames.queryIndex(table, keys)
    if (names.has(name)) fail('indexes', name, 'distinct indexes')
    names.add(name)
    return { name, keys }
  })
}

/**
 * Defines a resource from its fields: the table, the body schemas and the routes all
 * derive from this one value, which `resourcePlugin` turns into routes over a store.
 * Throws a TypeError naming the option when the definition cannot work.
 */
export function defineResource<P extends TProperties, D extends TProperties = Record<never, never>> (opts: ResourceOptions<P, D>): ResourceDefinition<P, D> {
  const { name, collection, path, idParam, fields } = opts
  if (typeof name !== 'string' || !ENTITY.test(name)) fail('name', name, 'a lowercase entity name of 1 to 20 characters among a-z and 0-9 (conventions: URN-like references)')
  if (typeof collection !== 'string' || !SQL_NAME.test(collection)) fail('collection', collection, 'a lowercase plural name among a-z, 0-9 and _')
  const table = opts.table ?? collection
  if (typeof table !== 'string' || !SQL_NAME.test(table)) fail('table', table, 'a lowercase SQL name of at most 41 characters')
  if (typeof path !== 'string' || !PATH.test(path)) fail('path', path, 'an absolute path such as /v1/documents')
  if (typeof idParam !== 'string' || !PROPERTY.test(idParam)) fail('idParam', idParam, 'a camelCase parameter name such as documentId')
  if (typeof fields !== 'object' || fields === null || Object.keys(fields).length === 0) fail('fields', fields, 'an object of TypeBox schemas')

  const fieldNames = Object.keys(fields)
  for (const f of fieldNames) {
    if (!PROPERTY.test(f)) fail(`fields.${f}`, f, 'a camelCase property name')
    if ((SERVER_MANAGED as readonly string[]).includes(f)) fail(`fields.${f}`, f, 'a field the server does not manage itself (id, ref, etag and the audit fields are added)')
  }
  const known = (option: string, list: string[]): string[] => {
    for (const f of list) if (!fieldNames.includes(f)) fail(option, f, `one of the fields (${fieldNames.join(', ')})`)
    return list
  }
  const readOnlyFields = known('readOnly', names(opts.readOnly, 'readOnly'))
  for (const f of fieldNames) {
    if ((fields[f] as { readOnly?: boolean }).readOnly === true && !readOnlyFields.includes(f)) readOnlyFields.push(f)
  }
  const unique = known('unique', names(opts.unique, 'unique'))
  const summaryOmit = known('summary.omit', names(opts.summary?.omit, 'summary.omit'))
  const references = [...(opts.references ?? [])]
  const parent = opts.parent ?? null
  if (parent !== null && !references.some(r => r.field === parent.field)) {
    references.push({ field: parent.field, resource: parent.resource })
  }
  for (const r of references) {
    known('references.field', [r.field])
    if (typeof r.resource !== 'object' || r.resource === null || typeof r.resource.table !== 'string') fail(`references (${r.field}).resource`, r.resource, 'a ResourceDefinition')
  }

  for (const f of fieldNames) {
    const s = fields[f] as TSchema & { [OptionalKind]?: string }
    // The API always returns every field (null, never left out), so one that may be absent needs a value to return.
    if ((s[OptionalKind] === 'Optional' || readOnlyFields.includes(f)) && !isOmittable(s)) {
      fail(`fields.${f}`, f, 'given a default or made Nullable when it is optional or read-only, so the API always has a value to return')
    }
  }

  const derived: Record<string, DerivedField> = { ...(opts.derived as Record<string, DerivedField> | undefined) }
  for (const r of references) {
    if (r.ref === undefined) continue
    if (!PROPERTY.test(r.ref)) fail('references.ref', r.ref, 'a camelCase property name such as authorRef')
    const entity = r.resource.name
    const field = r.field
    const nullable = isNullable(fields[field] as TSchema)
    const refSchema = standardProperties.ref(entity, { description: `URN-like reference of the ${entity} named by ${field}.` })
    derived[r.ref] = {
      schema: nullable ? Nullable(refSchema) : refSchema,
      value: (e) => e[field] === null ? null : `svc:${entity}::${String(e[field])}`
    }
  }
  for (const d of Object.keys(derived)) {
    if (fieldNames.includes(d) || (SERVER_MANAGED as readonly string[]).includes(d)) fail(`derived.${d}`, d, 'a name that is not already a field')
  }

  const derivedSchemas: Record<string, TSchema> = {}
  for (const [k, d] of Object.entries(derived)) derivedSchemas[k] = { ...d.schema, readOnly: true }
  // A stored read-only field says so (OpenAPI's readOnly), as the server-managed and derived ones do.
  const fieldProps = Object.fromEntries(fieldNames.map(f => [f, readOnlyFields.includes(f) ? { ...fields[f], readOnly: true } : fields[f]]))
  // Responses list every property (a null is written, never left out), in this order.
  const entityProps = {
    id: standardProperties.id,
    ref: standardProperties.ref(name),
    ...fieldProps,
    ...derivedSchemas,
    createdDateTime: standardProperties.createdDateTime,
    createdBy: Nullable(standardProperties.createdBy),
    modifiedDateTime: standardProperties.modifiedDateTime,
    modifiedBy: Nullable(standardProperties.modifiedBy),
    etag: standardProperties.etag
  }
  const required = (props: Record<string, unknown>): TObject => Type.Unsafe({
    type: 'object',
    properties: props,
    required: Object.keys(props),
    additionalProperties: false
  }) as unknown as TObject
  const entity = required(entityProps) as TObject<ServerProperties & P & D>
  const summaryProps = Object.fromEntries(Object.entries(entityProps).filter(([k]) => !summaryOmit.includes(k)))

  const summaryEntity = required(summaryProps)
  const filterable = [...(opts.filterable ?? [])]
  const sortable = [...(opts.sortable ?? [])]
  const columns = fieldNames.map(f => columnOf(f, fields[f] as TSchema))
  const indexes = resolveIndexes(opts.indexes, table, summaryEntity, [...filterable, ...sortable], new Set([...STORED_SERVER_FIELDS, ...fieldNames]))
  const migration = tableMigration({
    table,
    columns,
    unique,
    references: references.map(r => ({ field: r.field, table: r.resource.table })),
    indexes
  })
  const readOnly = new Set<string>([...SERVER_MANAGED, ...readOnlyFields, ...Object.keys(derived)])

  const itemPrefix = `${path}/`
  return {
    name,
    collection,
    path,
    idParam,
    table,
    entity,
    summaryEntity,
    fields,
    writable: fieldNames.filter(f => !readOnlyFields.includes(f)),
    readOnly,
    storedReadOnly: readOnlyFields,
    unique,
    references,
    parent,
    requireIfMatch: opts.requireIfMatch ?? false,
    scopes: { read: [...(opts.scopes?.read ?? [])], write: [...(opts.scopes?.write ?? [])] },
    filterable,
    sortable,
    summaryOmit,
    derived,
    columns,
    indexes,
    migration,
    ref: (id) => `svc:${name}::${id}`,
    itemPath: (id) => itemPrefix + encodeURIComponent(id)
  }
}
