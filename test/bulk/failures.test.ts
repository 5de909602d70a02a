import t from 'tap'
import { SerializationFailure, StoreError, Unavailable } from '../../store/errors.js'
import type { Queryable, Store, Tx } from '../../store/types.js'
import { databases } from '../support/databases.js'
import { api, build, count, json, leaksNothing, unique, type Json } from './helper.js'

// System failures are 5xx problems, never a 200 with everything failed (conventions: "Bulk
// errors"); constraint failures found only at run time stay per-operation failures. Faults
// are injected into the bulk's statements by a wrapping store.

/** Decides, per statement of a bulk transaction, whether it fails and how. */
type Fault = (sql: string) => Error | 'empty' | undefined

function faulty (store: Store, fault: () => Fault | undefined): Store {
  const wrap = (q: Queryable & { savepoint?: Tx['savepoint'] }): Tx => ({
    async query (sql, params, options) {
      const f = fault()?.(sql)
      if (f === 'empty') return { rows: [], rowCount: 0 }
      if (f !== undefined) throw f
      return await q.query(sql, params, options)
    },
    exec: async (sql) => { await q.exec(sql) },
    savepoint: async (fn) => await (q.savepoint as Tx['savepoint'])(async (inner) => await fn(wrap(inner)))
  } as Tx)
  // A bulk of new entities is one statement with no transaction (Writer.alone): faults reach it too.
  const alone = wrap(store)
  return { ...store, query: alone.query, transaction: async (fn, opts) => await store.transaction(async (tx) => await fn(wrap(tx)), opts) } as Store
}

for (const db of databases) {
  t.test(`${db.label}: a closed store is a 503 problem`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store)
    await store.close()
    const res = await api(app).bulk('authors', { operations: [{ action: 'CREATE', entity: { name: 'A', email: 'a@example.com' } }] })
    t.equal(res.statusCode, 503)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.equal(res.headers['retry-after'], '1')
    t.match(json(res), { status: 503, title: 'Service Unavailable', detail: 'The database is unavailable; retry later.' })
    t.ok(leaksNothing(res.body))
    const invalid = await api(app).bulk('authors', { operations: [{ action: 'CREATE', entity: {} }] })
    t.equal(invalid.statusCode, 200, 'operations refused before any statement need no database')
    t.equal(json(invalid).status, 'FAILED')
  })
}

for (const db of databases) {
  t.test(`${db.label}: injected faults`, { skip: db.skip }, async t => {
    const real = await db.create(t)
    let fault: Fault | undefined
    const app = await build(t, faulty(real, () => fault))
    const { bulk, post } = api(app)
    t.afterEach(() => { fault = undefined })

    const author = (name: string): Json => ({ action: 'CREATE', entity: { name, email: 'a@example.com' } })
    const on = (pattern: RegExp, err: Error | 'empty'): Fault => (sql) => pattern.test(sql) ? err : undefined

    // Two authors to update. Alone, the two updates are one statement, after a read of their rows
    // (Writer.alone); beside a deletion (of nothing), a batch inside the bulk's transaction.
    const kept = [await post('/v1/authors', { name: 'Kept 1', email: 'k1@example.com' }), await post('/v1/authors', { name: 'Kept 2', email: 'k2@example.com' })]
    const changes = kept.map(a => ({ action: 'UPDATE', entity: { id: a.id, name: 'changed', email: 'c@example.com' } }))
    const updates: Json = { operations: [...changes, { action: 'DELETE', entity: { id: 'none' } }] }
    const alone: Json = { operations: changes }
    // On a server, updates alone are one statement after a read; on the embedded store, a batch in a transaction.
    const server = real.kind === 'pg'
    const system: Array<[string, Json, Fault, number]> = [
      ['the database goes away during a batch in a transaction', updates, on(/^(WITH w AS \()?UPDATE "authors"/, new Unavailable()), 503],
      ['an unexpected error during a batch in a transaction', updates, on(/^(WITH w AS \()?UPDATE "authors"/, new TypeError('boom')), 500],
      ...(server
        ? [
          ['the database goes away while the rows of updates alone are read', alone, on(/^SELECT .* FROM "authors" WHERE ctx = \$1 AND id = ANY\(\$2::text\[\]\)$/s, new Unavailable()), 503],
          ['the database goes away during the one statement of updates alone', alone, on(/^WITH (q AS [^]*?\n)?g AS \(SELECT t\.id FROM "authors"/, new Unavailable()), 503],
          ['an unexpected error during the one statement of updates alone', alone, on(/^WITH (q AS [^]*?\n)?g AS \(SELECT t\.id FROM "authors"/, new TypeError('boom')), 500]
        ] satisfies Array<[string, Json, Fault, number]>
        : []),
      ['the database goes away during a batch', { operations: [author('a'), author('b')] }, on(/^(WITH w AS \()?INSERT/, new Unavailable()), 503],
      ['the database goes away during one operation', { operations: [author('a')] }, on(/^(WITH w AS \()?INSERT/, new Unavailable()), 503],
      ['the database goes away during the prefetch', { operations: [{ action: 'DELETE', entity: { id: 'x' } }] }, on(/FOR UPDATE/, new Unavailable()), 503],
      ['an unexpected error during a batch', { operations: [author('a'), author('b')] }, on(/^(WITH w AS \()?INSERT/, new TypeError('boom')), 500],
      ['an unexpected error during one operation', { transactionMode: 'ATOMIC', operations: [author('a')] }, on(/^(WITH w AS \()?INSERT/, new TypeError('boom')), 500],
      ['a statement refused for no constraint', { operations: [author('a')] }, on(/^(WITH w AS \()?INSERT/, new StoreError('refused')), 500]
    ]
    for (const [name, body, f, status] of system) {
      t.test(`${name}: ${status}, nothing stored`, async t => {
        const before = await count(real, 'authors')
        fault = f
        const res = await bulk('authors', body)
        t.equal(res.statusCode, status, res.body)
        t.match(res.headers['content-type'], /^application\/problem\+json/)
        t.ok(leaksNothing(res.body))
        t.notMatch(res.body, /boom|refused/)
        fault = undefined
        t.equal(await count(real, 'authors'), before)
        for (const a of kept) t.equal(json(await api(app).get(`/v1/authors/${a.id as string}`)).name, a.name, 'nothing changed')
      })
    }

    /** A fault on the first statement matching `pattern` only: a race that happens once. */
    const once = (pattern: RegExp, err: Error | 'empty'): Fault => {
      let fired = false
      return (sql) => {
        if (fired || !pattern.test(sql)) return undefined
        fired = true
        return err
      }
    }

    t.test('a deadlock or serialization failure runs the whole bulk again', async t => {
      fault = once(/^(WITH w AS \()?INSERT INTO "authors"/, new SerializationFailure({ sqlState: '40P01' }))
      const body = json(await bulk('authors', { operations: [author(unique()), { action: 'DELETE', entity: { id: 'none' } }] }))
      t.strictSame(statuses(body), ['SUCCEEDED', 'SUCCEEDED'], 'the second run decided every operation afresh')
      fault = once(/^(WITH w AS \()?INSERT INTO "authors"/, new SerializationFailure({ sqlState: '40001' }))
      const atomic = json(await bulk('authors', { transactionMode: 'ATOMIC', operations: [{ action: 'DELETE', entity: { id: 'none' } }, author(unique())] }))
      t.strictSame(statuses(atomic), ['SUCCEEDED', 'SUCCEEDED'])
      // Kinds in turns, each written by one statement out of request order, in a savepoint: a
      // deadlock there is no constraint to look for in request order, and the bulk runs again.
      const e = await post('/v1/authors', { name: unique(), email: 'e@example.com' })
      fault = once(/^(WITH w AS \()?INSERT INTO "authors"/, new SerializationFailure({ sqlState: '40P01' }))
      const turns = json(await bulk('authors', { transactionMode: 'ATOMIC', operations: [author(unique()), { action: 'UPDATE', entity: { id: e.id, name: 'Turned', email: 'e@example.com' } }, author(unique())] }))
      t.strictSame(statuses(turns), ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED'])
      t.equal(json(await api(app).get(`/v1/authors/${e.id as string}`)).name, 'Turned')
      // Updates alone, their one statement (on a server) a deadlock's victim: nothing written, then the transaction.
      const two = [await post('/v1/authors', { name: unique(), email: 'd@example.com' }), await post('/v1/authors', { name: unique(), email: 'd@example.com' })]
      fault = once(/^(WITH (q AS [^]*?\n)?g AS \(SELECT t\.id FROM|(WITH w AS \()?UPDATE) "authors"/, new SerializationFailure({ sqlState: '40P01' }))
      const updated = json(await bulk('authors', { transactionMode: 'ATOMIC', operations: two.map(a => ({ action: 'UPDATE', entity: { id: a.id, name: `${a.name as string} 2`, email: 'd@example.com' } })) }))
      t.strictSame(statuses(updated), ['SUCCEEDED', 'SUCCEEDED'])
      for (const a of two) t.equal(json(await api(app).get(`/v1/authors/${a.id as string}`)).name, `${a.name as string} 2`)
    })

    t.test('one that keeps failing so: a 409 problem, nothing stored', async t => {
      const before = await count(real, 'authors')
      fault = on(/^(WITH w AS \()?INSERT INTO "authors"/, new SerializationFailure({ sqlState: '40P01' }))
      const res = await bulk('authors', { operations: [author(unique())] })
      t.equal(res.statusCode, 409)
      t.match(json(res), { title: 'Conflict', detail: 'The author was changed by a concurrent request; retry.' })
      fault = undefined
      t.equal(await count(real, 'authors'), before)
    })

    t.test('an id created after the prefetch read: the bulk runs again and updates it', async t => {
      const a = await post('/v1/authors', { name: 'First', email: 'f@example.com' })
      // The prefetch sees nothing, as if another request created the entity just after it.
      fault = once(/FOR UPDATE/, 'empty')
      const body = json(await bulk('authors', { operations: [{ action: 'CREATE_UPDATE', entity: { id: a.id, name: 'Second', email: 's@example.com' } }, author(unique())] }))
      t.strictSame(statuses(body), ['SUCCEEDED', 'SUCCEEDED'])
      t.equal(json(await api(app).get(`/v1/authors/${a.id as string}`)).name, 'Second', 'updated, as if it had come second')
    })

    t.test('an UPDATE of an id the prefetch did not see fails as not found, without running again', async t => {
      const a = await post('/v1/authors', { name: unique(), email: 'f@example.com' })
      // UPDATE of an id the prefetch did not see: no insert race, the operation fails as not found.
      fault = once(/FOR UPDATE$/, 'empty')
      const body = json(await bulk('authors', { operations: [{ action: 'UPDATE', entity: { id: a.id, name: 'X', email: 'x@example.com' } }, { action: 'DELETE', entity: { id: 'none' } }] }))
      t.strictSame(statuses(body), ['FAILED', 'SUCCEEDED'])
      t.equal(body.operations[0].result.context[0].code, 'ENTITY_NOT_FOUND')
    })
  })
}

function statuses (body: Json): string[] {
  return body.operations.map((o: Json) => o.result.status)
}
