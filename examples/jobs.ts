// The example of docs/plugins/jobs.md, a whole program: POST /v1/reports accepts work with a
// 202 and a monitor link, any instance runs the job, GET /v1/jobs/{jobId} shows it.
// In this repository: AUTH_JWT_SECRET=$(openssl rand -hex 32) node --conditions=svc-conventions-source \
//   --import tsx examples/jobs.ts
// #region readme-jobs
import { randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { problem, conventions, auth, query, jobs, createStore } from 'svc-conventions'

export async function build (options: FastifyServerOptions = {}, jwtSecret = process.env.AUTH_JWT_SECRET): Promise<FastifyInstance> {
  // DATABASE_URL=postgres://… → a PostgreSQL server, where several instances share the jobs;
  // else PGlite in DATA_DIR, or in memory.
  const store = createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  const app = Fastify(options)
  app.addHook('onClose', async () => { await store.close() })
  await app.register(problem)
  await app.register(conventions) // the execution context a job belongs to
  await app.register(auth, { verifier: { secret: jwtSecret ?? '' } })
  await app.register(query, { cursorSecret: process.env.CURSOR_SECRET ?? 'an example secret, use 32 random bytes' }) // pages of GET /v1/jobs
  await app.register(jobs, { store, path: '/v1/jobs', readScopes: { reports: ['reports:read'] } })

  // The work: any instance runs it, each unit in a transaction that holds the job.
  app.jobs.define('REPORT', async (run) => {
    const rows = await run.transaction(async (tx) => (await tx.query('SELECT count(*)::int AS n FROM jobs')).rows)
    return { result: { jobs: rows[0]?.n }, completedCount: 1 }
  })
  app.post('/v1/reports', { config: { auth: { scopes: ['reports:write'] } } }, async (request, reply) => {
    // The job is written in the transaction that accepts the work: it exists exactly when that commits.
    const job = await store.transaction(async (tx) => await app.jobs.enqueue(tx, {
      ctx: request.executionContext,
      id: randomUUID(),
      kind: 'REPORT',
      collection: 'reports',
      subject: request.principal?.sub ?? '',
      input: {},
      operationCount: 1,
      requestId: request.requestId
    }))
    app.jobs.wake()
    return reply.accepted(job) // 202, Link: </v1/jobs/<id>>; rel="monitor", the job
  })
  return app
}

// Run as a program (tests import build instead): listen on PORT, 3000 by default.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await build({ logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
// #endregion
