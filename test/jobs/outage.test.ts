import t from 'tap'
import { Unavailable, type Store } from '../../store/index.js'
import { pglite } from '../support/databases.js'
import { build, eventually } from './helper.js'

// A job cut off by a database outage, whose giving back failed too (the database still down):
// taken up again once the database answers, not when its lease runs out, which here would be
// long after the test's bound.

t.test('a job given up in an outage is taken up again when the database answers, not at the end of its lease', async t => {
  const real = await pglite.create(t)
  let down = false
  const refuse = (): never => { throw new Unavailable('The database is unavailable.') }
  const store = {
    kind: real.kind,
    location: real.location,
    query: async (text: string, params?: unknown[]) => down ? refuse() : await real.query(text, params),
    transaction: async (fn: Parameters<Store['transaction']>[0], opts?: Parameters<Store['transaction']>[1]) => down ? refuse() : await real.transaction(fn, opts),
    ready: async () => { await real.ready() },
    listen: real.listen,
    close: async () => {}
  } as unknown as Store
  let runs = 0
  const app = await build(t, store, { leaseMillis: 600_000, pollMillis: 20 }, {
    FLAKY: async () => {
      runs++
      // The outage begins under the job's first run: its work and its giving back both fail.
      if (runs === 1) {
        down = true
        refuse()
      }
      return { result: { runs }, completedCount: 1 }
    }
  })
  const id = crypto.randomUUID()
  await real.transaction(async (tx) => await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'FLAKY', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }))
  app.jobs.wake()
  await eventually(async () => runs === 1)
  const status = async (): Promise<{ status: string, attempts: number, lease_owner: string | null }> =>
    (await real.query<{ status: string, attempts: number, lease_owner: string | null }>('SELECT status, attempts, lease_owner FROM jobs WHERE id = $1', [id])).rows[0] as { status: string, attempts: number, lease_owner: string | null }
  t.match(await status(), { status: 'RUNNING', attempts: 1 }, 'still held: it could not be given back')
  t.not((await status()).lease_owner, null)
  down = false
  const ended = await eventually(async () => { const s = await status(); return s.status === 'SUCCEEDED' ? s : null })
  t.match(ended, { status: 'SUCCEEDED', attempts: 2 }, 'run again, long before its ten-minute lease ran out')
  t.equal(runs, 2)
})
