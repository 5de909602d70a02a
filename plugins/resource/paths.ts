import type { ResourceDefinition } from './define.js'

/** An item's path as clients reach it, for `Location`, `instance` and links. */
export type ItemPaths = (def: ResourceDefinition, id: string) => string

/**
 * Item paths under the route prefix the plugin is registered with (`{ prefix: '/api' }`):
 * Fastify prefixes the routes, and every path the plugin writes must name them alike.
 */
export function itemPaths (prefix: string): ItemPaths {
  // Fastify joins `/api/` and `/v1/…` with one slash too.
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix
  return (def, id) => base + def.itemPath(id)
}
