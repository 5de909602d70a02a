import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { databases } from '../support/databases.js'
import { build, count, headers, listen, unique, type Json } from './helper.js'

// Bulks fired in parallel at listening servers (on a PostgreSQL server, at two service
// instances sharing one database): constraints and ifMatch hold across requests, and
// bulks touching the same rows in any order do not deadlock.

const N = 6

async function call (base: string, path: string, body: unknown): Promise<{ status: number, body: Json }> {
  const res = await fetch(base + path, { method: 'PATCH', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body) })
  return { status: res.status, body: await res.json() as Json }
}

async function post (base: string, path: string, body: unknown): Promise<Json> {
  const res = await fetch(base + path, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(await res.text())
  return await res.json() as Json
}

function shuffled<T> (list: readonly T[], seed: number): T[] {
  const out = [...list]
  for (let i = out.length - 1; i > 0; i--) {
    const j = (seed * 31 + i * 17) % (i + 1)
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t, { pool: { max: N + 2 } })
    const app = await build(t, store)
    const bases = [await listen(app)]
    if (db.sibling !== undefined) {
      const other: FastifyInstance = await build(t, await db.sibling(t, store, { pool: { max: N + 2 } }))
      bases.push(await listen(other))
    }
    const base = (i: number): string => bases[i % bases.length] as string
    const author = await post(base(0), '/v1/authors', { name: 'Ann', email: 'ann@example.com' })

    t.test('parallel ATOMIC bulks creating the same name: one stores everything, the others nothing', async t => {
      const shared = unique()
      const before = await count(store, 'documents')
      const answers = await Promise.all(Array.from({ length: N }, (_, i) => call(base(i), '/v1/documents', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: unique(), authorId: author.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: shared, authorId: author.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: unique(), authorId: author.id, kind: 'INVOICE' } }
        ]
      })))
      t.same(answers.map(a => a.status), Array(N).fill(200))
      const won = answers.filter(a => a.body.status === 'SUCCEEDED')
      const lost = answers.filter(a => a.body.status === 'FAILED')
      t.equal(won.length, 1, 'one bulk succeeded')
      t.equal(lost.length, N - 1, 'the others failed entirely')
      for (const a of lost) {
        t.equal(a.body.operations[1].result.context[0].code, 'UNIQUE_NAME_VIOLATION')
        t.same(a.body.operations.map((o: Json) => o.result.status), ['FAILED', 'FAILED', 'FAILED'])
      }
      t.equal(await count(store, 'documents'), before + 3, 'only the winner\'s three rows')
    })

    t.test('parallel bulks with one ifMatch on the same entity: exactly one applies', async t => {
      const d = await post(base(0), '/v1/documents', { name: unique(), authorId: author.id, kind: 'INVOICE' })
      const answers = await Promise.all(Array.from({ length: N }, (_, i) => call(base(i), '/v1/documents', {
        operations: [{ action: 'UPDATE', ifMatch: d.etag, entity: { id: d.id, name: d.name, authorId: author.id, kind: 'INVOICE', pageCount: i + 1 } }]
      })))
      const results = answers.map(a => a.body.operations[0].result)
      t.equal(results.filter(r => r.status === 'SUCCEEDED').length, 1)
      t.equal(results.filter(r => r.context?.[0].code === 'PRECONDITION_FAILED').length, N - 1)
    })

    t.test('parallel bulks changing the same rows in different orders all succeed (no deadlock)', async t => {
      const people = await Promise.all(Array.from({ length: 5 }, (_, i) => post(base(0), '/v1/authors', { name: `P${i}`, email: 'p@example.com' })))
      const answers = await Promise.all(Array.from({ length: N }, (_, i) => call(base(i), '/v1/authors', {
        operations: shuffled(people, i + 1).map(p => ({ action: 'UPDATE', entity: { id: p.id, name: `${p.name as string}-${i}`, email: 'p@example.com' } }))
      })))
      t.same(answers.map(a => a.body.status), Array(N).fill('SUCCEEDED'), JSON.stringify(answers.find(a => a.body.status !== 'SUCCEEDED')?.body))
    })
  })
}
