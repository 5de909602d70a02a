import t from 'tap'
import type { JobHandler, Store, Tx } from '../../index.js'
import { quoteIdent } from '../../store/index.js'
import { databases } from '../support/databases.js'
import { build, eventually } from './helper.js'

// A unit of a job's work commits only while its run's claim holds the job. The claim is checked
// by the transaction's last statement: the record of its steps and count, its progress or the
// job's end, each in its own statement; a transaction with none of those checks it before its
// COMMIT. Here another instance takes the job before the transaction (the lease is long, so no
// renewal tells the run first): whichever statement checks, nothing of the transaction commits,
// and the job is left to the instance that holds it.

type JobRun = Parameters<JobHandler>[0]

/** What the transaction does after its own write, by case. */
const cases: Array<[string, (run: JobRun, tx: Tx) => Promise<void>]> = [
  ['steps and count', async (run, tx) => { await run.record(tx, [{ step: 0, outcome: 'mine' }], 1) }],
  ['steps alone', async (run, tx) => { await run.record(tx, [{ step: 0, outcome: 'mine' }]) }],
  ['count alone', async (run, tx) => { await run.progress(tx, 1) }],
  ['the end', async (run, tx) => { await run.finish(tx, 'mine', 1) }],
  ['its write alone', async () => {}]
]

for (const db of databases) {
  t.test(`${db.label}: a job taken by another instance before a transaction of its work commits nothing of it`, { skip: db.skip }, async t => {
    const store: Store = await db.create(t)
    await store.query('CREATE TABLE work (job text PRIMARY KEY)')
    const outcomes = new Map<string, string>()
    const app = await build(t, store, { leaseMillis: 60_000, pollMillis: 10_000, path: false }, {
      TAKEN: async (run) => {
        const c = cases.find(([name]) => name === (run.job.input as { name: string }).name) as (typeof cases)[number]
        await store.query(`UPDATE ${quoteIdent(app.jobs.table.table)} SET lease_owner = 'another-instance', attempts = attempts + 1, lease_until = now() + interval '1 hour' WHERE id = $1`, [run.job.id])
        try {
          await run.transaction(async (tx) => {
            await tx.query('INSERT INTO work (job) VALUES ($1)', [run.job.id])
            await c[1](run, tx)
          })
          outcomes.set(run.job.id, 'committed')
        } catch (err) {
          outcomes.set(run.job.id, (err as Error).constructor.name)
          throw err
        }
        return { result: 'not mine to write', completedCount: 1 }
      }
    })
    for (const [name] of cases) {
      const id = crypto.randomUUID()
      await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'TAKEN', collection: 'things', subject: 'user-1', input: { name }, operationCount: 1, requestId: null }) })
      app.jobs.wake()
      const outcome = await eventually(async () => outcomes.get(id))
      t.equal(outcome, 'LeaseLost', `${name}: the transaction is refused`)
      t.equal((await store.query('SELECT 1 FROM work WHERE job = $1', [id])).rows.length, 0, `${name}: its write rolled back`)
      t.equal((await app.jobs.table.stepsOf(store, 'prod', id)).size, 0, `${name}: no step recorded`)
      t.match(await app.jobs.table.get(store, 'prod', 'user-1', id), { status: 'RUNNING', completedCount: 0, result: null }, `${name}: left to the instance that holds it`)
    }
  })
}

// On a server, a transaction of the job does not lock its row until its last statement: the
// lease is renewed while the work runs, however long (an ATOMIC bulk is one transaction).
const server = databases.find(db => db.kind === 'pg')
t.test('a long transaction of a job does not hold up the renewals of its lease', { skip: server?.skip ?? 'no server entry' }, async t => {
  const store = await (server as NonNullable<typeof server>).create(t)
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  t.teardown(() => { open() })
  let working = false
  const app = await build(t, store, { leaseMillis: 300, pollMillis: 10_000, path: false }, {
    LONG: async (run) => {
      await run.transaction(async (tx) => {
        await tx.query('SELECT 1')
        working = true
        await gate
        await run.progress(tx, 1)
      })
      return { result: 'done', completedCount: 1 }
    }
  })
  const id = crypto.randomUUID()
  await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'LONG', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  app.jobs.wake()
  await eventually(async () => working)
  const leaseOf = async (): Promise<number> => {
    const { rows } = await store.query<{ until: number }>(`SELECT (extract(epoch FROM lease_until) * 1000)::float8 AS until FROM ${quoteIdent(app.jobs.table.table)} WHERE id = $1`, [id])
    return (rows[0] as { until: number }).until
  }
  const first = await leaseOf()
  // Renewed twice, while the transaction still waits.
  const renewed = await eventually(async () => {
    const until = await leaseOf()
    return until > first ? until : null
  })
  await eventually(async () => await leaseOf() > renewed)
  t.pass('the lease was renewed twice during the transaction')
  open()
  t.match(await eventually(async () => {
    const job = await app.jobs.table.get(store, 'prod', 'user-1', id)
    return job?.status === 'SUCCEEDED' ? job : null
  }), { result: 'done', completedCount: 1 }, 'and the job ended as it would have')
})
