import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { countStatements } from '../support/count-statements.js'
import { serviceClient, startService, type ServiceClient } from '../service/service.js'
import { shuffled } from './helper.js'

// ATOMIC jobs of two instances updating the same rows, each in an order of its own, on a
// PostgreSQL server. Each job's transaction takes the rows' locks in the order of their ids
// (its locked read) before it writes: without that, each would lock the rows as its update
// meets them, and two of them would deadlock, each holding a row the other waits for. The
// server then cancels one after a second (`deadlock_timeout`), and its job runs its
// transaction again. So: every job succeeds, and each sends its update of the rows once.

const db = databases.find(d => d.kind === 'pg')
const ROWS = 1000
const ROUNDS = 2
const JOBS = 4

async function ended (client: ServiceClient, id: string): Promise<any> {
  for (let i = 0; ; i++) {
    const job = (await client.call('GET', `/v1/jobs/${id}`)).body
    if (job.status === 'SUCCEEDED' || job.status === 'FAILED') return job
    // Generous: nothing here races the clock, it only bounds a hang.
    if (i > 6000) throw new Error(`job ${id} never ended`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('ATOMIC jobs of two instances updating the same rows in different orders: each sends its update once (no deadlock)', { skip: db?.skip ?? 'no server' }, async (t) => {
  const server = db as NonNullable<typeof db>
  const store = await server.create(t)
  const instances = [await startService(t, store), await startService(t, await (server.sibling as NonNullable<typeof server.sibling>)(t, store))]
  const clients = instances.map(i => serviceClient(i.base, { patchType: 'application/json' }))
  const [first] = clients as [ServiceClient]
  const tag = randomUUID().slice(0, 8)
  const made = await first.call('PATCH', '/v1/authors', {
    transactionMode: 'ATOMIC',
    operations: Array.from({ length: ROWS }, (_, i) => ({ action: 'CREATE', entity: { name: `lock ${tag} ${i}`, email: 'l@example.com' } }))
  }, { prefer: 'respond-async' })
  const ids: string[] = (await ended(first, made.body.id)).result.operations.map((o: { entityId: string }) => o.entityId)
  t.equal(ids.length, ROWS, 'the rows made')

  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  for (let round = 0; round < ROUNDS; round++) {
    sql.reset()
    const accepted = await Promise.all(Array.from({ length: JOBS }, async (_, k) => {
      const client = clients[k % clients.length] as ServiceClient
      const operations = shuffled(ids.map((id, i) => ({ id, i })), round * JOBS + k + 1)
        .map(({ id, i }) => ({ action: 'UPDATE', entity: { id, name: `lock ${tag} ${i}`, email: `r${round}j${k}@example.com` } }))
      const res = await client.call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations }, { prefer: 'respond-async' })
      t.equal(res.status, 202, 'accepted')
      return { client, id: res.body.id as string }
    }))
    for (const a of accepted) t.match(await ended(a.client, a.id), { status: 'SUCCEEDED', result: { status: 'SUCCEEDED' } }, `round ${round}: the job succeeded`)
    // The instances' transactions interleave on the server: their statements are counted.
    const writes = sql.texts().filter(text => /^(WITH w AS \()?UPDATE "authors"/.test(text))
    t.equal(writes.length, JOBS, `round ${round}: one update per job, none made again`)
  }
})
