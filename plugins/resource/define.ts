import type { TObject, TProperties } from '@sinclair/typebox'
import { apiOf } from './definition/api.js'
import { checkOptions, refPrefix, type ResourceOptions } from './definition/options.js'
import { storageOf } from './definition/storage.js'
import type { ResourceDefinition, ServerProperties } from './definition/types.js'

/**
 * Defines a resource from its fields: its API face (entity, summary and body schemas, what
 * clients may write, scopes, query paths) and its storage face (table, columns, indexes,
 * migration) both derive from this one value, which the resource plugin serves over a store.
 * Throws a TypeError naming the option when the definition cannot work.
 */
export function defineResource<P extends TProperties, D extends TProperties = Record<never, never>> (opts: ResourceOptions<P, D>): ResourceDefinition<P, D> {
  const o = checkOptions(opts as unknown as ResourceOptions<TProperties, TProperties>)
  const api = apiOf(o)
  const storage = storageOf(o, api)
  const itemPrefix = `${o.path}/`
  const selfPrefix = refPrefix(o.name)
  return {
    name: o.name,
    collection: o.collection,
    path: o.path,
    idParam: o.idParam,
    fields: opts.fields,
    references: o.references,
    parent: o.parent,
    api: api as ResourceDefinition<P, D>['api'] & { entity: TObject<ServerProperties & P & D> },
    storage,
    ref: (id) => selfPrefix + id,
    itemPath: (id) => itemPrefix + encodeURIComponent(id)
  }
}

export { RESTORE, SERVER_MANAGED, type Action, type ActionOptions, type SubCollection, type SubCollectionOptions, type ResourceOptions, type ReferenceOptions, type ParentOptions, type DerivedField, type IndexOptions } from './definition/options.js'
export type { ResourceDefinition, ResourceApi, ResourceStorage, ServerProperties } from './definition/types.js'
