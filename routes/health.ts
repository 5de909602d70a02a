import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problems } from '../index.js'

export interface HealthOptions {
  /** Resolves when the store answers; a rejection makes the check fail with 503. */
  check: () => Promise<void>
}

const Health = Type.Object({ status: Type.Literal('UP') }, { additionalProperties: false })

/** `GET /health`: readiness, with no auth and no header rules (reference-service.md). */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (fastify, opts) => {
  fastify.get('/health', {
    // In the document like every route (reference-service.md, Running it: contract).
    schema: { summary: 'Readiness: UP once the store answers', response: { 200: { ...Health, description: 'The service is ready.' } } },
    config: { auth: false, conventions: false, rateLimit: false }
  }, async () => {
    try {
      await opts.check()
    } catch (err) {
      throw problems.unavailable('The store is not ready; retry shortly.', { cause: err, headers: { 'retry-after': 1 } })
    }
    return { status: 'UP' as const }
  })
}
