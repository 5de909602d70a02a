import t from 'tap'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import { jobs, problem, query, type JobHandler, type QueryResult, type Store } from '../../index.js'
import { type NewJob } from '../../plugins/jobs/index.js'
import type { QueryOptions } from '../../store/types.js'
import { databases, pglite } from '../support/databases.js'
import { build, eventually } from './helper.js'

// Jobs are woken by the database. The safety poll is a minute away and nobody calls wake(), so
// within the bound below only the notification of the row written explains a job that starts.

const POLL = 60_000
const BOUND_SECONDS = 20

/** The store as the plugin sees it: it counts the job claims begun and ended, and can hold them at a gate. */
function watched (real: Store): { store: Store, begun: () => number, ended: () => number, hold: () => () => void } {
  let begun = 0
  let ended = 0
  let gate: Promise<void> | null = null
  async function query<R extends object = Record<string, unknown>> (sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const claim = sql.includes('SET status = \'RUNNING\'')
    if (claim) begun++
    if (claim && gate !== null) await gate
    const result = await real.query<R>(sql, params, options)
    if (claim) ended++
    return result
  }
  const store: Store = { ...real, query }
  return {
    store,
    begun: () => begun,
    ended: () => ended,
    hold: () => {
      let open = (): void => {}
      gate = new Promise((resolve) => { open = resolve })
      return () => { gate = null; open() }
    }
  }
}

const job = (id: string, kind = 'ECHO'): NewJob => ({ ctx: 'prod', id, kind, collection: 'things', subject: '', input: {}, operationCount: 0, requestId: null })

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // Another instance's connection on a server; PGlite has one, which another app in this process would use alike.
    const writer = db.sibling === undefined ? store : await db.sibling(t, store)

    t.test('a job written by another connection starts on its notification, with no wake() and the poll a minute away', async t => {
      const w = watched(store)
      const ran: string[] = []
      const app = await build(t, w.store, { pollMillis: POLL, path: false }, {
        ECHO: async (run) => { ran.push(run.job.id); return { result: null, completedCount: 0 } }
      })
      // The start's own look is over: the next poll is a minute away.
      await eventually(async () => w.ended() >= 1)
      const id = randomUUID()
      await app.jobs.table.insert(writer, job(id))
      await eventually(async () => ran.includes(id), BOUND_SECONDS)
      t.pass('started')
    })

    t.test('a job a stopping instance gives back is taken up at once by another instance', async t => {
      const id = randomUUID()
      let startedHere = (): void => {}
      const started = new Promise<void>((resolve) => { startedHere = resolve })
      // Holds the job until its instance stops: each unit of work then fails, and the job is given back.
      const holding: JobHandler = async (run) => {
        startedHere()
        for (;;) {
          await run.transaction(async () => {})
          await sleep(20)
        }
      }
      const first = await build(t, store, { pollMillis: POLL, leaseMillis: 60_000, path: false }, { SLOW: holding })
      await first.jobs.table.insert(store, job(id, 'SLOW'))
      first.jobs.wake()
      await started
      const w = watched(writer)
      const ran: string[] = []
      await build(t, w.store, { pollMillis: POLL, path: false }, {
        SLOW: async (run) => { ran.push(run.job.id); return { result: null, completedCount: 0 } }
      })
      await eventually(async () => w.ended() >= 1)
      t.strictSame(ran, [], 'held by the first instance under its lease')
      await first.close()
      await eventually(async () => ran.includes(id), BOUND_SECONDS)
      t.pass('taken up by the second')
    })
  })
}

t.test('a wake while a look is under way looks again once it ends', async t => {
  const store = await pglite.create(t)
  const w = watched(store)
  const app = await build(t, w.store, { pollMillis: POLL, path: false }, { ECHO: async () => ({ result: null, completedCount: 0 }) })
  await eventually(async () => w.ended() >= 1)
  const open = w.hold()
  app.jobs.wake()
  await eventually(async () => w.begun() >= 2)
  // Its timer fires before this sleep's: the look is still held at the gate.
  app.jobs.wake()
  await sleep(10)
  open()
  await eventually(async () => w.begun() >= 3, BOUND_SECONDS)
  t.pass('looked again')
})

t.test('a store that cannot listen: logged, and the poll finds the work', async t => {
  const real = await pglite.create(t)
  const store: Store = { ...real, listen: async () => { throw new Error('no LISTEN here') } }
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(problem)
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await app.register(jobs, { store, pollMillis: 20, path: false })
  const ran: string[] = []
  app.jobs.define('ECHO', async (run) => { ran.push(run.job.id); return { result: null, completedCount: 0 } })
  t.teardown(() => app.close())
  await app.ready()
  t.ok(lines.some(l => l.includes('jobs: cannot listen for new jobs; looking for them every pollMillis only')), 'logged')
  const id = randomUUID()
  await app.jobs.table.insert(real, job(id))
  await eventually(async () => ran.includes(id))
  t.pass('found by the poll')
})
