import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions, { type ConventionsOptions } from '../../plugins/conventions/index.js'

/** A User-Agent every rule accepts. */
export const UA = 'conventions-test/1 (tap)'

export interface TestContext { teardown: (fn: () => unknown) => void }

/** What the echo routes send back: the values the plugin put on the request. */
export interface Echo {
  executionContext: string
  callingService: unknown
  idempotencyKey: string | null
  negotiatedType: string | null
  body?: unknown
}

/**
 * Builds an app with the problem, validation and conventions plugins and a few routes:
 * `/echo` (GET, POST, PUT, DELETE), `/merge` (PATCH accepting merge-patch and JSON),
 * `/csv` (produces text/csv then JSON), `/health` (conventions off). `more` adds routes.
 */
export async function build (t: TestContext, opts: ConventionsOptions = {}, more?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, opts)
  const echo = async (request: { executionContext: string, callingService: unknown, idempotencyKey: string | null, negotiatedType: string | null, body?: unknown }): Promise<Echo> => ({
    executionContext: request.executionContext,
    callingService: request.callingService,
    idempotencyKey: request.idempotencyKey,
    negotiatedType: request.negotiatedType,
    body: request.body ?? null
  })
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE'], url: '/echo', handler: echo })
  app.patch('/merge', { config: { conventions: { contentTypes: ['application/merge-patch+json', 'application/json'] } } }, echo)
  app.get('/csv', { config: { conventions: { produces: ['text/csv', 'application/json'] } } }, echo)
  app.get('/health', { config: { conventions: false } }, echo)
  more?.(app)
  await app.ready()
  return app
}

/**
 * Request headers with a valid User-Agent unless `extra` says otherwise. An `undefined`
 * User-Agent or Content-Type is left out of the request (light-my-request's convention).
 */
export function headers (extra: Record<string, string | string[] | undefined> = {}): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = { 'user-agent': UA }
  for (const [k, v] of Object.entries(extra)) {
    if (v !== undefined || k === 'user-agent' || k === 'content-type') out[k] = v
  }
  return out
}
