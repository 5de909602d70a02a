import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import problem from '../../plugins/problem/index.js'
import auth, { signToken } from '../../plugins/auth/index.js'
import rateLimit, { type RateLimitPluginOptions } from '../../plugins/rate-limit/index.js'

export const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

export interface BuildOptions {
  /** Register the rate limit before auth instead of after (the order must not matter). */
  rateLimitFirst?: boolean
  routes?: (app: FastifyInstance) => void
}

/**
 * An app with optional bearer auth (a token is verified when sent) and the rate limit,
 * behind a trusted proxy, with `GET /things` and the routes given.
 */
export async function build (t: Test, opts: RateLimitPluginOptions, build: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: true })
  await app.register(problem)
  if (build.rateLimitFirst === true) await app.register(rateLimit, opts)
  await app.register(auth, { verifier: { secret: SECRET }, required: false })
  if (build.rateLimitFirst !== true) await app.register(rateLimit, opts)
  app.get('/things', async (request) => ({ sub: request.principal?.sub ?? null }))
  build.routes?.(app)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** A bearer header for `sub`. */
export function bearer (sub: string): string {
  return `Bearer ${signToken({ secret: SECRET, sub })}`
}

export function bodyOf (res: { body: string }): Record<string, any> {
  return JSON.parse(res.body)
}
