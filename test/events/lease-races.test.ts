import t from 'tap'
import { databases, postgres } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import type { Store } from '../../store/types.js'
import { until, waitingFor } from '../support/row-locks.js'
import { client, receiver, startEvents } from './helper.js'

// The dispatcher's statements racing a subscription's DELETE, which takes the subscription's
// deliveries along (ON DELETE CASCADE), newest first. Recording the ends of attempts locks the
// deliveries in the order the attempts ended, so the two can deadlock; the database then rolls
// one back, and the DELETE, when it is the one, is run again as every write's transaction is,
// not answered with a 500. The interleaving is forced: a second connection holds a delivery
// until both statements wait, for longer than the server's deadlock_timeout, so the DELETE's
// wait closes the cycle and its check finds it.

const AT = new Date('2026-01-01T00:00:00Z')

t.test('the ends of attempts recorded while their subscription is deleted', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t)
  const sibling = await (postgres.sibling as NonNullable<typeof postgres.sibling>)(t, store)
  const { base } = await startEvents(t, store, {}, { purgeInterval: 0, worker: false })
  const call = client(base)
  const tables = new EventTables()
  const id = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body.id as string
  // Others' deliveries, so that the DELETE's cascade reads its own through the index, as a
  // table of many subscriptions does.
  for (let i = 0; i < 20; i++) {
    await tables.insertSubscription(store, { ctx: 'prod', id: `other-${i}`, url: 'http://127.0.0.1:9/hook', events: ['author.created'], description: null, secret: 's', etag: '"e"', createdBy: null }, AT)
  }
  const insert = `INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, payload, status, created_at, next_attempt_at, lease_owner, lease_until)
    SELECT 'prod', $2 || g, $3, 'author.created', '{}', 'PENDING', $1::timestamptz + g * interval '1 second', $1, $4, $1::timestamptz + interval '1 hour'
    FROM generate_series(1, $5::integer) AS g`
  await store.query(insert, [AT, 'other-', 'other-0', null, 2000])
  await store.query('UPDATE event_deliveries SET subscription_id = \'other-\' || (substr(id, 7)::integer % 20)')
  await store.query(insert, [AT, 'mine-', id, 'instance-a', 3])
  await store.query('ANALYZE event_deliveries')
  const timeout = (await store.query<{ ms: number }>("SELECT setting::int AS ms FROM pg_settings WHERE name = 'deadlock_timeout'")).rows[0]?.ms as number

  let deleted: Promise<number> | undefined
  let recorded: Promise<unknown> | undefined
  await sibling.transaction(async (tx) => {
    const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number
    await tx.query("SELECT 1 FROM event_deliveries WHERE id = 'mine-2' FOR UPDATE")
    // The DELETE takes mine-3 and waits for mine-2; the outcomes take mine-1 and wait for mine-3.
    deleted = call('DELETE', `/v1/webhook-subscriptions/${id}`).then(res => res.status)
    await until(async () => await waitingFor(store, pid) === 1)
    recorded = tables.finish(store, 'instance-a', ['mine-1', 'mine-3'].map(d => ({ id: d, status: 'SUCCEEDED', statusCode: 204, next: null, attempt: 0 })), 5, AT)
      .then(() => 'recorded', (err: unknown) => err)
    await until(async () => await waitingFor(store, pid) === 2)
    // The outcomes' deadlock check has run and found no cycle yet: the DELETE's will.
    await new Promise((resolve) => setTimeout(resolve, timeout * 1.5))
  })
  t.equal(await deleted, 204, 'the subscription is deleted')
  await recorded
  const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM event_deliveries WHERE subscription_id = $1', [id])
  t.equal(rows[0]?.n, 0, 'its deliveries went with it')
})

// An attempt that outlives its lease (its instance stalled) while the instance that holds it
// claims the delivery again: two attempts of one delivery in hand, the first one's lease gone.
// The first one's outcome was recorded under the second claim, clearing its lease, and the
// second one's then found no lease of its own and was dropped: a success lost, and the
// delivery attempted once more. An outcome is now recorded under the claim it was made by.
// The clock the dispatcher claims by is moved past the lease; the store is watched for the
// statements that record outcomes.
for (const db of databases) {
  t.test(`${db.label}: the outcome of an attempt whose lease ran out meanwhile`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    let offset = 0
    const now = (): Date => new Date(Date.now() + offset)
    let recordings = 0
    const watched = {
      ...store,
      query: async (...args: Parameters<Store['query']>) => {
        const result = await store.query(...args)
        if (args[0].includes('AS x(id, status, code, next')) recordings++
        return result
      }
    } as unknown as Store
    const hook = await receiver(t)
    // Each POST answered when the test says: the first one 500, the others 204.
    const answers: Array<() => void> = []
    hook.setRespond((_r, res) => {
      const status = answers.length === 0 ? 500 : 204
      answers.push(() => { res.statusCode = status; res.end() })
    })
    const timeoutMillis = 10_000
    const { base } = await startEvents(t, watched, {}, { now, timeoutMillis })
    const call = client(base)
    await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] })
    await call('POST', '/v1/authors', { name: 'Stalled', email: 'stalled@example.com' })
    await hook.waitFor(1)
    // Past the lease (twice the timeout and ten seconds): the instance claims it again.
    offset += 2 * timeoutMillis + 10_000 + 1000
    await hook.waitFor(2)
    const recorded = async (n: number): Promise<void> => { await until(async () => recordings >= n) }
    ;(answers[0] as () => void)()
    await recorded(1)
    ;(answers[1] as () => void)()
    await recorded(2)
    const { rows } = await store.query<{ status: string, attempts: number, leased: boolean }>('SELECT status, attempt_count AS attempts, lease_owner IS NOT NULL AS leased FROM event_deliveries')
    t.strictSame(rows, [{ status: 'SUCCEEDED', attempts: 2, leased: false }], 'the second attempt\'s success is recorded, the first one\'s failure is not')
    t.equal(hook.got.length, 2, 'no third attempt')
  })
}
