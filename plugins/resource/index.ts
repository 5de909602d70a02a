import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { migrate } from '../../store/migrate.js'
import type { Store } from '../../store/types.js'
import conditionalPlugin from '../conditional/index.js'
import idempotencyPlugin from '../idempotency/index.js'
import type { ResourceDefinition } from './define.js'
import { Repository } from './repository.js'
import { Representation } from './representation.js'
import { registerRoutes } from './routes.js'
import { registerCollections } from './collection.js'
import { itemPaths } from './paths.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'

/** Options of the `resource` plugin: definitions served over one store. */
export interface ResourcePluginOptions {
  /** Where the tables live (`createStore`). Required. */
  store: Store
  /** The resources to serve (`defineResource`); referenced ones must be listed too. Required. */
  resources: readonly ResourceDefinition[]
  /** How long a `Svc-Idempotency-Key` is remembered, in ms, when this plugin registers the idempotency plugin. Default 24 h. */
  idempotencyTtl?: number
}

/** A served resource, for plugins that build on the same tables (collections, bulk, webhooks). */
export interface ServedResource {
  definition: ResourceDefinition
  repository: Repository
  representation: Representation
  /** The path of an item as clients reach it: under the route prefix the plugin was registered with. */
  itemPath: (id: string) => string
}

const OPTION_KEYS: OptionKeys<ResourcePluginOptions> = { store: true, resources: true, idempotencyTtl: true }

declare module 'fastify' {
  interface FastifyInstance {
    /** The served resources by collection name. */
    resources: ReadonlyMap<string, ServedResource>
  }
}

/** Definitions in an order where every referenced table comes before the tables that reference it. */
export function dependencyOrder (resources: readonly ResourceDefinition[]): ResourceDefinition[] {
  const byTable = new Map(resources.map(r => [r.table, r]))
  const out: ResourceDefinition[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (r: ResourceDefinition, from: string): void => {
    const s = state.get(r.table)
    if (s === 'done') return
    if (s === 'visiting') throw new TypeError(`resource plugin: resources must not reference each other in a cycle, got one through ${r.collection}`)
    state.set(r.table, 'visiting')
    for (const ref of r.references) {
      const target = byTable.get(ref.resource.table)
      if (target === undefined) throw new TypeError(`resource plugin: resources must include ${ref.resource.collection}, which ${r.collection}.${ref.field} references (from ${from})`)
      visit(target, r.collection)
    }
    state.set(r.table, 'done')
    out.push(r)
  }
  for (const r of resources) visit(r, 'resources')
  return out
}

/**
 * Serves each definition as the convention's resource: POST on the collection, GET/HEAD,
 * PUT, PATCH (JSON Merge Patch) and DELETE on items, a POST on the parent's child
 * collection, with ETags, conditional requests, idempotency keys and execution contexts.
 * Tables are created or extended at registration through the store's migrations.
 */
async function resourcePlugin (fastify: FastifyInstance, opts: ResourcePluginOptions): Promise<void> {
  refuseUnknownOptions('resource', opts, OPTION_KEYS)
  const { store, resources } = opts
  if (typeof store !== 'object' || store === null || typeof store.transaction !== 'function') {
    throw new TypeError(`resource plugin: store must be a Store (createStore), got ${String(store)}`)
  }
  if (!Array.isArray(resources) || resources.length === 0 || resources.some(r => typeof r?.table !== 'string' || typeof r.migration !== 'object')) {
    throw new TypeError(`resource plugin: resources must be a non-empty array of defineResource() results, got ${String(resources)}`)
  }
  const tables = new Set<string>()
  for (const r of resources) {
    if (tables.has(r.table)) throw new TypeError(`resource plugin: resources must have distinct tables, got ${r.table} twice`)
    tables.add(r.table)
  }
  const ordered = dependencyOrder(resources)

  if (!fastify.hasDecorator('idempotency')) {
    await fastify.register(idempotencyPlugin, { store, ...(opts.idempotencyTtl === undefined ? {} : { ttl: opts.idempotencyTtl }) })
  } else if (opts.idempotencyTtl !== undefined) {
    // Ignored, it would leave keys remembered for another time than asked.
    throw new TypeError('resource plugin: idempotencyTtl applies only when the resource plugin registers the idempotency plugin itself; the idempotency plugin is registered already, so set its ttl option instead')
  }
  if (!fastify.hasRequestDecorator('preconditions')) await fastify.register(conditionalPlugin)
  // Conventions, PATCH: JSON Merge Patch bodies, parsed exactly like application/json.
  if (!fastify.hasContentTypeParser('application/merge-patch+json')) {
    fastify.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, fastify.getDefaultJsonParser('error', 'error'))
  }

  await migrate(store, ordered.map(r => r.migration))

  const registry = new Map(ordered.map(r => [r.table, r]))
  const served = new Map<string, ServedResource>()
  const itemPath = itemPaths(fastify.prefix)
  for (const def of ordered) {
    const repository = new Repository(def)
    const representation = new Representation(def)
    served.set(def.collection, { definition: def, repository, representation, itemPath: (id) => itemPath(def, id) })
    registerRoutes(fastify, { def, store, repo: repository, rep: representation, keys: fastify.idempotency, registry, itemPath })
    // Dependency order serves a parent before its children.
    const parentRepo = def.parent === null ? null : (served.get(def.parent.resource.collection) as ServedResource).repository
    registerCollections(fastify, { def, store, rep: representation, parentRepo, itemPath })
  }
  fastify.decorate('resources', served)
}

export { defineResource, SERVER_MANAGED, type ResourceDefinition, type ResourceOptions, type ReferenceOptions, type ParentOptions, type DerivedField, type ServerProperties } from './define.js'
export { Repository, type Condition, type Write } from './repository.js'
export { Representation, selectList } from './representation.js'
export { mergePatch } from './merge-patch.js'
export { newEtag } from './routes.js'
export { columnOf, constraintNames, tableDdl, type Column, type FieldKind } from './columns.js'
/*
 * What the routes rely on, checked by Fastify at registration (a missing one fails the boot,
 * named): problem bodies (problem), the strict body validation and the schema builders'
 * formats and keywords (validation), the execution context and idempotency key of each
 * request (conventions: without it a list reads no partition and keys are ignored), and
 * paging, filters and ordering of the collections (query).
 */
export default fp(resourcePlugin, { fastify: '5.x', name: 'svc-resource', dependencies: ['svc-problem', 'svc-validation', 'svc-conventions', 'svc-query'] })
