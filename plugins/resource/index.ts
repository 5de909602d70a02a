import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { evolveTables } from '../../store/evolve.js'
import { applyMigrationFiles, readMigrationFiles } from '../../store/migration-files.js'
import { ResourceTable } from '../../store/table/index.js'
import type { Store } from '../../store/types.js'
import conditionalPlugin from '../conditional/index.js'
import idempotencyPlugin, { type IdempotencyKeys } from '../idempotency/index.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import type { ResourceDefinition } from './define.js'
import { dependencyOrder } from './order.js'
import { itemPaths } from './paths.js'
import { Representation } from './representation.js'
import { registerCollectionRoutes } from './routes/collections.js'
import { registerActionRoutes } from './routes/actions.js'
import { registerItemRoutes } from './routes/items.js'
import { registerSubCollectionRoutes } from './routes/sub-collections.js'
import type { Served } from './routes/served.js'
import { Writer } from './write/writer.js'
import type { WriteOp } from './write/operations.js'
import { writeItem } from './routes/writes.js'
import { needs, scopesNeedAuth } from '../shared/dependencies.js'

/** Options of the `resource` plugin: definitions served over one store. */
export interface ResourcePluginOptions {
  /** Where the tables live (`createStore`). Required. */
  store: Store
  /** The resources to serve (`defineResource`); referenced ones must be listed too. Required. */
  resources: readonly ResourceDefinition[]
  /** How long a `Svc-Idempotency-Key` is remembered, in ms, when this plugin registers the idempotency plugin. Default 24 h. */
  idempotencyTtl?: number
  /**
   * The directory of versioned SQL migration files (`NNNN_<name>.sql`, docs/migrations.md),
   * applied in order before the tables are compared with the definitions; `false` for none.
   * Default `migrations` under the working directory, when it exists.
   */
  migrations?: string | false
  /**
   * Serve resources that have token scopes although the auth plugin, which alone checks them,
   * is not registered (a gateway in front checks the tokens, or a test): their routes then let
   * every caller in. Default false: the boot stops, naming the scopes.
   */
  withoutAuth?: boolean
}

/** A served resource, for plugins that build on the same tables (bulk, jobs, webhooks). */
export interface ServedResource {
  definition: ResourceDefinition
  /** Every statement of the resource's table. */
  table: ResourceTable
  /** The one write path of the resource's entities. */
  writer: Writer
  representation: Representation
  /** The store the table lives in. */
  store: Store
  /** The idempotency keys the writes claim. */
  keys: IdempotencyKeys
  /** Every served definition by table, to name the children that block a delete. */
  registry: ReadonlyMap<string, ResourceDefinition>
  /** The path of an item as clients reach it: under the route prefix the plugin was registered with. */
  itemPath: (id: string) => string
  /**
   * One item write as the item routes run it (idempotency key claimed, failures thrown as
   * their problems), in one statement with the op's `attached` write when it has one: for
   * plugins that serve a part of the entity on a route of their own (files). The entity as
   * stored; for a `status` of 204, its `id` and `etag` alone.
   */
  writeItem: (request: FastifyRequest, op: WriteOp, status: number) => Promise<Record<string, unknown> | null>
}

const OPTION_KEYS: OptionKeys<ResourcePluginOptions> = { store: true, resources: true, idempotencyTtl: true, migrations: true, withoutAuth: true }

const defaults = { migrations: 'migrations' } as const

declare module 'fastify' {
  interface FastifyInstance {
    /** The served resources by collection name. */
    resources: ReadonlyMap<string, ServedResource>
  }
}

/**
 * Serves each definition as the convention's resource: POST on the collection, GET/HEAD,
 * PUT, PATCH (JSON Merge Patch) and DELETE on items, a POST on the parent's child
 * collection, with ETags, conditional requests, idempotency keys and execution contexts.
 * At registration the migration files run, then each table is compared with its definition:
 * created when missing, changed where that is safe, or the boot stops with a `SchemaMismatch`
 * naming every other difference and the SQL that would resolve it (docs/migrations.md).
 */
async function resourcePlugin (fastify: FastifyInstance, opts: ResourcePluginOptions): Promise<void> {
  refuseUnknownOptions('resource', opts, OPTION_KEYS)
  const { store, resources } = opts
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') {
    throw new TypeError(`resource plugin: store must be a Store (createStore), got ${shownValue(store)}`)
  }
  if (!Array.isArray(resources) || resources.length === 0 || resources.some(r => typeof r?.storage?.table !== 'string' || typeof r.storage.migration !== 'object')) {
    throw new TypeError(`resource plugin: resources must be a non-empty array of defineResource() results, got ${shownValue(resources)}`)
  }
  const tables = new Set<string>()
  for (const r of resources) {
    if (tables.has(r.storage.table)) throw new TypeError(`resource plugin: resources must have distinct tables, got ${r.storage.table} twice`)
    tables.add(r.storage.table)
  }
  const ordered = dependencyOrder(resources)
  const { migrations } = opts
  if (migrations !== undefined && migrations !== false && (typeof migrations !== 'string' || migrations === '')) {
    throw new TypeError(`resource plugin: migrations must be a directory path or false, got ${JSON.stringify(migrations)}`)
  }
  // Read now: a misnamed file fails the boot before anything is changed.
  const files = migrations === false ? [] : readMigrationFiles(migrations ?? defaults.migrations, { required: migrations !== undefined })

  if (!fastify.hasDecorator('idempotency')) {
    await fastify.register(idempotencyPlugin, { store, ...(opts.idempotencyTtl === undefined ? {} : { ttl: opts.idempotencyTtl }) })
  } else if (opts.idempotencyTtl !== undefined) {
    // Ignored, it would leave keys remembered for another time than asked.
    throw new TypeError('resource plugin: idempotencyTtl applies only when the resource plugin registers the idempotency plugin itself; the idempotency plugin is registered already, so set its ttl option instead')
  }
  scopesNeedAuth(fastify, 'resource', opts.withoutAuth, resources.flatMap(r => [...r.api.scopes.read, ...r.api.scopes.write]))
  if (!fastify.hasRequestDecorator('preconditions')) await fastify.register(conditionalPlugin)
  // Conventions, PATCH: JSON Merge Patch bodies, parsed exactly like application/json.
  if (!fastify.hasContentTypeParser('application/merge-patch+json')) {
    fastify.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, fastify.getDefaultJsonParser('error', 'error'))
  }

  // The files first: a migration that renames a column is what makes the comparison pass.
  await applyMigrationFiles(store, files, { logger: fastify.log })
  await evolveTables(store, ordered.map(r => r.storage.spec), { logger: fastify.log })

  const registry = new Map(ordered.map(r => [r.storage.table, r]))
  const itemPath = itemPaths(fastify.prefix)
  const keys = fastify.idempotency
  const served = new Map<string, ServedResource>()
  const routes = new Map<string, Served>()
  for (const def of ordered) {
    const table = new ResourceTable(def.storage.spec)
    const s: Served = { def, store, table, writer: new Writer(def, table), rep: new Representation(def), keys, registry, itemPath }
    routes.set(def.collection, s)
    served.set(def.collection, {
      definition: def,
      table,
      writer: s.writer,
      representation: s.rep,
      store,
      keys,
      registry,
      itemPath: (id) => itemPath(def, id),
      writeItem: async (request, op, status) => await writeItem(s, request, op, itemPath(def, op.id), status)
    })
    registerItemRoutes(fastify, s)
    registerActionRoutes(fastify, s)
    registerSubCollectionRoutes(fastify, s)
    // Dependency order serves a parent before its children.
    registerCollectionRoutes(fastify, s, def.parent === null ? null : routes.get(def.parent.resource.collection) as Served)
  }
  fastify.decorate('resources', served)
}

export { defineResource, type ResourceDefinition, type ResourceApi, type ResourceStorage, type ResourceOptions, type ReferenceOptions, type ParentOptions, type DerivedField, type IndexOptions, type ServerProperties } from './define.js'
export { dependencyOrder } from './order.js'
export type { WriteAction, WriteOp, WriteResult, WriteCall, WriteOutbox, Failure } from './write/operations.js'
export type { WritePlan } from './write/writer.js'
export type { Registry, Operation } from './problems.js'
/*
 * What the routes rely on, checked by Fastify at registration (a missing one fails the boot,
 * named): problem bodies (problem), the strict body validation and the schema builders'
 * formats and keywords (validation), the execution context and idempotency key of each
 * request (conventions: without it a list reads no partition and keys are ignored), and
 * paging, filters and ordering of the collections (query).
 */
export default fp(needs('resource', ['problem', 'validation', 'conventions', 'query'], resourcePlugin), { fastify: '5.x', name: 'svc-resource' })
