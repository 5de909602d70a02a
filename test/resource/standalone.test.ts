import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import resource, { defineResource, type ServedResource } from '../../plugins/resource/index.js'
import { Nullable } from '../../schemas/types.js'
import type { Store } from '../../store/types.js'
import { pglite } from '../support/databases.js'
import { prerequisites } from './helper.js'

// The resource plugin with only its prerequisites: no auth (execution context `prod`, no
// createdBy), and the locked read-merge-write of PATCH.

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

async function build (store: Store): Promise<FastifyInstance> {
  const app = await prerequisites(Fastify())
  await app.register(resource, { store, resources: [notes] })
  await app.ready()
  return app
}

t.test('standalone', async t => {
  const real = await pglite.create(t)
  const app = await build(real)
  t.teardown(() => app.close())

  const created = await app.inject({ method: 'POST', url: '/v1/notes', payload: { title: 'hello' } })
  t.equal(created.statusCode, 201)
  const note = JSON.parse(created.body)
  t.match(note, { title: 'hello', score: 0.5, hash: null, shout: 'HELLO', createdBy: null, modifiedBy: null })
  const url = `/v1/notes/${note.id as string}`

  t.test('a PATCH that removes a field reads the row, then writes it only while it is as read, with no transaction held open', async t => {
    const seen: string[] = []
    const { query, transaction } = real
    real.query = async (sql, params, o) => { seen.push(sql); return await query(sql, params, o) }
    real.transaction = async () => { throw new Error('no transaction expected') }
    t.teardown(() => { real.query = query; real.transaction = transaction })
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: { title: 'again', score: null } })
    t.equal(res.statusCode, 204)
    t.equal(seen.length, 2, 'two statements')
    t.match(seen[0], /^SELECT /)
    t.notMatch(seen[0], /FOR UPDATE/, 'the read holds no lock')
    t.match(seen[1], /^(WITH w AS \()?UPDATE .* t\.etag = x\.seen/s, 'the write applies only at the ETag it was decided on')
    real.query = query
    t.match(JSON.parse((await app.inject({ url })).body), { title: 'again', score: 0.5 }, 'the removed field has its default again')
  })

  t.test('a PATCH of whole fields is one statement, and no transaction', async t => {
    const seen: string[] = []
    const { query, transaction } = real
    real.query = async (sql, params, o) => { seen.push(sql); return await query(sql, params, o) }
    real.transaction = async () => { throw new Error('no transaction expected') }
    t.teardown(() => { real.query = query; real.transaction = transaction })
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: { score: 2 } })
    t.equal(res.statusCode, 204)
    t.equal(seen.length, 1, 'one statement')
    t.match(seen[0], /^WITH cur AS .*\bw AS \(UPDATE .* SET .*"score" = x\."score"/s, 'it sets the field it names')
    real.query = query
    t.match(JSON.parse((await app.inject({ url })).body), { title: 'again', score: 2 })
  })

  t.test('a server-side change of a read-only field goes through the write path', async t => {
    const { writer, store } = app.resources.get('notes') as ServedResource
    const current = JSON.parse((await app.inject({ url })).body)
    const set = async (etag: string): Promise<unknown> => (await store.transaction(async (tx) => await writer.run(tx, { ctx: 'prod', by: 'scanner', atomic: true }, [
      { action: 'set', id: note.id, values: { hash: 'abc' }, ifMatch: [{ weak: false, tag: etag }], ifNoneMatch: null }
    ])))[0]
    t.match(await set(current.etag), { failure: null, row: { hash: 'abc', modifiedBy: 'scanner' } })
    const after = JSON.parse((await app.inject({ url })).body)
    t.match(after, { title: current.title, score: current.score, hash: 'abc', modifiedBy: 'scanner' })
    t.not(after.etag, current.etag, 'a new ETag')
    t.match(await set('"stale"'), { failure: { kind: 'precondition-failed', header: 'If-Match', exists: true }, row: null })
    const put = await app.inject({ method: 'PUT', url, payload: { title: 'again' } })
    t.equal(put.statusCode, 204)
    t.match(JSON.parse((await app.inject({ url })).body), { title: 'again', score: 0.5, hash: 'abc' }, 'PUT keeps the read-only field')
  })

  t.test('an operation whose entity an earlier one of the same run deleted writes nothing: no row, no change', async t => {
    const { writer, store } = app.resources.get('notes') as ServedResource
    const doomed = JSON.parse((await app.inject({ method: 'POST', url: '/v1/notes', payload: { title: 'doomed' } })).body)
    const other = JSON.parse((await app.inject({ method: 'POST', url: '/v1/notes', payload: { title: 'other' } })).body)
    // Each is decided on the rows as read, before any is applied; the deletion goes first. (A bulk
    // request names an entity once: only an application's own call of the writer repeats one.)
    const results = await store.transaction(async (tx) => await writer.run(tx, { ctx: 'prod', by: 'app', atomic: false }, [
      { action: 'delete', id: doomed.id, values: {}, ifMatch: null, ifNoneMatch: null },
      { action: 'update', id: doomed.id, values: { title: 'too late' }, ifMatch: null, ifNoneMatch: null },
      { action: 'update', id: other.id, values: { title: 'renamed' }, ifMatch: null, ifNoneMatch: null }
    ]))
    t.match(results, [
      { failure: null, change: 'deleted', row: { id: doomed.id, title: 'doomed' } },
      { failure: null, change: null, row: null },
      { failure: null, change: 'updated', row: { id: other.id, title: 'renamed', modifiedBy: 'app' } }
    ])
    t.equal((await app.inject({ url: `/v1/notes/${doomed.id as string}` })).statusCode, 404, 'not written back')
    t.match(JSON.parse((await app.inject({ url: `/v1/notes/${other.id as string}` })).body), { title: 'renamed' }, 'the one in the same statement is written')
  })

  t.test('the same definition served twice on one store migrates once', async t => {
    const again = await build(real)
    t.teardown(() => again.close())
    t.equal((await again.inject({ url })).statusCode, 200)
  })
})
