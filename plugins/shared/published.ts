import type { FastifyInstance } from 'fastify'

/*
 * Settings a plugin resolved from its options, published for the plugins that describe what
 * it does: the openapi plugin documents the `Content-Language` the conventions plugin sends
 * and the media types it accepts from those settings, not from a copy of the options. Kept
 * on the instance the plugin was registered on (fastify-plugin: its parent), so the contexts
 * below it see them and a context of its own publishes without changing its parent's.
 */

const kPublished = Symbol('svc-conventions.published')

type Holder = Record<typeof kPublished, ReadonlyMap<string, unknown> | undefined>

/** Publishes `settings` under the plugin's `name` on `fastify` and the contexts below it. */
export function publish (fastify: FastifyInstance, name: string, settings: unknown): void {
  const holder = fastify as unknown as Holder
  // A child context starts from its parent's, inherited through the prototype.
  const own = new Map(holder[kPublished])
  own.set(name, settings)
  holder[kPublished] = own
}

/** What the plugin `name` published on `fastify` or a context above it; undefined when it is not registered there. */
export function publishedBy<T> (fastify: FastifyInstance, name: string): T | undefined {
  return (fastify as unknown as Holder)[kPublished]?.get(name) as T | undefined
}
