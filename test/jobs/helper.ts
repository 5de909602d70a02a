import Fastify, { type FastifyInstance } from 'fastify'
import { auth, conventions, jobs, problem, query, validation, type JobHandler, type JobsPluginOptions, type Store } from '../../index.js'
import { CURSOR_SECRET, SECRET, type Teardown } from '../resource/helper.js'

export { headers, json, token, SECRET } from '../resource/helper.js'

/** The jobs plugin behind its prerequisites, with `handlers` defined, ready. */
export async function build (t: Teardown, store: Store, opts: Omit<JobsPluginOptions, 'store'> = {}, handlers: Record<string, JobHandler> = {}, routes?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(jobs, { store, pollMillis: 20, retryMillis: 5, readScopes: { things: ['things:read'], others: ['others:read'] }, ...opts })
  for (const [kind, handler] of Object.entries(handlers)) app.jobs.define(kind, handler)
  routes?.(app)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** Resolves once `check` holds, looking every 20 ms; rejects after `seconds` (a generous bound: nothing here races it). */
export async function eventually<T> (check: () => Promise<T | null | undefined | false>, seconds = 60): Promise<T> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = await check()
    if (value !== null && value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error('eventually: the condition never held')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
