import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import resource, { defineResource, type ServedResource, type WriteCall, type WriteOp } from '../../plugins/resource/index.js'
import type { Queryable, Tx } from '../../store/types.js'
import { Unavailable } from '../../store/errors.js'
import { databases } from '../support/databases.js'
import { prerequisites } from './helper.js'

// A transaction of the write path (`writer.run`, a bulk request, a job) in two halves:
// `writer.plan` decides, before the transaction opens, what needs no row read (a new entity with
// a server-made id), and makes the statements when that is every operation; `writer.execute`
// runs the plan in the transaction, which then holds its connection for its statements alone.
// `writer.planRead` decides the operations on existing entities too, on their rows read first;
// `execute` keeps those decisions while its locked read finds the rows as they were read.

const tags = defineResource({
  name: 'tag',
  collection: 'tags',
  path: '/v1/tags',
  idParam: 'tagId',
  fields: { label: Type.String({ minLength: 1 }), weight: Type.Number({ default: 1 }) },
  unique: ['label']
})

const create = (id: string, label: string): WriteOp => ({ action: 'create', id, values: { label }, ifMatch: null, ifNoneMatch: null })

/** `tx` whose statements (and its savepoints') are listed in `sent`. */
function listed (tx: Tx, sent: string[]): Tx {
  const q = (db: Queryable): Queryable => ({
    query: async (sql, params, options) => { sent.push(sql); return await db.query(sql, params, options) },
    exec: async (sql) => { sent.push(sql); await db.exec(sql) }
  })
  return { ...q(tx), savepoint: async (fn) => { sent.push('SAVEPOINT'); return await tx.savepoint(async (inner) => await fn(listed(inner, sent))) } }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await prerequisites(Fastify())
    await app.register(resource, { store, resources: [tags] })
    await app.ready()
    t.teardown(() => app.close())
    const { writer, table } = app.resources.get('tags') as ServedResource
    const statement = table.statement.bind(table)
    let made = 0
    table.statement = (w) => { made++; return statement(w) }
    t.teardown(() => { table.statement = statement })
    let n = 0
    const call = (atomic: boolean): WriteCall => ({ ctx: 'prod', by: 'planner', atomic })
    const etagOf = async (id: string): Promise<string | null> => await table.etagOf(store, 'prod', id)

    for (const atomic of [true, false]) {
      t.test(`new entities${atomic ? ', atomic' : ''}: decided and their statement made before the transaction`, async t => {
        const ops = [create(`t${++n}`, `a${n}`), create(`t${++n}`, `a${n}`), create(`t${++n}`, `a${n}`)]
        made = 0
        const plan = writer.plan(call(atomic), ops, 'etag')
        t.equal(made, 1, 'one statement made, ahead')
        const presumed = writer.presume(plan)
        const sent: string[] = []
        const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), plan))
        t.strictSame(presumed, results, 'the results presumed ahead are those it gave')
        t.not(presumed?.[0], results[0], 'in objects of their own')
        t.equal(made, 1, 'none made in the transaction')
        t.strictSame(sent.map(s => s.replace(/\s.*/s, '')), ['SAVEPOINT', 'INSERT'], 'which sends the statement alone')
        t.notMatch(sent[1], /RETURNING/, 'answering no row: each has its id and ETag already')
        for (const [i, r] of results.entries()) {
          const op = ops[i] as WriteOp
          t.equal(r.failure, null)
          t.equal(r.change, 'created')
          t.strictSame(r.row, { id: op.id, etag: await etagOf(op.id) }, `${op.id}: stored with the ETag the result names`)
        }
      })
    }

    t.test('alone: new entities in one statement with no transaction; anything else left to one', async t => {
      const sent: string[] = []
      const listedStore = { ...store, query: async (sql: string, params?: readonly unknown[], options?: Parameters<typeof store.query>[2]) => { sent.push(sql); return await store.query(sql, params, options) } } as typeof store
      const ops = [create(`t${++n}`, `h${n}`), create(`t${++n}`, `h${n}`)]
      made = 0
      const plan = writer.planAlone(call(true), ops, 'etag')
      t.equal(made, 0, 'no statement made ahead')
      const results = await writer.alone(listedStore, plan, null)
      t.equal(made, 1, 'one made when sent')
      t.strictSame(sent.map(s => s.replace(/\s.*/s, '')), ['INSERT'], 'one statement, no BEGIN')
      t.ok(Array.isArray(results))
      for (const [i, r] of (results as Array<{ row: unknown, change: string | null, failure: unknown }>).entries()) {
        const op = ops[i] as WriteOp
        t.match(r, { failure: null, change: 'created' })
        t.strictSame(r.row, { id: op.id, etag: await etagOf(op.id) }, `${op.id}: stored with the ETag the result names`)
      }

      sent.length = 0
      const existing = ops[0] as WriteOp
      const mixed = writer.planAlone(call(true), [create(`t${++n}`, `h${n}`), { action: 'delete', id: existing.id, values: {}, ifMatch: null, ifNoneMatch: null }], 'etag')
      t.equal(await writer.alone(listedStore, mixed, null), null, 'an operation on an existing entity: not alone')
      t.strictSame(sent, [], 'and nothing sent')

      // The second label is taken: the statement is refused, nothing is written, and the
      // transaction finds which operation fails.
      const refused = [create(`t${++n}`, `h${n}`), create(`t${++n}`, existing.values.label as string)]
      const isolated = writer.planAlone(call(false), refused, 'etag')
      t.equal(await writer.alone(listedStore, isolated, null), null, 'refused by a constraint: null')
      t.equal(await etagOf(refused[0]?.id as string), null, 'nothing written')
      const after = await store.transaction(async (tx) => await writer.execute(tx, isolated))
      t.match(after, [{ failure: null, change: 'created' }, { failure: { kind: 'conflict' } }], 'the transaction tells them apart')
      t.not(await etagOf(refused[0]?.id as string), null)
    })

    t.test('alone, read first: updates of one kind in one statement that locks their rows in the order of their ids and writes all of them or none', async t => {
      const sent: string[] = []
      const listedStore = { ...store, query: async (sql: string, params?: readonly unknown[], options?: Parameters<typeof store.query>[2]) => { sent.push(sql); return await store.query(sql, params, options) } } as typeof store
      const [a, b] = [`t${++n}`, `t${++n}`]
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(a, `v${a}`), create(b, `v${b}`)]))
      const update = (id: string, label: string): WriteOp => ({ action: 'update', id, values: { label }, ifMatch: null, ifNoneMatch: null })
      made = 0
      const plan = await writer.planRead(listedStore, call(true), [update(b, `w${b}`), update(a, `w${a}`)], 'etag', { ahead: false })
      t.equal(made, 0, 'no statement made ahead')
      t.ok(plan.unlocked, 'every entity named is written')
      const results = await writer.alone(listedStore, plan, null)
      t.equal(sent.length, 2, 'the read, then one statement, no BEGIN', { sent })
      t.match(sent[1], /^WITH g AS \(SELECT t\.id FROM "tags" AS t JOIN jsonb_to_recordset\(\$2::jsonb\) AS x\(id text, seen text\)\s+ON t\.ctx = \$1 AND t\.id = x\.id AND t\.etag = x\.seen ORDER BY t\.id FOR UPDATE OF t\)/)
      t.match(sent[1], /\(SELECT count\(\*\) FROM g\) = jsonb_array_length\(\$2::jsonb\)/, 'written only when every row was locked at its ETag')
      t.match(results, [{ failure: null, change: 'updated', row: { id: b } }, { failure: null, change: 'updated', row: { id: a } }])
      for (const r of results as Array<{ row: unknown }>) {
        const row = r.row as { id: string, etag: string }
        t.equal(await etagOf(row.id), row.etag)
      }

      // One of the two moved on after the read: nothing written, and the transaction decides again.
      const moved = await writer.planRead(store, call(true), [update(a, `x${a}`), update(b, `x${b}`)], 'etag', { ahead: false })
      await store.transaction(async (tx) => await writer.run(tx, call(true), [update(b, `y${b}`)]))
      const before = await etagOf(a)
      t.equal(await writer.alone(store, moved, null), null, 'a row moved on: null')
      t.equal(await etagOf(a), before, 'the other not written either')
      const again = await store.transaction(async (tx) => await writer.execute(tx, moved))
      t.match(again, [{ failure: null, change: 'updated' }, { failure: null, change: 'updated' }], 'both written in the transaction, decided again')
      t.equal(await etagOf(b), (again[1]?.row as { etag: string }).etag)

      // An entity read and left alone (its If-Match stale): the transaction decides.
      const stale = await writer.planRead(store, call(false), [update(a, `z${a}`), { ...update(b, `z${b}`), ifMatch: [{ weak: false, tag: '"stale"' }] }], 'etag', { ahead: false })
      t.notOk(stale.unlocked)
      sent.length = 0
      t.equal(await writer.alone(listedStore, stale, null), null, 'not alone')
      t.strictSame(sent, [], 'and nothing sent')

      // Deletions alone: the statement answers the rows it removed.
      const remove = (id: string): WriteOp => ({ action: 'delete', id, values: {}, ifMatch: null, ifNoneMatch: null })
      const gone = await writer.planRead(store, call(true), [remove(a), remove(b)], 'etag', { ahead: false })
      t.match(await writer.alone(store, gone, null), [{ failure: null, change: 'deleted', row: { id: a } }, { failure: null, change: 'deleted', row: { id: b } }])
      t.equal(await etagOf(a), null)
      t.equal(await etagOf(b), null)
    })

    t.test('an operation on an existing entity is decided in the transaction, on its row as locked there', async t => {
      const id = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(id, `b${n}`)]))
      const plan = writer.plan(call(true), [create(`t${++n}`, `b${n}`), { action: 'delete', id, values: {}, ifMatch: null, ifNoneMatch: null }], 'etag')
      t.equal(writer.presume(plan), null, 'nothing presumed: an operation is left to the transaction')
      made = 0
      const sent: string[] = []
      const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), plan))
      t.match(sent[0], /^SELECT .* FOR UPDATE$/s, 'the row read and locked first')
      t.equal(made, 2, 'the statements made there')
      t.match(results, [{ failure: null, change: 'created' }, { failure: null, change: 'deleted', row: { id } }])
      t.equal(await etagOf(id), null)
    })

    t.test('read first (planRead): operations on existing entities decided before the transaction too', async t => {
      const kept = `t${++n}`
      const gone = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(kept, `e${n}`), create(gone, `f${n}`)]))
      const at = await etagOf(kept) as string
      const ops: WriteOp[] = [
        { action: 'update', id: kept, values: { label: `g${n}` }, ifMatch: [{ weak: false, tag: at }], ifNoneMatch: null },
        { action: 'delete', id: gone, values: {}, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: 'never', values: {}, ifMatch: null, ifNoneMatch: null }
      ]
      made = 0
      const plan = await writer.planRead(store, call(true), ops, 'etag')
      t.equal(made, 2, 'both statements made ahead')
      t.equal(writer.presume(plan), null, 'nothing presumed: the deletion answers its rows')
      const sent: string[] = []
      const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), plan))
      t.equal(made, 2, 'none made in the transaction')
      t.match(sent, [/FOR UPDATE$/, /^UPDATE /, /^DELETE /], 'its locked read, then the writes alone')
      t.notMatch(sent[1], /RETURNING/, 'the update answering its count alone: each row has the ETag it was given')
      t.match(sent[2], /RETURNING t\."id", t\."etag"$/, 'the deletion its rows: a row removed keeps its ETag')
      t.match(results, [{ failure: null, change: 'updated', row: { id: kept } }, { failure: null, change: 'deleted', row: { id: gone } }, { failure: null, change: null, row: null }])
      t.equal(await etagOf(kept), (results[0]?.row as { etag: string }).etag)
      t.equal(await etagOf(gone), null)
    })

    t.test('read first, and a row changed before the transaction: decided again on it, as locked there', async t => {
      const id = `t${++n}`
      const other = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(id, `h${n}`), create(other, `i${n}`)]))
      const at = await etagOf(id) as string
      const ops: WriteOp[] = [
        { action: 'update', id, values: { label: `j${n}` }, ifMatch: [{ weak: false, tag: at }], ifNoneMatch: null },
        { action: 'delete', id: other, values: {}, ifMatch: null, ifNoneMatch: null }
      ]
      const plan = await writer.planRead(store, call(false), ops, 'etag')
      // Another request changes the first and deletes the second meanwhile.
      await store.transaction(async (tx) => await writer.run(tx, call(false), [
        { action: 'update', id, values: { label: `k${n}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: other, values: {}, ifMatch: null, ifNoneMatch: null }
      ]))
      const now = await etagOf(id)
      made = 0
      const results = await store.transaction(async (tx) => await writer.execute(tx, plan))
      t.match(results, [{ failure: { kind: 'precondition-failed' }, row: null }, { row: null, change: null }], 'its If-Match stale now; nothing to delete')
      t.equal(made, 0, 'nothing left to write')
      t.equal(await etagOf(id), now, 'the change made meanwhile stays')
    })

    t.test('read first, updates alone: the results presumed ahead, as given while the rows hold, not when one moved on', async t => {
      const ids = [`t${++n}`, `t${++n}`]
      await store.transaction(async (tx) => await writer.run(tx, call(true), ids.map(id => create(id, `p${id}`))))
      const update = async (id: string, label: string): Promise<WriteOp> => ({ action: 'update', id, values: { label }, ifMatch: [{ weak: false, tag: await etagOf(id) as string }], ifNoneMatch: null })
      const held = await writer.planRead(store, call(true), [await update(ids[0] as string, `q${n}`), await update(ids[1] as string, `r${n}`)], 'etag')
      const presumed = writer.presume(held)
      t.match(presumed, [{ failure: null, change: 'updated', row: { id: ids[0] } }, { failure: null, change: 'updated', row: { id: ids[1] } }])
      t.strictSame(await store.transaction(async (tx) => await writer.execute(tx, held)), presumed, 'its rows as read: as presumed')
      const moved = await writer.planRead(store, call(true), [await update(ids[0] as string, `s${n}`)], 'etag')
      const forecast = writer.presume(moved)
      await store.transaction(async (tx) => await writer.run(tx, call(true), [{ action: 'update', id: ids[0] as string, values: { label: `u${n}` }, ifMatch: null, ifNoneMatch: null }]))
      const results = await store.transaction(async (tx) => await writer.execute(tx, moved))
      t.match(forecast, [{ failure: null, change: 'updated' }], 'presumed written')
      t.match(results, [{ failure: { kind: 'precondition-failed' }, row: null, change: null }], 'but its row moved on: its If-Match stale')
    })

    t.test('read first, every entity named written: on the embedded store no locked read, each write guarded by the ETag read, and a row changed meanwhile undoes them and they are decided again, locked; on a server the locked read', async t => {
      const [a, b, c] = [`t${++n}`, `t${++n}`, `t${++n}`]
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(a, `v${a}`), create(b, `v${b}`), create(c, `v${c}`)]))
      const ops = (label: string): WriteOp[] => [
        { action: 'update', id: a, values: { label: `${label}${a}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'update', id: b, values: { label: `${label}${b}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: c, values: {}, ifMatch: null, ifNoneMatch: null }
      ]
      const held = await writer.planRead(store, call(true), ops('w'), 'etag')
      t.ok(held.unlocked, 'every entity named is written')
      t.equal(held.lockFree, store.kind === 'pglite')
      let sent: string[] = []
      const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), held))
      if (store.kind === 'pg') {
        // Two transactions writing the same rows in different orders would deadlock: the locked
        // read takes them in the order of their ids.
        t.match(sent[0], /ORDER BY id FOR UPDATE$/, 'the rows read and locked first, in the order of their ids')
        t.ok(sent.filter(text => /^(UPDATE|DELETE) /.test(text)).every(text => /t\.etag = x\.seen/.test(text)), 'the writes guarded all the same, the rows locked as read')
        t.match(results, [{ failure: null, change: 'updated', row: { id: a } }, { failure: null, change: 'updated', row: { id: b } }, { failure: null, change: 'deleted', row: { id: c } }])
        return
      }
      // The run of two updates has a savepoint of its own, as every run of several has.
      t.match(sent, ['SAVEPOINT', 'SAVEPOINT', /^UPDATE .* AND t\.etag = x\.seen$/s, /^DELETE .* AND t\.etag = x\.seen\n/s], 'in a savepoint, the guarded writes alone')
      t.notOk(sent.some(text => /FOR UPDATE/.test(text)), 'no locked read')
      t.match(results, [{ failure: null, change: 'updated', row: { id: a } }, { failure: null, change: 'updated', row: { id: b } }, { failure: null, change: 'deleted', row: { id: c } }])
      t.equal(await etagOf(a), (results[0]?.row as { etag: string }).etag)
      t.equal(await etagOf(c), null)

      // The second entity changes after the read: the first update wrote its row, the second
      // wrote one of two, so both are undone and decided again on the rows as locked.
      const [d, e] = [`t${++n}`, `t${++n}`]
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(d, `v${d}`), create(e, `v${e}`)]))
      const moved = await writer.planRead(store, call(true), [
        { action: 'update', id: a, values: { label: `x${a}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: d, values: {}, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: e, values: {}, ifMatch: null, ifNoneMatch: null }
      ], 'etag')
      await store.transaction(async (tx) => await writer.run(tx, call(true), [{ action: 'update', id: e, values: { label: `y${e}` }, ifMatch: null, ifNoneMatch: null }]))
      const meanwhile = await etagOf(e)
      sent = []
      made = 0
      const again = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), moved))
      t.match(sent, ['SAVEPOINT', /^UPDATE /, 'SAVEPOINT', /^DELETE /, /FOR UPDATE$/, /^UPDATE /, 'SAVEPOINT', /^DELETE /], 'the guarded writes, then the locked read and the writes decided on it')
      for (const i of [5, 7]) t.notMatch(sent[i], /x\.seen/, 'those not guarded: the rows are locked')
      t.equal(made, 2, 'the statements made again')
      t.not(meanwhile, null)
      t.match(again, [{ failure: null, change: 'updated', row: { id: a } }, { failure: null, change: 'deleted', row: { id: d } }, { failure: null, change: 'deleted', row: { id: e } }], 'each written once, as decided again')
      t.equal(await etagOf(a), (again[0]?.row as { etag: string }).etag)
      t.equal(await etagOf(e), null)

      // Atomic, an update refused by a unique label: its savepoint undoes the other's write, and
      // the transaction, aborted by the refusal there, goes on.
      const [f, g] = [`t${++n}`, `t${++n}`]
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(f, `v${f}`), create(g, `v${g}`)]))
      const before = await etagOf(a)
      const refused = await writer.planRead(store, call(true), [
        { action: 'update', id: a, values: { label: `r${a}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: f, values: {}, ifMatch: null, ifNoneMatch: null },
        // The label the first plan gave `b`.
        { action: 'update', id: g, values: { label: `w${b}` }, ifMatch: null, ifNoneMatch: null }
      ], 'etag')
      const stopped = await store.transaction(async (tx) => {
        const results = await writer.execute(tx, refused)
        await tx.query('SELECT 1')
        return results
      })
      t.match(stopped, [{ failure: null }, { failure: null }, { failure: { kind: 'conflict' } }], 'the label taken: a conflict')
      t.equal(await etagOf(a), before, 'the first update undone')
      t.not(await etagOf(f), null, 'the deletion undone')

      // A failure of the system is no row moved on: it ends the transaction.
      const unreachable = (tx: Tx): Tx => ({
        query: async (sql, params, options) => {
          if (sql.startsWith('DELETE')) throw new Unavailable('The database cannot be reached.')
          return await tx.query(sql, params, options)
        },
        exec: async (sql) => { await tx.exec(sql) },
        savepoint: async (fn) => await tx.savepoint(async (inner) => await fn(unreachable(inner)))
      })
      const cut = await writer.planRead(store, call(true), [
        { action: 'update', id: a, values: { label: `c${a}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'delete', id: f, values: {}, ifMatch: null, ifNoneMatch: null }
      ], 'etag')
      await t.rejects(store.transaction(async (tx) => await writer.execute(unreachable(tx), cut)), Unavailable)
      t.equal(await etagOf(a), before, 'nothing written')

      // Named twice, an entity's second write would find the ETag its first gave: locked.
      const twice = await writer.planRead(store, call(false), [
        { action: 'update', id: a, values: { label: `z${a}` }, ifMatch: null, ifNoneMatch: null },
        { action: 'update', id: a, values: { label: `zz${a}` }, ifMatch: null, ifNoneMatch: null }
      ], 'etag')
      sent = []
      await store.transaction(async (tx) => await writer.execute(listed(tx, sent), twice))
      t.match(sent[0], /FOR UPDATE$/, 'the rows read and locked first')
    })

    t.test('an entity named twice: the statements answer the rows they wrote', async t => {
      const id = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(false), [create(id, `l${n}`)]))
      const sent: string[] = []
      const results = await store.transaction(async (tx) => await writer.run(listed(tx, sent), call(false), [
        { action: 'delete', id, values: {}, ifMatch: null, ifNoneMatch: null },
        { action: 'update', id, values: { label: `m${n}` }, ifMatch: null, ifNoneMatch: null }
      ], 'etag'))
      t.match(sent.find(text => text.startsWith('UPDATE')), /RETURNING t\."id", t\."etag"$/)
      t.match(results, [{ change: 'deleted', row: { id } }, { failure: null, change: null, row: null }], 'the update found nothing left to write')
      t.equal(await etagOf(id), null)
    })

    t.test('a plan run again (its transaction run again) finds its outcomes afresh', async t => {
      const taken = `c${++n}`
      const holder = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(false), [create(holder, taken)]))
      const plan = writer.plan(call(false), [create(`t${++n}`, taken), create(`t${++n}`, `d${n}`)], 'etag')
      // Not atomic: the first conflicts with the label taken, the second is written; rolled back here.
      await t.rejects(store.transaction(async (tx) => {
        await writer.execute(tx, plan)
        throw new Error('rolled back')
      }), /rolled back/)
      t.match(plan.results, [{ failure: { kind: 'conflict' } }, { failure: null, change: 'created' }], 'the label taken: a conflict')
      await store.transaction(async (tx) => await writer.run(tx, call(false), [{ action: 'delete', id: holder, values: {}, ifMatch: null, ifNoneMatch: null }]))
      const again = await store.transaction(async (tx) => await writer.execute(tx, plan))
      t.match(again, [{ failure: null, change: 'created' }, { failure: null, change: 'created' }], 'the label free now: both written')
      for (const r of again) t.equal(await etagOf(r.op.id), (r.row as { etag: string }).etag)
    })
  })
}
