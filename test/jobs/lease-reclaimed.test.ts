import t from 'tap'
import type { JobHandler, Store } from '../../index.js'
import { databases } from '../support/databases.js'
import { build, eventually } from './helper.js'

// A job whose lease ran out while its instance still ran it (its renewals did not reach the
// database), claimed again by the same instance (concurrency 2): two runs of one job under one
// owner. Each unit of work checked only that the owner held the job, so both runs committed:
// the later one's step was refused by the steps' key, and the job ended FAILED with a 500 though
// its work was done. A run now holds the job only under its own claim (its attempt), so the
// earlier run stops at its next transaction and the later one does the work.
// The first claim's renewals are dropped by the store the plugin is given, and its lease is
// ended by hand (the lease is long: no lease runs out by itself while the test runs, so the
// second claim comes when the test says, and no third); gates order the two runs' steps.

for (const db of databases) {
  t.test(`${db.label}: a job claimed again by its own instance after its lease ran out`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // The first claim's renewals never reach the database: each says the job is held all the same.
    const lapses = {
      ...store,
      query: async (...args: Parameters<Store['query']>) => {
        // A renewal's fifth value is the attempt it renews (store/jobs.ts).
        if (args[0].includes('AS renewed') && args[1]?.[4] === 1) return { rows: [{ renewed: 1 }], rowCount: 1 }
        return await store.query(...args)
      }
    } as unknown as Store
    const gates = new Map<number, { open: () => void, opened: Promise<void> }>()
    const gate = (attempt: number): { open: () => void, opened: Promise<void> } => {
      let g = gates.get(attempt)
      if (g === undefined) {
        let open!: () => void
        const opened = new Promise<void>((resolve) => { open = resolve })
        g = { open, opened }
        gates.set(attempt, g)
      }
      return g
    }
    // The first run's first step, tried (committed or refused), before the second run starts.
    const tried: number[] = []
    const steps: JobHandler = async (run) => {
      const done = await run.steps()
      await gate(run.job.attempts).opened
      for (const step of [0, 1]) {
        if (done.has(step)) continue
        try {
          await run.transaction(async (tx) => { await run.record(tx, [{ step, outcome: run.job.attempts }]) })
        } finally {
          tried.push(run.job.attempts)
        }
        // The first run pauses between its steps: the second one runs there.
        if (run.job.attempts === 1) await gate(0).opened
      }
      return { result: { by: run.job.attempts }, completedCount: 2 }
    }
    const app = await build(t, lapses, { leaseMillis: 60_000, concurrency: 2, path: false }, { STEPS: steps })
    await store.transaction(async (tx) => {
      await app.jobs.enqueue(tx, { ctx: 'prod', id: 'lapsed', kind: 'STEPS', collection: 'things', subject: 'u', input: {}, operationCount: 2, requestId: null })
    })
    app.jobs.wake()
    const status = async (): Promise<{ status: string, attempts: number, result: string | null } | undefined> =>
      (await store.query<{ status: string, attempts: number, result: string | null }>("SELECT status, attempts, result FROM jobs WHERE id = 'lapsed'")).rows[0]
    // The first run waits at its gate; its lease then runs out.
    await eventually(async () => gates.size >= 1)
    t.equal((await status())?.attempts, 1, 'claimed once, while its lease held')
    await store.query("UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = 'lapsed' AND attempts = 1")
    app.jobs.wake()
    // Both runs wait at their gates: the second claim came once the lease ran out.
    await eventually(async () => (await status())?.attempts === 2)
    await eventually(async () => gates.size >= 2)
    gate(1).open()
    await eventually(async () => tried.includes(1))
    gate(2).open()
    await eventually(async () => (await status())?.status !== 'RUNNING')
    gate(0).open()
    const ended = await eventually(async () => { const s = await status(); return s?.status === 'RUNNING' ? null : s })
    t.strictSame(ended, { status: 'SUCCEEDED', attempts: 2, result: JSON.stringify({ by: 2 }) }, 'the later run did the work and ended the job')
  })
}
