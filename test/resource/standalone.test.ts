import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import resource from '../../plugins/resource/index.js'
import { defineResource } from '../../plugins/resource/define.js'
import { Repository } from '../../plugins/resource/repository.js'
import { Nullable } from '../../schemas/types.js'
import type { Store } from '../../store/types.js'
import { pglite } from '../support/databases.js'

// The resource plugin alone: no conventions, no auth (execution context `prod`, no
// createdBy), and the compare-and-set retry of PATCH under a simulated concurrent writer.

const notes = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 50 }),
    score: Type.Number({ default: 0.5 }),
    hash: Nullable(Type.String())
  },
  readOnly: ['hash'],
  derived: { shout: { schema: Type.String(), value: (e) => String(e.title).toUpperCase() } }
})

/** A store whose every read of a note is followed by a "concurrent" write when `interfere` says so. */
function meddling (store: Store, interfere: () => boolean): Store {
  return {
    ...store,
    async query (sql, params) {
      const res = await store.query(sql, params)
      if (sql.startsWith('SELECT id, etag') && sql.includes('"notes"') && interfere()) {
        await store.query('UPDATE notes SET etag = $1 WHERE id = $2', [`"other-${Math.random()}"`, params?.[1]])
      }
      return res
    }
  } as Store
}

async function build (store: Store): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(resource, { store, resources: [notes] })
  await app.ready()
  return app
}

t.test('standalone', async t => {
  const real = await pglite.create(t)
  let interferences = 0
  const store = meddling(real, () => interferences-- > 0)
  const app = await build(store)
  t.teardown(() => app.close())

  const created = await app.inject({ method: 'POST', url: '/v1/notes', payload: { title: 'hello' } })
  t.equal(created.statusCode, 201)
  const note = JSON.parse(created.body)
  t.match(note, { title: 'hello', score: 0.5, hash: null, shout: 'HELLO', createdBy: null, modifiedBy: null })
  const url = `/v1/notes/${note.id as string}`

  t.test('a PATCH that loses a race reads again and applies', async t => {
    interferences = 2
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: { score: 2 } })
    t.equal(res.statusCode, 204)
    t.equal(JSON.parse((await app.inject({ url })).body).score, 2)
  })

  t.test('one that keeps losing gives up with 412', async t => {
    interferences = 100
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/json' }, payload: { score: 3 } })
    t.equal(res.statusCode, 412)
    t.match(JSON.parse(res.body).detail, 'changed by another request')
    interferences = 0
  })

  t.test('with If-Match, a lost race is a 412 at once', async t => {
    const current = JSON.parse((await app.inject({ url })).body)
    interferences = 1
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/json', 'if-match': current.etag }, payload: { score: 4 } })
    t.equal(res.statusCode, 412)
    t.equal(interferences, 0)
  })

  t.test('with If-Match: *, a lost race is read again like without it', async t => {
    interferences = 1
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/json', 'if-match': '*' }, payload: { score: 5 } })
    t.equal(res.statusCode, 204)
    t.equal(JSON.parse((await app.inject({ url })).body).score, 5)
  })

  t.test('a server-side change of a read-only field goes through the repository', async t => {
    const repo = app.resources.get('notes')?.repository as Repository
    const current = JSON.parse((await app.inject({ url })).body)
    const ok = await repo.update(real, { ctx: 'prod', id: note.id, etag: '"scanned"', by: 'scanner', values: { title: current.title, score: current.score, hash: 'abc' } }, { match: [current.etag] }, 'stored')
    t.equal(ok, true)
    const after = JSON.parse((await app.inject({ url })).body)
    t.match(after, { hash: 'abc', etag: '"scanned"', modifiedBy: 'scanner' })
    t.equal(await repo.update(real, { ctx: 'prod', id: note.id, etag: '"x"', by: null, values: after }, { match: ['"stale"'] }, 'stored'), false)
    const put = await app.inject({ method: 'PUT', url, payload: { title: 'again' } })
    t.equal(put.statusCode, 204)
    t.match(JSON.parse((await app.inject({ url })).body), { title: 'again', score: 0.5, hash: 'abc' }, 'PUT keeps the read-only field')
  })

  t.test('the same definition served twice on one store migrates once', async t => {
    const again = await build(real)
    t.teardown(() => again.close())
    t.equal((await again.inject({ url })).statusCode, 200)
  })
})
