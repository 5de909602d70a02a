import t from 'tap'
import { postgres } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import type { Queryable, Store } from '../../store/types.js'
import { client, startEvents } from './helper.js'

// A subscription deleted while a change writes its events: the change is made, its event goes to
// the subscriptions that remain. The delete is held open on a second connection until the write
// waits for it, then committed: the write's join saw the subscription, its foreign key's check
// found it gone, and the change was refused (a 409 naming a reference the author does not have).

/** Runs `write` while a transaction on `sibling` deletes subscription `id`, committed once the write waits for it. */
async function deletedMeanwhile<T> (store: Store, sibling: Store, id: string, write: () => Promise<T>): Promise<T> {
  let pending: Promise<T> | undefined
  await sibling.transaction(async (tx: Queryable) => {
    const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    await tx.query('DELETE FROM event_subscriptions WHERE id = $1', [id])
    pending = write()
    const blocker = (rows[0] as { pid: number }).pid
    for (;;) {
      const waiting = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [blocker])
      if ((waiting.rows[0] as { n: number }).n > 0) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })
  return await (pending as Promise<T>)
}

t.test('a change made while a subscription that wants its event is deleted', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t)
  const sibling = await (postgres.sibling as NonNullable<typeof postgres.sibling>)(t, store)
  const { base } = await startEvents(t, store)
  const call = client(base)
  const subscribe = async (): Promise<string> => (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body.id
  const kept = await subscribe()
  // The instance has seen a subscription want the event: its writes carry the outbox.
  t.equal((await call('POST', '/v1/authors', { name: 'Known', email: 'known@example.com' })).status, 201)

  const cases: Array<[string, () => Promise<number>]> = [
    ['an item route', async () => (await call('POST', '/v1/authors', { name: 'Item', email: 'item@example.com' })).status],
    ['a bulk operation', async () => {
      const res = await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'Bulk', email: 'bulk@example.com' } }] }, { 'content-type': 'application/json' })
      return res.body.status === 'SUCCEEDED' ? 201 : 409
    }]
  ]
  for (const [name, write] of cases) {
    const gone = await subscribe()
    t.equal(await deletedMeanwhile(store, sibling, gone, write), 201, `${name}: the change is made`)
    const { rows } = await store.query<{ n: number, sub: string }>('SELECT subscription_id AS sub, count(*)::int AS n FROM event_deliveries GROUP BY 1')
    t.strictSame(rows.map(r => r.sub), [kept], `${name}: its event went to the subscription that remains`)
  }

  t.test('an application\'s own event, emitted meanwhile', async t => {
    const tables = new EventTables()
    const gone = await subscribe()
    const written = await deletedMeanwhile(store, sibling, gone, async () => await tables.emit(store, 'prod', null, new Date(), [{ type: 'author.created', payload: '{}' }]))
    t.equal(written, 1, 'one delivery, to the subscription that remains')
  })
})
