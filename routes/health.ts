import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problems } from '../plugins/problem/errors.js'

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
    try {
      await opts.check()
    } catch (err) {
      throw problems.unavailable('The store is not ready; retry shortly.', { cause: err, headers: { 'retry-after': 1 } })
    }
    return { status: 'UP' as const }
  })
}
