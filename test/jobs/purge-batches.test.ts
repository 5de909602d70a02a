import t from 'tap'
import type { Store } from '../../index.js'
import { JobTable } from '../../store/jobs.js'
import { migrate, Purge } from '../../store/index.js'
import { databases } from '../support/databases.js'

// A purge batch is a short transaction whatever the rows it deletes take along: a job's steps
// (one per operation of a bulk, up to 10,000) go first, a batch at a time, before the job.

/** The store, noting how many steps each of the purge's transactions removed. */
function counting (store: Store, steps: string, removed: number[]): Store {
  const count = async (): Promise<number> => (await store.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${steps}`)).rows[0]?.n as number
  return {
    transaction: async (fn: Parameters<Store['transaction']>[0], opts?: Parameters<Store['transaction']>[1]) => {
      const before = await count()
      const result = await store.transaction(fn, opts)
      removed.push(before - await count())
      return result
    }
  } as unknown as Store
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const table = new JobTable('purged_jobs', 1000)
    await migrate(store, table.migrations())
    const ended = new Date('2026-01-01T00:00:00Z')
    const later = new Date('2026-02-01T00:00:00Z')

    // [job, steps recorded]: two bulk jobs of 2,500 and 700 operations, one without steps.
    const jobs: Array<[string, number]> = [['big', 2500], ['small', 700], ['none', 0]]
    for (const [id, steps] of jobs) {
      await store.transaction(async tx => {
        await table.insert(tx, { ctx: 'prod', id, kind: 'BULK', collection: 'documents', subject: 'u', input: {}, operationCount: steps, requestId: null })
        await table.recordSteps(tx, 'prod', id, Array.from({ length: steps }, (_, step) => ({ step, outcome: { ok: true } })))
        await table.finish(tx, 'prod', id, { status: 'SUCCEEDED', result: {}, completedCount: steps })
        await tx.query('UPDATE purged_jobs SET completed_at = $2 WHERE id = $1', [id, ended])
      })
    }
    const open = 'open'
    await store.transaction(async tx => {
      await table.insert(tx, { ctx: 'prod', id: open, kind: 'BULK', collection: 'documents', subject: 'u', input: {}, operationCount: 3, requestId: null })
      await table.recordSteps(tx, 'prod', open, [0, 1, 2].map(step => ({ step, outcome: {} })))
    })

    const removed: number[] = []
    t.strictSame(await table.purge(counting(store, 'purged_jobs_steps', removed), later), { deleted: 3, skipped: false }, 'the three ended jobs')
    t.ok(removed.every(n => n <= 1000), `no transaction removes more than a batch of steps (${removed.join(', ')})`)
    t.equal(removed.reduce((a, b) => a + b, 0), 3200, 'every step of the ended jobs')
    t.strictSame([...(await table.stepsOf(store, 'prod', open)).keys()], [0, 1, 2], 'an open job keeps its steps')

    // A bulk's result is megabytes of text: the jobs themselves go a hundred at a time.
    t.test('ended jobs go at most a hundred to a transaction', async t => {
      const many = new JobTable('purged_many', 1000)
      await migrate(store, many.migrations())
      const ids = Array.from({ length: 250 }, (_, i) => `job-${i}`)
      await store.transaction(async tx => {
        for (const id of ids) {
          await many.insert(tx, { ctx: 'prod', id, kind: 'BULK', collection: 'documents', subject: 'u', input: {}, operationCount: 0, requestId: null })
          await many.finish(tx, 'prod', id, { status: 'SUCCEEDED', result: {}, completedCount: 0 })
        }
        await tx.query('UPDATE purged_many SET completed_at = $1', [ended])
      })
      const jobsRemoved: number[] = []
      t.strictSame(await many.purge(counting(store, 'purged_many', jobsRemoved), later), { deleted: 250, skipped: false })
      t.strictSame(jobsRemoved, [100, 100, 50], 'each transaction a batch of a hundred jobs')
    })

    t.test('the children of a rule are SQL names', async t => {
      for (const children of [[{ table: 'Bad', on: [['a', 'b']] }], [{ table: 'steps', on: [['a', 'b;']] }]] as const) {
        t.throws(() => new Purge({ table: 'jobs', column: 'completed_at', retention: 0, children }), /^purge: children must name lowercase SQL names, got "(Bad|b;)"$/)
      }
    })
  })
}
