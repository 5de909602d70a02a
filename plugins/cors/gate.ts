import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/** An onRequest hook in callback style, as @fastify/cors adds its own. */
export type RequestHook = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

/**
 * Registers `plugin` with every onRequest hook it adds wrapped by `gate`: the gate decides per
 * request whether the plugin's hook runs (it returns true) or finishes the hook itself (it
 * calls `done`, throws, or answers, and returns false). Hooks of other
 * kinds pass through. The wrapping lasts while the plugin registers (avvio loads one plugin at a
 * time); hooks added afterwards are left alone.
 */
export async function registerBehindGate<O extends FastifyPluginOptions> (
  fastify: FastifyInstance,
  plugin: FastifyPluginAsync<O> | FastifyPluginCallback<O>,
  opts: O,
  gate: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => boolean
): Promise<void> {
  const addHook = fastify.addHook as (this: FastifyInstance, name: string, hook: unknown) => FastifyInstance
  const gated = function (this: FastifyInstance, name: string, hook: unknown): FastifyInstance {
    if (name !== 'onRequest') return addHook.call(this, name, hook)
    const inner = hook as RequestHook
    const wrapped: RequestHook = function (request, reply, done) {
      if (gate(request, reply, done)) inner.call(this, request, reply, done)
    }
    return addHook.call(this, 'onRequest', wrapped)
  }
  fastify.addHook = gated as unknown as typeof fastify.addHook
  try {
    await fastify.register(plugin as FastifyPluginAsync, opts)
  } finally {
    fastify.addHook = addHook as unknown as typeof fastify.addHook
  }
}
