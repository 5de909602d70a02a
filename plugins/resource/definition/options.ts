import { OptionalKind, type TProperties, type TSchema } from '@sinclair/typebox'
import { DELETED_FIELDS, SERVER_FIELDS, unwrapNullable } from '../../../store/table/index.js'
import { isOmittable } from '../write-schemas.js'
import type { ResourceDefinition } from './types.js'
import { optionChecks, type OptionChecks } from '../../shared/options.js'

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

/**
 * A state transition served as `POST <item>/<name>` (conventions: Method rules 4, "POST for a
 * non-RESTful action returns 200"): allowed from the states `from` of `field`, it sets `to`.
 */
export interface ActionOptions {
  /** The enum field holding the state. Default `status`. */
  field?: string
  /** The states the action may start from. */
  from: readonly string[]
  /** The state it leads to. */
  to: string
  /** Other fields the transition sets: a value, or `'now'` for the time of the change (a date-time field). */
  set?: Readonly<Record<string, unknown>>
  /** What the action does, for the OpenAPI document. Default `Moves the <entity> to <to>`. */
  summary?: string
}

/** An array field served as a collection of its own: `GET <item>/<field>` paged, `PUT <item>/<field>` replacing all of it. */
export interface SubCollectionOptions {
  /** The item property that identifies an item (unique in the array) and orders the collection. */
  key: string
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
   * The order of a collection when the request gives no `ordering`: field paths, `-path` for
   * descending; the id ends it, so the order is total. They become sortable too, and the table
   * gets the index `(ctx, <paths…>, id)` that serves it (and its keyset paging). `[]` orders by
   * the id alone, which the primary key serves. Default `['createdDateTime']`: creation order.
   */
  defaultOrdering?: readonly string[]
  /**
   * Indexes of the table for collection queries, each `(ctx, <fields…>, id)`: a list of
   * filterable or sortable paths, or `{ fields }`; `-path` sorts the key descending. Lead
   * with the fields filtered by equality, then the ordering's fields in its directions:
   * `['kind', '-pageCount']` serves `kind=INVOICE&ordering=-pageCount`, every page of it
   * (the id tiebreaker ascends, so a descending ordering needs its `-`). The index of
   * `defaultOrdering` is added by itself. Default none.
   */
  indexes?: ReadonlyArray<readonly string[] | IndexOptions>
  /** Fields left out of collection items (conventions: items are summaries). */
  summary?: { omit: ReadonlyArray<keyof P & string> }
  /** Read-only fields computed from the stored ones. */
  derived?: { [K in keyof D]: DerivedField<D[K]> }
  /** Table name. Default the collection. */
  table?: string
  /**
   * How full, in percent, new rows leave each page of the table (PostgreSQL's `fillfactor`, an
   * integer from 10 to 100). The rest is room for the new versions of the rows' updates, which
   * then cost no index entry when no indexed field changed. Default: 50 on the embedded store,
   * PostgreSQL's own (100) on a server, where a table made with another keeps it.
   */
  fillfactor?: number
  /**
   * DELETE marks the entity deleted (`deletedDateTime`, `deletedBy`) instead of removing it
   * (conventions: "Deletion may be a soft delete"): GET still answers it, writes on it are
   * 409, collections leave it out unless they filter on `deletedDateTime`, unique fields are
   * unique among the entities not deleted, and `POST <item>/restore` brings it back. Default false.
   */
  softDelete?: boolean
  /** State transitions, by action name (`publish`, `archive`: lowercase). */
  actions?: Readonly<Record<string, ActionOptions>>
  /** Array fields served as sub-collections, by field name. */
  subCollections?: { readonly [K in keyof P]?: SubCollectionOptions }
}

/** A checked action. */
export interface Action {
  name: string
  field: string
  from: readonly string[]
  to: string
  set: Readonly<Record<string, unknown>>
  summary: string
}

/** A checked sub-collection: its field and the item key. */
export interface SubCollection {
  field: string
  key: string
  /** The schema of one item. */
  item: TSchema
  /** Most items the array holds. */
  maxItems: number | undefined
}

/** The options of a definition once checked: every list present, every name known. */
export interface CheckedOptions {
  name: string
  collection: string
  path: string
  idParam: string
  table: string
  /** `fillfactor`, when the definition names one. */
  fillfactor: number | null
  fields: TProperties
  fieldNames: readonly string[]
  /** `readOnly` and the fields whose schema says `readOnly: true`. */
  readOnly: readonly string[]
  unique: readonly string[]
  /** `references`, with the parent's field when it is not listed. */
  references: readonly ReferenceOptions[]
  parent: ParentOptions | null
  requireIfMatch: boolean
  scopes: { read: readonly string[], write: readonly string[] }
  filterable: readonly string[]
  /** `sortable`, with the paths of `defaultOrdering`. */
  sortable: readonly string[]
  /** As given (`-path` for descending), or the default. */
  defaultOrdering: readonly string[]
  summaryOmit: readonly string[]
  derived: Readonly<Record<string, DerivedField>>
  indexes: unknown
  softDelete: boolean
  actions: readonly Action[]
  subCollections: readonly SubCollection[]
}

/** Names the API adds to every entity besides the stored server fields: `ref`. */
/** `svc:<entity>::`, the part of an entity's URN-like reference before its id (conventions: URN-like references). */
export function refPrefix (entity: string): string {
  return `svc:${entity}::`
}

export const SERVER_MANAGED: readonly string[] = ['id', 'ref', ...SERVER_FIELDS.filter(f => f !== 'id'), ...DELETED_FIELDS]

const ENTITY = /^[a-z0-9]{1,20}$/
const SQL_NAME = /^[a-z_][a-z0-9_]{0,40}$/
const PROPERTY = /^[a-z][A-Za-z0-9]*$/
const PATH = /^(\/[A-Za-z0-9._~-]+)+$/

export const fail: OptionChecks['fail'] = optionChecks('defineResource').fail

function names (list: readonly unknown[] | undefined, option: string): string[] {
  if (list === undefined) return []
  if (!Array.isArray(list) || list.some(x => typeof x !== 'string')) fail(option, list, 'an array of field names')
  return [...list] as string[]
}

/** Checks a definition's options; throws a TypeError naming the option that cannot work. */
export function checkOptions (opts: ResourceOptions<TProperties, TProperties>): CheckedOptions {
  const { name, collection, path, idParam, fields } = opts
  if (typeof name !== 'string' || !ENTITY.test(name)) fail('name', name, 'a lowercase entity name of 1 to 20 characters among a-z and 0-9 (conventions: URN-like references)')
  if (typeof collection !== 'string' || !SQL_NAME.test(collection)) fail('collection', collection, 'a lowercase plural name among a-z, 0-9 and _')
  const table = opts.table ?? collection
  if (typeof table !== 'string' || !SQL_NAME.test(table)) fail('table', table, 'a lowercase SQL name of at most 41 characters')
  const fillfactor = opts.fillfactor ?? null
  if (fillfactor !== null && (!Number.isInteger(fillfactor) || fillfactor < 10 || fillfactor > 100)) fail('fillfactor', fillfactor, 'an integer from 10 to 100 (percent)')
  if (typeof path !== 'string' || !PATH.test(path)) fail('path', path, 'an absolute path such as /v1/documents')
  if (typeof idParam !== 'string' || !PROPERTY.test(idParam)) fail('idParam', idParam, 'a camelCase parameter name such as documentId')
  if (typeof fields !== 'object' || fields === null || Object.keys(fields).length === 0) fail('fields', fields, 'an object of TypeBox schemas')

  const fieldNames = Object.keys(fields)
  for (const f of fieldNames) {
    if (!PROPERTY.test(f)) fail(`fields.${f}`, f, 'a camelCase property name')
    if (SERVER_MANAGED.includes(f)) fail(`fields.${f}`, f, 'a field the server does not manage itself (id, ref, etag and the audit fields are added)')
  }
  const known = (option: string, list: string[]): string[] => {
    for (const f of list) if (!fieldNames.includes(f)) fail(option, f, `one of the fields (${fieldNames.join(', ')})`)
    return list
  }
  const readOnly = known('readOnly', names(opts.readOnly, 'readOnly'))
  for (const f of fieldNames) {
    if ((fields[f] as { readOnly?: boolean }).readOnly === true && !readOnly.includes(f)) readOnly.push(f)
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
    if (typeof r.resource !== 'object' || r.resource === null || typeof r.resource.storage?.table !== 'string') fail(`references (${r.field}).resource`, r.resource, 'a ResourceDefinition')
    if (r.ref !== undefined && !PROPERTY.test(r.ref)) fail('references.ref', r.ref, 'a camelCase property name such as authorRef')
  }

  for (const f of fieldNames) {
    const s = fields[f] as TSchema & { [OptionalKind]?: string }
    // The API always returns every field (null, never left out), so one that may be absent needs a value to return.
    if ((s[OptionalKind] === 'Optional' || readOnly.includes(f)) && !isOmittable(s)) {
      fail(`fields.${f}`, f, 'given a default or made Nullable when it is optional or read-only, so the API always has a value to return')
    }
  }
  const derived = { ...(opts.derived as Record<string, DerivedField> | undefined) }
  const softDelete = opts.softDelete ?? false
  if (typeof softDelete !== 'boolean') fail('softDelete', softDelete, 'a boolean')
  const actions = checkActions(opts.actions, fields, fieldNames, softDelete)
  const subCollections = checkSubCollections(opts.subCollections, fields, fieldNames)
  // Creation order: new items come last, whatever their ids (random, so an id order is none).
  const defaultOrdering = opts.defaultOrdering === undefined ? ['createdDateTime'] : names(opts.defaultOrdering, 'defaultOrdering')
  const sortable = names(opts.sortable, 'sortable')
  for (const term of defaultOrdering) {
    const path = term.startsWith('-') ? term.slice(1) : term
    if (!sortable.includes(path)) sortable.push(path)
  }

  return {
    name,
    collection,
    path,
    idParam,
    table,
    fillfactor,
    fields,
    fieldNames,
    readOnly,
    unique,
    references,
    parent,
    requireIfMatch: opts.requireIfMatch ?? false,
    scopes: { read: [...(opts.scopes?.read ?? [])], write: [...(opts.scopes?.write ?? [])] },
    filterable: [...(opts.filterable ?? [])],
    sortable,
    defaultOrdering,
    summaryOmit,
    derived,
    indexes: opts.indexes,
    softDelete,
    actions,
    subCollections
  }
}

const ACTION = /^[a-z][a-z0-9-]{0,30}$/

/** The enum values of a field's schema (nullable or not), or null when it is no enum. */
function enumOf (schema: TSchema): readonly string[] | null {
  const { base } = unwrapNullable(schema)
  return Array.isArray(base.enum) ? base.enum as string[] : null
}

function checkActions (given: unknown, fields: TProperties, fieldNames: readonly string[], softDelete: boolean): Action[] {
  if (given === undefined) return softDelete ? [RESTORE] : []
  if (typeof given !== 'object' || given === null || Array.isArray(given)) fail('actions', given, 'an object of actions by name')
  const out: Action[] = []
  for (const [name, a] of Object.entries(given as Record<string, ActionOptions>)) {
    const where = `actions.${name}`
    if (!ACTION.test(name)) fail('actions', name, 'action names in lowercase letters, digits and -')
    if (name === RESTORE.name) fail(where, name, 'another name: restore is the action of a soft-deletable resource')
    if (typeof a !== 'object' || a === null) fail(where, a, '{ from, to, field?, set?, summary? }')
    const field = a.field ?? 'status'
    if (!fieldNames.includes(field)) fail(`${where}.field`, field, `one of the fields (${fieldNames.join(', ')})`)
    const states = enumOf(fields[field] as TSchema)
    if (states === null) fail(`${where}.field`, field, 'an enum field, whose values are the states')
    if (!Array.isArray(a.from) || a.from.length === 0 || a.from.some(s => !states.includes(s))) fail(`${where}.from`, a.from, `a non-empty list of states of ${field} (${states.join(', ')})`)
    if (!states.includes(a.to)) fail(`${where}.to`, a.to, `a state of ${field} (${states.join(', ')})`)
    const set = a.set ?? {}
    for (const f of Object.keys(set)) {
      if (!fieldNames.includes(f) || f === field) fail(`${where}.set`, f, `fields other than ${field}`)
      if (set[f] === 'now' && unwrapNullable(fields[f] as TSchema).base.format !== 'date-time') fail(`${where}.set.${f}`, set[f], 'a value, or \'now\' on a date-time field')
    }
    out.push({ name, field, from: [...a.from], to: a.to, set, summary: a.summary ?? `Moves the entity to ${a.to}` })
  }
  return softDelete ? [...out, RESTORE] : out
}

/** The action of a soft-deletable resource: a deleted entity is not deleted any more. */
export const RESTORE: Action = { name: 'restore', field: 'deletedDateTime', from: [], to: '', set: {}, summary: 'Brings a deleted entity back' }

function checkSubCollections (given: unknown, fields: TProperties, fieldNames: readonly string[]): SubCollection[] {
  if (given === undefined) return []
  if (typeof given !== 'object' || given === null || Array.isArray(given)) fail('subCollections', given, 'an object of { key } by array field')
  return Object.entries(given as Record<string, SubCollectionOptions>).map(([field, o]) => {
    const where = `subCollections.${field}`
    if (!fieldNames.includes(field)) fail('subCollections', field, `array fields (${fieldNames.join(', ')})`)
    const { base } = unwrapNullable(fields[field] as TSchema)
    const item = base.items as TSchema | undefined
    const props = (item as { properties?: Record<string, TSchema> } | undefined)?.properties
    if (base.type !== 'array' || props === undefined) fail('subCollections', field, 'array fields of objects')
    if (typeof o !== 'object' || o === null || typeof o.key !== 'string' || !Object.hasOwn(props, o.key)) fail(`${where}.key`, o?.key, `a property of its items (${Object.keys(props).join(', ')})`)
    const keyType = unwrapNullable(props[o.key] as TSchema)
    if (keyType.nullable || !['string', 'integer'].includes(keyType.base.type as string)) fail(`${where}.key`, o.key, 'a string or integer property that cannot be null')
    return { field, key: o.key, item: item as TSchema, maxItems: base.maxItems as number | undefined }
  })
}
