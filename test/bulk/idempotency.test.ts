import t from 'tap'
import { databases } from '../support/databases.js'
import { api, build, count, headers, idemKey, json, type Json } from './helper.js'

// Svc-Idempotency-Key on the bulk endpoint: it is not idempotent (conventions: "Bulk
// endpoint"), so a key is kept with the changes it guarded, and using it again is a 409
// (Headers, Svc-Idempotency-Key: "a non-idempotent action returns 409"), never a second run.

const create = (name: string): Json => ({ operations: [{ action: 'CREATE', entity: { name, email: 'k@example.com' } }] })

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store)
    const { bulk } = api(app)

    t.test('a key used again: 409 and no second run, whatever the body', async t => {
      const key = idemKey()
      const first = await bulk('authors', create('Once'), { 'svc-idempotency-key': key })
      t.equal(first.statusCode, 200)
      t.equal(json(first).status, 'SUCCEEDED')
      const before = await count(store, 'authors')
      const again = await bulk('authors', create('Once'), { 'svc-idempotency-key': key })
      t.equal(again.statusCode, 409)
      t.match(json(again), { title: 'Conflict', instance: '/v1/authors', detail: /bulk PATCH is not idempotent, so it is not run again/ })
      const other = await bulk('authors', create('Other'), { 'svc-idempotency-key': key })
      t.equal(other.statusCode, 409)
      t.match(json(other).detail, 'with another body')
      const post = await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json', 'svc-idempotency-key': key }), payload: { name: 'P', email: 'p@example.com' } })
      t.equal(post.statusCode, 409, 'a POST with that key is refused too')
      t.match(json(post).detail, 'already used for PATCH /v1/authors')
      t.equal(await count(store, 'authors'), before, 'nothing created again')
    })

    t.test('a bulk that changed nothing keeps no key', async t => {
      const key = idemKey()
      const atomic = await bulk('authors', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'A', email: 'a@example.com' } }, { action: 'UPDATE', entity: { id: 'missing', name: 'B', email: 'b@example.com' } }] }, { 'svc-idempotency-key': key })
      t.equal(json(atomic).status, 'FAILED')
      const isolated = await bulk('authors', { operations: [{ action: 'UPDATE', entity: { id: 'missing', name: 'B', email: 'b@example.com' } }] }, { 'svc-idempotency-key': key })
      t.equal(isolated.statusCode, 200, 'the key is still free')
      t.equal(json(isolated).status, 'FAILED')
      const fixed = await bulk('authors', create('Fixed'), { 'svc-idempotency-key': key })
      t.equal(fixed.statusCode, 200, 'and free again after a FAILED ISOLATED bulk')
      t.equal(json(fixed).status, 'SUCCEEDED')
      t.equal((await bulk('authors', create('Fixed'), { 'svc-idempotency-key': key })).statusCode, 409, 'now it is kept')
    })

    t.test('keys of one execution context do not meet another', async t => {
      const key = idemKey()
      t.equal((await bulk('authors', create('Prod'), { 'svc-idempotency-key': key })).statusCode, 200)
      const pre = await bulk('authors', create('Prod'), { 'svc-idempotency-key': key, 'svc-execution-context': 'preprod' })
      t.equal(pre.statusCode, 200)
      t.equal(json(pre).status, 'SUCCEEDED')
    })
  })
}
