import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'

export interface HealthOptions {
  /** Resolves when the store answers; a rejection makes the check fail with 503. */
  check: () => Promise<void>
}

const Health = Type.Object({ status: Type.Literal('UP') })

/** `GET /health`: readiness, with no auth and no header rules (reference-service.md). */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (fastify, opts) => {
  fastify.get('/health', {
    schema: { hide: true, response: { 200: Health } },
    config: { auth: false, conventions: false, rateLimit: false }
  }, async () => {
    await opts.check()
    return { status: 'UP' as const }
  })
}
