import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Store } from '../../store/types.js'
import { databases } from '../support/databases.js'
import { build, count, headers, listen, shuffled, unique, type Json } from './helper.js'

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
      t.strictSame(answers.map(a => a.status), Array(N).fill(200))
      const won = answers.filter(a => a.body.status === 'SUCCEEDED')
      const lost = answers.filter(a => a.body.status === 'FAILED')
      t.equal(won.length, 1, 'one bulk succeeded')
      t.equal(lost.length, N - 1, 'the others failed entirely')
      for (const a of lost) {
        t.equal(a.body.operations[1].result.context[0].code, 'UNIQUE_NAME_VIOLATION')
        t.strictSame(a.body.operations.map((o: Json) => o.result.status), ['FAILED', 'FAILED', 'FAILED'])
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
      t.strictSame(answers.map(a => a.body.status), Array(N).fill('SUCCEEDED'), JSON.stringify(answers.find(a => a.body.status !== 'SUCCEEDED')?.body))
    })

    t.test('CREATE_UPDATE of an id another transaction creates meanwhile: runs again and updates it', async t => {
      const id = `race-${unique()}`
      let created!: () => void
      const inserted = new Promise<void>((resolve) => { created = resolve })
      let answer: Promise<{ status: number, body: Json }> | undefined
      await store.transaction(async (tx) => {
        await tx.query('INSERT INTO authors (ctx, id, name, email, active, etag, "createdDateTime", "modifiedDateTime") VALUES ($1, $2, $3, $4, true, $5, now(), now())', ['prod', id, 'First', 'first@example.com', 'e1'])
        created()
        // The bulk's prefetch does not see the uncommitted row; its insert waits for this commit.
        answer = call(base(0), '/v1/authors', { operations: [{ action: 'CREATE_UPDATE', entity: { id, name: 'Second', email: 'second@example.com' } }] })
        if (store.kind === 'pg') await waitForLockWait(store)
      })
      await inserted
      const { status, body } = await (answer as Promise<{ status: number, body: Json }>)
      t.equal(status, 200)
      t.equal(body.operations[0].result.status, 'SUCCEEDED', JSON.stringify(body))
      const { rows } = await store.query<{ name: string }>('SELECT name FROM authors WHERE ctx = $1 AND id = $2', ['prod', id])
      t.strictSame(rows, [{ name: 'Second' }], 'updated, as if it had come second')
    })

    t.test('a bulk chosen as a deadlock victim runs again and succeeds', { skip: store.kind === 'pg' ? false : 'one PGlite connection cannot deadlock' }, async t => {
      const [lo, hi] = (await Promise.all([0, 1].map(i => post(base(0), '/v1/authors', { name: `D${i}-${unique()}`, email: 'd@example.com' })))).map(a => a.id as string).sort()
      let answer: Promise<{ status: number, body: Json }> | undefined
      await store.transaction(async (tx) => {
        // This side waits longest before checking for a deadlock, so the bulk is the victim.
        await tx.query("SET LOCAL deadlock_timeout = '10s'")
        await tx.query('SELECT 1 FROM authors WHERE ctx = $1 AND id = $2 FOR UPDATE', ['prod', hi])
        // The bulk's prefetch locks in id order: it takes lo, then waits for hi.
        answer = call(base(0), '/v1/authors', { operations: [lo, hi].map(id => ({ action: 'UPDATE', entity: { id, name: `V-${id}`, email: 'v@example.com' } })) })
        await waitForLockWait(store)
        await tx.query('SELECT 1 FROM authors WHERE ctx = $1 AND id = $2 FOR UPDATE', ['prod', lo])
      })
      const { status, body } = await (answer as Promise<{ status: number, body: Json }>)
      t.equal(status, 200, JSON.stringify(body))
      t.strictSame(body.operations.map((o: Json) => o.result.status), ['SUCCEEDED', 'SUCCEEDED'])
    })
  })
}

/** Resolves once some session waits for a row lock (a PostgreSQL server only). */
async function waitForLockWait (store: Store): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    if ((rows[0]?.n ?? 0) > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('no session came to wait for a lock')
}
