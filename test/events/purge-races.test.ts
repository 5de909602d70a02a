import t from 'tap'
import { postgres } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import type { Store } from '../../store/types.js'
import { until, waitingFor } from '../support/row-locks.js'
import { client, startEvents } from './helper.js'

// The purge of ended deliveries racing the requests that write the same rows. A purge batch
// locks its rows in their physical order; a subscription's DELETE takes its deliveries along
// (ON DELETE CASCADE) in the order of its index, newest first. Met on the same rows, each held
// a row the other waited for: a deadlock, and the DELETE, when chosen as its victim, a 500.
// The interleaving is forced: a second connection holds the middle delivery until both wait.

const ENDED = new Date('2026-01-01T00:00:00Z')
const LATER = new Date('2026-03-01T00:00:00Z')

t.test('a purge batch and a subscription deleted with its ended deliveries', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t)
  const sibling = await (postgres.sibling as NonNullable<typeof postgres.sibling>)(t, store)
  const { base } = await startEvents(t, store, {}, { purgeInterval: 0 })
  const call = client(base)
  const tables = new EventTables()
  const id = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body.id as string
  // Others' deliveries, so that the DELETE's cascade reads its own through the index, as a
  // table of many subscriptions does.
  for (let i = 0; i < 20; i++) {
    await tables.insertSubscription(store, { ctx: 'prod', id: `other-${i}`, url: 'http://127.0.0.1:9/hook', events: ['author.created'], description: null, secret: 's', etag: '"e"', createdBy: null }, ENDED)
  }
  const insert = `INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, payload, status, created_at, ended_at)
    SELECT 'prod', $2 || g, $3, 'author.created', '{}', 'FAILED', $1::timestamptz + g * interval '1 second', $1::timestamptz + g * interval '1 second'
    FROM generate_series(1, $4::integer) AS g`
  await store.query(insert, [ENDED, 'other-', 'other-0', 2000])
  await store.query('UPDATE event_deliveries SET subscription_id = \'other-\' || (substr(id, 7)::integer % 20)')
  await store.query(insert, [ENDED, 'mine-', id, 3])
  await store.query('ANALYZE event_deliveries')

  let deleted: Promise<number> | undefined
  let purged: Promise<unknown> | undefined
  await sibling.transaction(async (tx) => {
    const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number
    await tx.query("SELECT 1 FROM event_deliveries WHERE id = 'mine-2' FOR UPDATE")
    deleted = call('DELETE', `/v1/webhook-subscriptions/${id}`).then(res => res.status)
    await until(async () => await waitingFor(store, pid) === 1)
    let settled = false
    purged = tables.purge(store, LATER).then(r => r, (err: unknown) => err).finally(() => { settled = true })
    // Waiting for the row held here too, or done without it.
    await until(async () => settled || await waitingFor(store, pid) === 2)
  })
  t.equal(await deleted, 204, 'the subscription is deleted')
  t.notOk(await purged instanceof Error, 'the purge ends without an error')
  const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM event_deliveries WHERE subscription_id = $1', [id])
  t.equal(rows[0]?.n, 0, 'the deliveries went with it')
})

t.test('a FAILED delivery retried by hand while a purge batch deletes it', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t)
  const sibling = await (postgres.sibling as NonNullable<typeof postgres.sibling>)(t, store)
  const { base } = await startEvents(t, store, {}, { purgeInterval: 0, worker: false })
  const call = client(base)
  const tables = new EventTables()
  const id = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body.id as string
  const failed = async (delivery: string): Promise<void> => {
    await store.query(`INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, payload, status, created_at, ended_at)
      VALUES ('prod', $1, $2, 'author.created', '{}', 'FAILED', $3, $3)`, [delivery, id, ENDED])
  }
  const retry = async (delivery: string): Promise<number> => (await call('POST', `/v1/webhook-subscriptions/${id}/deliveries/${delivery}/retry`)).status
  const statusOf = async (delivery: string): Promise<string | undefined> =>
    (await store.query<{ status: string }>('SELECT status FROM event_deliveries WHERE id = $1', [delivery])).rows[0]?.status

  t.test('the retry first: it is kept, PENDING, and the purge leaves it', async t => {
    await failed('first')
    let retried: Promise<number> | undefined
    await sibling.transaction(async (tx) => {
      const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number
      await tx.query("SELECT 1 FROM event_deliveries WHERE id = 'first' FOR UPDATE")
      retried = retry('first')
      await until(async () => await waitingFor(store, pid) === 1)
    })
    t.equal(await retried, 200)
    await tables.purge(store, LATER)
    t.equal(await statusOf('first'), 'PENDING')
  })

  t.test('the purge first: the retry is a 404, never a 200 for a deleted delivery', async t => {
    await failed('second')
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    let deleted!: () => void
    const held = new Promise<void>((resolve) => { deleted = resolve })
    // The purge's batch held open once it has deleted, until the retry waits for it.
    const gated = {
      transaction: async (fn: Parameters<Store['transaction']>[0], opts?: Parameters<Store['transaction']>[1]) => await store.transaction(async (tx) => {
        const batch = await fn(tx)
        deleted()
        await gate
        return batch
      }, opts)
    } as unknown as Store
    const purged = tables.purge(gated, LATER)
    await held
    const retried = retry('second')
    await until(async () => (await store.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SET status = ''PENDING'', tries = 0%'")).rows[0]?.n === 1)
    release()
    await purged
    t.equal(await retried, 404)
    t.equal(await statusOf('second'), undefined)
  })
})
