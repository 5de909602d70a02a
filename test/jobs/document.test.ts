import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { auth, conventions, jobs, openapi, problem, query, validation } from '../../index.js'
import { pglite } from '../support/databases.js'
import { CURSOR_SECRET, SECRET } from '../resource/helper.js'

// The jobs' reads check their scopes themselves, per job: the document names the sets any one
// of which reads some jobs (security alternatives), or none when a collection needs none.

async function documented (t: Test, readScopes: Record<string, string[]>): Promise<Record<string, unknown>> {
  const store = await pglite.create(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(openapi)
  await app.register(jobs, { store, worker: false, readScopes })
  await app.ready()
  const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, Record<string, { security?: unknown }>> }
  return { list: doc.paths['/jobs']?.get?.security, item: doc.paths['/jobs/{jobId}']?.get?.security }
}

t.test('security: one requirement per set of read scopes, each set once', async t => {
  t.strictSame(await documented(t, { things: ['things:read'], others: ['others:read', 'audit'], copies: ['things:read'] }), {
    list: [{ bearerAuth: ['things:read'] }, { bearerAuth: ['others:read', 'audit'] }],
    item: [{ bearerAuth: ['things:read'] }, { bearerAuth: ['others:read', 'audit'] }]
  })
})

t.test('security: a collection whose jobs need no scope leaves the document\'s own bearer requirement', async t => {
  t.strictSame(await documented(t, { things: [], others: ['others:read'] }), { list: undefined, item: undefined })
})
