import { fieldsFromSchema } from '../../../model/fields.js'
import type { DerivedRef } from '../../../store/field-columns.js'
import type { FieldMap, OrderingTerm } from '../../../model/query.js'
import { columnOf, constraintNames, DELETED_FIELDS, NOT_DELETED, indexKey, SERVER_FIELDS, tableMigration, type IndexKey, type TableIndex, type TableSpec } from '../../../store/table/index.js'
import { fail, refPrefix, type CheckedOptions, type IndexOptions } from './options.js'
import type { ResourceApi, ResourceStorage } from './types.js'

/** Whether a path lies in a stored field: derived fields are computed, with nothing to filter on or index. */
function storedIn (o: CheckedOptions): (path: string) => boolean {
  const stored = new Set([...SERVER_FIELDS, ...o.fieldNames, ...(o.softDelete ? DELETED_FIELDS : [])])
  return (path) => stored.has(path.split('.')[0] as string)
}

/**
 * The URN-like references of the items (`ref`, each reference's `<entity>Ref`): a prefix before
 * a stored id, so the store can filter on them (store/field-columns.ts `DerivedRef`).
 */
function refsOf (o: CheckedOptions): DerivedRef[] {
  const refs: DerivedRef[] = [{ field: 'ref', prefix: refPrefix(o.name), of: 'id' }]
  for (const r of o.references) if (r.ref !== undefined) refs.push({ field: r.ref, prefix: refPrefix(r.resource.name), of: r.field })
  return refs
}

/** Whether a path can be queried: a stored field, or a reference derived from one. */
function queryableIn (o: CheckedOptions): (path: string) => boolean {
  const stored = storedIn(o)
  const refs = new Set(refsOf(o).map(r => r.field))
  return (path) => stored(path) || refs.has(path)
}

/** The paths of one `indexes` entry, checked: strings, at least one, each once. */
function indexPaths (entry: unknown, option: string): Array<{ path: string, descending: boolean }> {
  const list = Array.isArray(entry) ? entry : (entry as IndexOptions | null)?.fields
  if (!Array.isArray(list) || list.length === 0 || list.some(f => typeof f !== 'string')) {
    fail(option, entry, 'an array of indexes, each a non-empty list of field paths or { fields: [...] }')
  }
  const keys = (list as string[]).map(f => f.startsWith('-') ? { path: f.slice(1), descending: true } : { path: f, descending: false })
  const paths = keys.map(k => k.path)
  if (new Set(paths).size !== paths.length) fail(option, entry, 'indexes naming each field once')
  return keys
}

/**
 * Resolves `indexes` against the collection items: every key must be a filterable or
 * sortable, stored, non-array path; the store gives it the SQL the query compiler uses for it
 * (`indexKey`).
 */
function resolveIndexes (o: CheckedOptions, api: ResourceApi, entries: unknown, option: string): TableIndex[] {
  if (entries === undefined) return []
  if (!Array.isArray(entries)) fail(option, entries, 'an array of indexes, each a non-empty list of field paths or { fields: [...] }')
  const queried = [...api.filterable, ...api.sortable]
  const resolved = entries.map((entry: unknown) => indexPaths(entry, option))
  const paths = [...new Set(resolved.flat().map(k => k.path))]
  for (const path of paths) {
    if (path === 'id') fail(option, path, 'fields other than the id, which ends every index')
    if (!queried.includes(path)) fail(option, path, `filterable or sortable fields (${queried.join(', ')}), with a leading - for descending`)
  }
  let fields: FieldMap
  try {
    fields = fieldsFromSchema(api.summary, { filterable: paths, queryable: storedIn(o) })
  } catch (err) {
    throw new TypeError(`defineResource: ${option} must name stored fields of the collection items: ${(err as Error).message}`)
  }
  const names = new Set<string>()
  return resolved.map(entry => {
    const keys = entry.map(({ path, descending }): IndexKey => {
      const field = fields.get(path) as NonNullable<ReturnType<FieldMap['get']>>
      if (field.type === 'string-array') fail(option, path, 'fields that are not arrays (a btree index does not serve array operators)')
      return indexKey(field, descending, o.table)
    })
    const name = constraintNames.queryIndex(o.table, keys)
    if (names.has(name)) fail(option, name, 'distinct indexes')
    names.add(name)
    return { name, keys }
  })
}

/** The filterable and sortable paths of the collection items; the table maps them onto its columns. */
function fieldMapOf (o: CheckedOptions, api: ResourceApi): FieldMap {
  return fieldsFromSchema(api.summary, { filterable: [...api.filterable], sortable: [...api.sortable], queryable: queryableIn(o) })
}

/**
 * The declared indexes, and the one serving the default ordering `(ctx, <paths…>, id)` unless
 * one of them is that one already.
 */
function indexesOf (o: CheckedOptions, api: ResourceApi): TableIndex[] {
  const declared = resolveIndexes(o, api, o.indexes, 'indexes')
  if (o.defaultOrdering.length === 0) return declared
  const [ordering] = resolveIndexes(o, api, [o.defaultOrdering], 'defaultOrdering') as [TableIndex]
  return declared.some(i => i.name === ordering.name) ? declared : [...declared, ordering]
}

function orderingOf (o: CheckedOptions): OrderingTerm[] {
  return o.defaultOrdering.map(term => term.startsWith('-') ? { field: term.slice(1), direction: 'desc' } : { field: term, direction: 'asc' })
}

/** The storage face of a resource: its table, how each field is stored, its indexes and migration. */
export function storageOf (o: CheckedOptions, api: ResourceApi): ResourceStorage {
  const spec: TableSpec = {
    table: o.table,
    columns: o.fieldNames.map(f => columnOf(f, o.fields[f] as Parameters<typeof columnOf>[1])),
    writable: api.writable,
    unique: o.unique,
    references: o.references.map(r => ({ field: r.field, table: r.resource.storage.table })),
    indexes: indexesOf(o, api),
    summaryOmit: o.summaryOmit,
    softDelete: o.softDelete,
    refs: refsOf(o),
    ...(o.softDelete ? { uniqueWhere: NOT_DELETED } : {}),
    ...(o.fillfactor === null ? {} : { fillfactor: o.fillfactor })
  }
  return { table: o.table, spec, fields: fieldMapOf(o, api), defaultOrdering: orderingOf(o), migration: tableMigration(spec) }
}
