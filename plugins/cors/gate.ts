import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/** An onRequest hook in callback style, as @fastify/cors adds its own. */
export type RequestHook = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

type DecorateRequest = (this: FastifyInstance, name: string | symbol, value: unknown, dependencies?: string[]) => FastifyInstance

/**
 * Registers `plugin` with every onRequest hook it adds wrapped by `gate`: the gate decides per
 * request whether the plugin's hook runs (it returns true) or finishes the hook itself (it
 * calls `done`, throws, or answers, and returns false). Hooks of other kinds pass through.
 *
 * A plain value the plugin decorates requests with (@fastify/cors: `corsPreflightEnabled`,
 * false) becomes an accessor on the request prototype that reads that value until the request
 * is given its own. Fastify copies every value decoration onto each new request, one keyed
 * store per decoration in a loop shared by all requests: a second name there makes that store
 * megamorphic for every request of the server, and the gated plugin reads or sets its flag only
 * on the requests the gate lets through.
 *
 * Both wrappings last while the plugin registers (avvio loads one plugin at a time); hooks and
 * decorations added afterwards are left alone.
 */
export async function registerBehindGate<O extends FastifyPluginOptions> (
  fastify: FastifyInstance,
  plugin: FastifyPluginAsync<O> | FastifyPluginCallback<O>,
  opts: O,
  gate: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => boolean
): Promise<void> {
  const addHook = fastify.addHook as (this: FastifyInstance, name: string, hook: unknown) => FastifyInstance
  const decorateRequest = fastify.decorateRequest as DecorateRequest
  const gated = function (this: FastifyInstance, name: string, hook: unknown): FastifyInstance {
    if (name !== 'onRequest') return addHook.call(this, name, hook)
    const inner = hook as RequestHook
    const wrapped: RequestHook = function (request, reply, done) {
      if (gate(request, reply, done)) inner.call(this, request, reply, done)
    }
    return addHook.call(this, 'onRequest', wrapped)
  }
  const onPrototype: DecorateRequest = function (name, value, dependencies) {
    if (value === null || (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string')) return decorateRequest.call(this, name, value, dependencies)
    const own = Symbol(`own ${String(name)}`)
    type Holder = Record<symbol, unknown>
    return decorateRequest.call(this, name, {
      getter (this: Holder): unknown { return own in this ? this[own] : value },
      setter (this: Holder, next: unknown): void { this[own] = next }
    }, dependencies)
  }
  fastify.addHook = gated as unknown as typeof fastify.addHook
  fastify.decorateRequest = onPrototype as unknown as typeof fastify.decorateRequest
  try {
    await fastify.register(plugin as FastifyPluginAsync, opts)
  } finally {
    fastify.addHook = addHook as unknown as typeof fastify.addHook
    fastify.decorateRequest = decorateRequest as unknown as typeof fastify.decorateRequest
  }
}
