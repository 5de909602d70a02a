import type { TObject, TProperties, TString } from '@sinclair/typebox'
import type { FieldMap, OrderingTerm } from '../../../model/query.js'
import type { TableSpec } from '../../../store/table/index.js'
import type { Migration } from '../../../store/types.js'
import type { TNullable } from '../../../schemas/types.js'
import type { Action, DerivedField, ParentOptions, ReferenceOptions, SubCollection } from './options.js'

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

/** What clients see of a resource and may send it. */
export interface ResourceApi<E extends TObject = TObject> {
  /** The whole entity as GET returns it: `type Author = Static<typeof authors.api.entity>`. */
  readonly entity: E
  /** A collection item: the entity without `summary.omit`. */
  readonly summary: TObject
  /** Fields a client may write (all fields but the read-only ones). */
  readonly writable: readonly string[]
  /** Every property a client may not send: server-managed, `readOnly`, derived. */
  readonly readOnly: ReadonlySet<string>
  /** Read-only properties computed from the stored ones (`<entity>Ref` of references too). */
  readonly derived: Readonly<Record<string, DerivedField>>
  readonly requireIfMatch: boolean
  readonly scopes: { read: readonly string[], write: readonly string[] }
  readonly filterable: readonly string[]
  readonly sortable: readonly string[]
  /** DELETE marks the entity deleted; `restore` is among the actions. */
  readonly softDelete: boolean
  /** State transitions, each `POST <item>/<name>`. */
  readonly actions: readonly Action[]
  /** Array fields served as collections of their own. */
  readonly subCollections: readonly SubCollection[]
  /** Request bodies: POST, PUT (with an optional `id` equal to the path's), PATCH (JSON Merge Patch). */
  readonly bodies: { create: TObject, replace: TObject, patch: TObject }
}

/** Where a resource is kept: its table and how the collection's query paths map onto it. */
export interface ResourceStorage {
  readonly table: string
  /** Everything the table's DDL and statements are built from (store/table). */
  readonly spec: TableSpec
  /** The filterable and sortable paths of the collection items, with their SQL (alias `t`). */
  readonly fields: FieldMap
  /** The collection's order when a request gives none (the id ends it): creation order by default. */
  readonly defaultOrdering: readonly OrderingTerm[]
  /** Creates or extends the table (store migrations). */
  readonly migration: Migration
}

/** A resource as `defineResource` returns it: its names, its API face and its storage face. */
export interface ResourceDefinition<P extends TProperties = TProperties, D extends TProperties = TProperties> {
  readonly name: string
  readonly collection: string
  readonly path: string
  readonly idParam: string
  /** The entity's own fields, as given. */
  readonly fields: Readonly<P>
  readonly references: readonly ReferenceOptions[]
  readonly parent: ParentOptions | null
  readonly api: ResourceApi<TObject<ServerProperties & P & D>>
  readonly storage: ResourceStorage
  /** `svc:<name>::<id>`. */
  ref: (id: string) => string
  /** `<path>/<id>`. */
  itemPath: (id: string) => string
}
