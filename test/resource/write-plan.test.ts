import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import resource, { defineResource, type ServedResource, type WriteCall, type WriteOp } from '../../plugins/resource/index.js'
import type { Queryable, Tx } from '../../store/types.js'
import { databases } from '../support/databases.js'
import { prerequisites } from './helper.js'

// A transaction of the write path (`writer.run`, a bulk request, a job) in two halves:
// `writer.plan` decides, before the transaction opens, what needs no row read (a new entity with
// a server-made id), and makes the statements when that is every operation; `writer.execute`
// runs the plan in the transaction, which then holds its connection for its statements alone.

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
        const sent: string[] = []
        const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), plan))
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

    t.test('an operation on an existing entity is decided in the transaction, on its row as locked there', async t => {
      const id = `t${++n}`
      await store.transaction(async (tx) => await writer.run(tx, call(true), [create(id, `b${n}`)]))
      const plan = writer.plan(call(true), [create(`t${++n}`, `b${n}`), { action: 'delete', id, values: {}, ifMatch: null, ifNoneMatch: null }], 'etag')
      made = 0
      const sent: string[] = []
      const results = await store.transaction(async (tx) => await writer.execute(listed(tx, sent), plan))
      t.match(sent[0], /^SELECT .* FOR UPDATE$/s, 'the row read and locked first')
      t.equal(made, 2, 'the statements made there')
      t.match(results, [{ failure: null, change: 'created' }, { failure: null, change: 'deleted', row: { id } }])
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
