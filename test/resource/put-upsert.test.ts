import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { databases } from '../support/databases.js'
import { BACKGROUND, countStatements } from '../support/count-statements.js'
import { build, client, idemKey, json } from './helper.js'

// A PUT without If-Match creates the entity or replaces it in one statement (an upsert,
// Writer.one), with or without an idempotency key: the key is taken for the write that applies,
// answered again to its retry, and never taken for a replacement the entity's state refuses (a
// deleted one), whose request can then be retried once the entity is restored.

const notes = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: { title: Type.String({ minLength: 1, maxLength: 50 }), body: Type.String({ maxLength: 200, default: '' }) },
  softDelete: true
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store, { resources: [notes] })
    const c = client(app)
    const sql = countStatements(store)
    t.teardown(() => { sql.restore() })
    /** The statements a request sends. */
    const sent = async <T>(fn: () => Promise<T>): Promise<{ answer: T, statements: number }> => {
      sql.reset()
      const answer = await fn()
      return { answer, statements: sql.texts().filter(text => !BACKGROUND.test(text)).length }
    }

    t.test('created, then replaced: one statement each, the creation stamps kept', async t => {
      const url = `/v1/notes/${crypto.randomUUID()}`
      const made = await sent(async () => await c.put(url, { title: 'first' }))
      t.equal(made.answer.statusCode, 204, made.answer.body)
      t.equal(made.statements, 1)
      const first = json(await c.get(url))
      t.match(first, { title: 'first', body: '', etag: made.answer.headers.etag, deletedDateTime: null })
      const replaced = await sent(async () => await c.put(url, { title: 'second', body: 'more' }))
      t.equal(replaced.answer.statusCode, 204, replaced.answer.body)
      t.equal(replaced.statements, 1)
      const second = json(await c.get(url))
      t.match(second, { title: 'second', body: 'more', etag: replaced.answer.headers.etag, createdDateTime: first.createdDateTime, createdBy: first.createdBy })
      t.not(second.etag, first.etag)
    })

    t.test('with an idempotency key: one statement, its retry answered again, another body refused', async t => {
      const url = `/v1/notes/${crypto.randomUUID()}`
      const key = idemKey()
      const made = await sent(async () => await c.put(url, { title: 'keyed' }, { 'svc-idempotency-key': key }))
      t.equal(made.answer.statusCode, 204, made.answer.body)
      t.equal(made.statements, 1, 'the key claimed in the upsert\'s statement')
      const retry = await c.put(url, { title: 'keyed' }, { 'svc-idempotency-key': key })
      t.equal(retry.statusCode, 204)
      t.equal(retry.headers.etag, made.answer.headers.etag, 'the first answer again')
      t.equal(json(await c.get(url)).etag, made.answer.headers.etag, 'written once')
      const other = await c.put(url, { title: 'another' }, { 'svc-idempotency-key': key })
      t.equal(other.statusCode, 409, other.body)
      const replaced = await sent(async () => await c.put(url, { title: 'replaced' }, { 'svc-idempotency-key': idemKey() }))
      t.equal(replaced.answer.statusCode, 204, replaced.answer.body)
      t.equal(replaced.statements, 1, 'a replacement with a key of its own: one statement too')
      t.match(json(await c.get(url)), { title: 'replaced', etag: replaced.answer.headers.etag })
    })

    t.test('a deleted entity: 409, and its key left free for the retry after a restore', async t => {
      const url = `/v1/notes/${crypto.randomUUID()}`
      t.equal((await c.put(url, { title: 'to delete' })).statusCode, 204)
      t.equal((await c.delete(url)).statusCode, 204)
      const key = idemKey()
      const refused = await c.put(url, { title: 'too late' }, { 'svc-idempotency-key': key })
      t.equal(refused.statusCode, 409, refused.body)
      t.match(json(refused).context, [{ code: 'ENTITY_DELETED' }])
      const plain = await c.put(url, { title: 'too late' })
      t.equal(plain.statusCode, 409, 'without a key too')
      t.equal((await c.post(`${url}/restore`, undefined)).statusCode, 200)
      const retried = await c.put(url, { title: 'too late' }, { 'svc-idempotency-key': key })
      t.equal(retried.statusCode, 204, `the key was not taken by the refusal: ${retried.body}`)
      t.match(json(await c.get(url)), { title: 'too late', etag: retried.headers.etag, deletedDateTime: null })
    })

    t.test('concurrent PUTs of one new id: every one applies, and the entity is made once', async t => {
      const id = crypto.randomUUID()
      const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => await c.put(`/v1/notes/${id}`, { title: `racer ${i}` })))
      t.strictSame(answers.map(a => a.statusCode), Array(8).fill(204), answers.map(a => a.body).join())
      const stored = json(await c.get(`/v1/notes/${id}`))
      t.ok(answers.some(a => a.headers.etag === stored.etag), 'the entity is the last write')
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::integer AS n FROM notes WHERE id = $1', [id])
      t.equal(rows[0]?.n, 1)
    })
  })
}
