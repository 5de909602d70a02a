import t from 'tap'
import { problems, type JobHandler, type Store } from '../../index.js'
import { quoteIdent } from '../../store/index.js'
import { countStatements } from '../support/count-statements.js'
import { databases } from '../support/databases.js'
import { build, eventually, json, token } from './helper.js'

// A run may write its job's result ahead of the job's end (`run.stage`), outside any
// transaction: nobody reads it before the job ends SUCCEEDED, and an end given that same object
// only marks the job ended. Any other end writes its own result, or clears the staged one.

type JobRun = Parameters<JobHandler>[0]

const STAGED = { status: 'SUCCEEDED', operations: ['written ahead'] }

/** How each handler ends its job after staging `STAGED` (or failing to), and what it then shows. */
const cases: Array<{ name: string, end: (run: JobRun) => Promise<{ result: unknown, completedCount: number }>, status: string, result: unknown, writesResult: boolean }> = [
  {
    name: 'ended in its last transaction with the staged object',
    end: async (run) => {
      await run.transaction(async (tx) => { await run.finish(tx, STAGED, 2) })
      return { result: 'not written', completedCount: 1 }
    },
    status: 'SUCCEEDED',
    result: STAGED,
    writesResult: false
  },
  {
    name: 'ended by its return of the staged object',
    end: async () => ({ result: STAGED, completedCount: 2 }),
    status: 'SUCCEEDED',
    result: STAGED,
    writesResult: false
  },
  {
    name: 'ended with another result, equal or not',
    end: async (run) => {
      await run.transaction(async (tx) => { await run.finish(tx, { ...STAGED }, 2) })
      return { result: 'not written', completedCount: 1 }
    },
    status: 'SUCCEEDED',
    result: STAGED,
    writesResult: true
  },
  {
    name: 'ended with a different result',
    end: async () => ({ result: { other: true }, completedCount: 2 }),
    status: 'SUCCEEDED',
    result: { other: true },
    writesResult: true
  },
  {
    name: 'failed',
    end: async () => { throw problems.conflict('refused after staging') },
    status: 'FAILED',
    result: null,
    writesResult: false
  }
]

for (const db of databases) {
  t.test(`${db.label}: a result staged ahead of the job's end`, { skip: db.skip }, async t => {
    const store: Store = await db.create(t)
    const T = (table: string): string => quoteIdent(table)
    // Each job waits, once its result is staged, until the test has looked at it.
    const gates = new Map<string, { staged: () => void, go: Promise<void> }>()
    const app = await build(t, store, { leaseMillis: 60_000 }, {
      STAGE: async (run) => {
        const c = cases.find(x => x.name === (run.job.input as { name: string }).name) as (typeof cases)[number]
        await run.stage(STAGED)
        const gate = gates.get(run.job.id) as { staged: () => void, go: Promise<void> }
        gate.staged()
        await gate.go
        return await c.end(run)
      }
    })
    const reader = { 'user-agent': 'jobs-tests/1 (tap)', authorization: `Bearer ${token('user-1', ['things:read'])}` }
    const raw = async (id: string): Promise<string | null> => (await store.query<{ result: string | null }>(`SELECT result FROM ${T(app.jobs.table.table)} WHERE id = $1`, [id])).rows[0]?.result ?? null
    for (const c of cases) {
      const id = crypto.randomUUID()
      let staged = (): void => {}
      let go = (): void => {}
      const stagedNow = new Promise<void>((resolve) => { staged = resolve })
      gates.set(id, { staged, go: new Promise<void>((resolve) => { go = resolve }) })
      await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'STAGE', collection: 'things', subject: 'user-1', input: { name: c.name }, operationCount: 2, requestId: null }) })
      app.jobs.wake()
      await stagedNow
      t.equal(await raw(id), JSON.stringify(STAGED), `${c.name}: staged, in its row`)
      t.match(json(await app.inject({ url: `/jobs/${id}`, headers: reader })), { status: 'RUNNING', result: null }, `${c.name}: not shown while the job runs`)
      const page = json(await app.inject({ url: '/jobs?limit=100', headers: reader })).results as Array<{ id: string, status: string }>
      t.strictSame(Object.keys(page.find(j => j.id === id) ?? {}).filter(k => k === 'result' || k === 'status'), ['status'], `${c.name}: nor in a page, which shows no result`)
      const sql = countStatements(store)
      go()
      const job = await eventually(async () => {
        const j = await app.jobs.table.get(store, 'prod', 'user-1', id)
        return j !== null && j.status !== 'RUNNING' ? j : null
      })
      sql.restore()
      t.equal(job.status, c.status, `${c.name}: ${c.status}`)
      t.strictSame(job.result, c.result, `${c.name}: its result`)
      const ends = sql.texts().filter(text => /^UPDATE "jobs" SET status = /.test(text))
      t.equal(ends.length, 1, `${c.name}: ended by one statement`)
      t.equal(/result = \$/.test(ends[0] ?? ''), c.writesResult, `${c.name}: ${c.writesResult ? 'writing its result' : 'not writing the staged result again'}`)
      if (c.status === 'FAILED') t.equal(await raw(id), null, `${c.name}: the staged result cleared`)
    }
  })

  t.test(`${db.label}: a run that lost its job stages nothing`, { skip: db.skip }, async t => {
    const store: Store = await db.create(t)
    const outcomes = new Map<string, string>()
    const app = await build(t, store, { leaseMillis: 60_000, pollMillis: 10_000, path: false }, {
      TAKEN: async (run) => {
        await store.query(`UPDATE ${quoteIdent(app.jobs.table.table)} SET lease_owner = 'another-instance', attempts = attempts + 1, lease_until = now() + interval '1 hour' WHERE id = $1`, [run.job.id])
        try {
          await run.stage(STAGED)
          outcomes.set(run.job.id, 'staged')
        } catch (err) {
          outcomes.set(run.job.id, (err as Error).constructor.name)
          throw err
        }
        return { result: STAGED, completedCount: 1 }
      }
    })
    const id = crypto.randomUUID()
    await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'TAKEN', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
    app.jobs.wake()
    t.equal(await eventually(async () => outcomes.get(id)), 'LeaseLost', 'refused')
    t.equal((await store.query<{ result: string | null }>(`SELECT result FROM ${quoteIdent(app.jobs.table.table)} WHERE id = $1`, [id])).rows[0]?.result, null, 'nothing written')
    t.match(await app.jobs.table.get(store, 'prod', 'user-1', id), { status: 'RUNNING', result: null }, 'left to the instance that holds it')
  })
}
