import t from 'tap'
import { databases } from '../support/databases.js'
import { SerializationFailure, Unavailable } from '../../store/errors.js'
import type { QueryOptions, QueryResult, Store } from '../../store/types.js'
import { WRITE_RETRIES } from '../../plugins/idempotency/internal.js'
import { client, startEvents } from './helper.js'

// A change of a subscription is decided on it as read, then written only while it is as read,
// with no transaction held in between. One that finds it changed since is decided again, the
// last time in a transaction with the row locked; one that still loses (a deadlock each time,
// say) is a 409 the client may retry, as a resource's write is: never a 500, which says the
// server is at fault.

/** A write of a subscription, alone or under an idempotency key's claim (its row locked first). */
const SUBSCRIPTION_WRITE = /^(UPDATE|DELETE FROM) "event_subscriptions"|^WITH c AS \(SELECT 1 FROM "event_subscriptions"/

for (const db of databases) {
  t.test(`${db.label}: a subscription's change that loses to concurrent ones`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    /** Every write of a subscription, and every transaction, a deadlock's victim. */
    let losing = false
    /** How many more writes of a subscription find it changed since it was read (nothing written). */
    let misses = 0
    let writes = 0
    /** Every write under a key finds the key taken (and nobody holding it when asked). */
    let unclaimed = false
    /** Every write of a subscription finds the database gone. */
    let away = false
    /** `db`'s query, with the faults above: the store's own, or a transaction's. */
    const faulty = (db: Pick<Store, 'query'>) => async <R extends object = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> => {
      if (unclaimed && /^WITH k AS/.test(sql) && /INSERT INTO "event_subscriptions"/.test(sql)) {
        writes++
        return { rows: [], rowCount: 0 }
      }
      if (SUBSCRIPTION_WRITE.test(sql)) {
        writes++
        if (away) throw new Unavailable('down')
        if (losing) throw new SerializationFailure({ sqlState: '40P01' })
        if (misses > 0) {
          misses--
          // A write under a key's claim answers one row, that it found nothing to write.
          const nothing = /^WITH c AS/.test(sql) ? [{ found: false, deleted: 0, 'svc:found': false }] : []
          return { rows: nothing as unknown as R[], rowCount: nothing.length }
        }
      }
      return await db.query<R>(sql, params, options)
    }
    const contended = {
      ...store,
      query: faulty(store),
      transaction: async (...[fn, opts]: Parameters<Store['transaction']>) => {
        if (losing) throw new SerializationFailure({ sqlState: '40P01' })
        return await store.transaction(async (tx) => await fn({ ...tx, query: faulty(tx) } as typeof tx), opts)
      }
    } as unknown as Store
    const { base } = await startEvents(t, contended, {}, { worker: false })
    const call = client(base)
    const subscribe = async (): Promise<{ path: string, etag: string }> => {
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body
      return { path: `/v1/webhook-subscriptions/${s.id as string}`, etag: s.etag }
    }
    const conflict = { status: 409, detail: 'The webhook subscription was changed by a concurrent request; retry.' }

    t.test('a deadlock each time: run again, then a 409, nothing changed', async t => {
      const s = await subscribe()
      losing = true
      const cases: Array<[string, () => ReturnType<typeof call>, number]> = [
        ['PATCH', async () => await call('PATCH', s.path, { description: 'renamed' }, { 'if-match': s.etag }), WRITE_RETRIES + 1],
        ['DELETE', async () => await call('DELETE', s.path), WRITE_RETRIES + 1],
        // The key's claim in the same statement: run again as the others.
        ['DELETE with a key', async () => await call('DELETE', s.path, undefined, { 'svc-idempotency-key': 'a3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c11' }), WRITE_RETRIES + 1],
        ['PATCH with a key', async () => await call('PATCH', s.path, { description: 'renamed' }, { 'if-match': s.etag, 'svc-idempotency-key': 'b3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c12' }), WRITE_RETRIES + 1]
      ]
      for (const [name, send, tries] of cases) {
        writes = 0
        const answer = await send()
        t.equal(answer.status, 409, name)
        t.match(answer.body, conflict, name)
        t.equal(writes, tries, `${name}: written ${tries} times`)
      }
      losing = false
      const now = await call('GET', s.path)
      t.equal(now.status, 200, 'nothing was changed')
      t.equal(now.body.description, null)
    })

    t.test('changed between its read and its write: decided again on it as it is now', async t => {
      const s = await subscribe()
      misses = 1
      writes = 0
      const patched = await call('PATCH', s.path, { description: 'renamed' }, { 'if-match': s.etag })
      t.equal(patched.status, 204)
      t.equal(writes, 2, 'written again after the miss')
      const now = await call('GET', s.path)
      t.equal(now.body.description, 'renamed')
      t.equal(now.headers.get('etag'), patched.headers.get('etag'))
      // A weak tag never matches (strong comparison): read, and refused on it.
      writes = 0
      t.equal((await call('DELETE', s.path, undefined, { 'if-match': `W/${patched.headers.get('etag') as string}` })).status, 412)
      t.equal(writes, 0, 'nothing written')
      // Decided on its If-Match alone, the delete misses; read, it still holds: deleted at the ETag read.
      misses = 1
      writes = 0
      t.equal((await call('DELETE', s.path, undefined, { 'if-match': patched.headers.get('etag') as string })).status, 204)
      t.equal(writes, 2)
      t.equal((await call('GET', s.path)).status, 404, 'deleted')
      // The delete at the ETag read misses too: decided again, from the start.
      const other = await subscribe()
      misses = 2
      writes = 0
      t.equal((await call('DELETE', other.path, undefined, { 'if-match': other.etag })).status, 204)
      t.equal(writes, 3)
      t.equal((await call('GET', other.path)).status, 404, 'deleted')
      // A PATCH whose write at the ETag read misses too: decided again, from the start.
      const twice = await subscribe()
      misses = 2
      writes = 0
      const renamed = await call('PATCH', twice.path, { description: 'renamed twice' }, { 'if-match': twice.etag })
      t.equal(renamed.status, 204)
      t.equal(writes, 3)
      t.equal((await call('GET', twice.path)).body.description, 'renamed twice')
      // Under a key, a PATCH written at the ETag read takes the claim with it: its retry replays.
      const keyedPatch = await subscribe()
      const pk = 'e3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c17'
      misses = 1
      writes = 0
      const kp = await call('PATCH', keyedPatch.path, { description: 'keyed' }, { 'if-match': keyedPatch.etag, 'svc-idempotency-key': pk })
      t.equal(kp.status, 204)
      t.equal(writes, 2, 'written again after the miss')
      const replayed = await call('PATCH', keyedPatch.path, { description: 'keyed' }, { 'if-match': keyedPatch.etag, 'svc-idempotency-key': pk })
      t.equal(replayed.status, 204, 'the retry')
      t.equal(replayed.headers.get('etag'), kp.headers.get('etag'), 'answered as the first')
      t.equal(writes, 3, 'its write finds the key its own')
      // Under a key: the claim goes with the delete at the ETag read, and a retry answers 204.
      const keyed = await subscribe()
      const k = 'f3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c16'
      misses = 1
      writes = 0
      t.equal((await call('DELETE', keyed.path, undefined, { 'if-match': keyed.etag, 'svc-idempotency-key': k })).status, 204)
      t.equal(writes, 2)
      t.equal((await call('GET', keyed.path)).status, 404, 'deleted')
      t.equal((await call('DELETE', keyed.path, undefined, { 'if-match': keyed.etag, 'svc-idempotency-key': k })).status, 204, 'the retry')
      t.equal(writes, 3, 'which finds the key its own')
    })

    t.test('a key that its write finds taken, though nobody holds it when asked (expired meanwhile): tried again, then a 409', async t => {
      unclaimed = true
      writes = 0
      const description = `unclaimed ${Math.random()}`
      const answer = await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'], description }, { 'svc-idempotency-key': 'd3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c14' })
      unclaimed = false
      t.equal(answer.status, 409)
      t.match(answer.body, conflict)
      t.equal(writes, WRITE_RETRIES + 1, 'written once, then again for each retry')
      const listed = (await call('GET', '/v1/webhook-subscriptions?limit=100')).body.results as Array<{ description: string | null }>
      t.equal(listed.filter(x => x.description === description).length, 0, 'nothing created')
    })

    t.test('a keyed write that finds the database gone: a 503, the key not asked about', async t => {
      const s = await subscribe()
      away = true
      const answer = await call('PATCH', s.path, { description: 'gone' }, { 'if-match': s.etag, 'svc-idempotency-key': 'e3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c15' })
      away = false
      t.equal(answer.status, 503)
      t.equal((await call('GET', s.path)).body.description, null, 'nothing changed')
    })

    t.test('changed again before every write: once its retries are spent, decided with the row locked, and written', async t => {
      const s = await subscribe()
      // Each decision writes twice: on its If-Match alone, then at the ETag it read.
      misses = 2 * (WRITE_RETRIES + 1)
      writes = 0
      const answer = await call('PATCH', s.path, { description: 'at last' }, { 'if-match': s.etag })
      t.equal(answer.status, 204, 'not a 409: the last decision holds the row')
      t.equal(writes, 2 * (WRITE_RETRIES + 1) + 1, 'every write outside the transaction missed; in it, the first (on If-Match alone) wrote')
      t.equal(misses, 0)
      const now = await call('GET', s.path)
      t.equal(now.body.description, 'at last')
      t.equal(now.headers.get('etag'), answer.headers.get('etag'))
    })

    t.test('missed even with the row locked (which a database cannot do): a 409 once the transaction\'s retries are spent', async t => {
      const s = await subscribe()
      misses = 1000
      writes = 0
      const answer = await call('PATCH', s.path, { description: 'never' }, { 'if-match': s.etag })
      misses = 0
      t.equal(answer.status, 409)
      t.match(answer.body, conflict)
      t.equal(writes, 2 * (WRITE_RETRIES + 1) * 2, 'as many tries in the transaction as outside it')
      t.equal((await call('GET', s.path)).body.description, null, 'nothing changed')
    })
  })
}

// Under an idempotency key, a write's claim is taken in its own statement only while the
// subscription is as read: the statement locks its row first, so a change that commits while
// it waits is seen. Were the claim decided on the statement's snapshot, it would be kept for a
// write that then found the row changed and wrote nothing, and the key's retry would answer
// 204 for a change never made.
const server = databases.find(db => db.kind === 'pg')
t.test('a keyed PATCH that waits for a concurrent change of the subscription keeps no key', { skip: server?.skip ?? 'no server entry' }, async t => {
  const store = await (server as NonNullable<typeof server>).create(t)
  const { base } = await startEvents(t, store, {}, { worker: false })
  const call = client(base)
  const s = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body
  const path = `/v1/webhook-subscriptions/${s.id as string}`
  const key = 'c3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c13'
  let commit: () => void = () => {}
  const gate = new Promise<void>((resolve) => { commit = resolve })
  t.teardown(() => { commit() })
  let changed: () => void = () => {}
  const locked = new Promise<void>((resolve) => { changed = resolve })
  // Another request's change, held uncommitted until the PATCH waits for it.
  const other = store.transaction(async (tx) => {
    await tx.query("UPDATE event_subscriptions SET etag = '\"changed\"', description = 'theirs' WHERE id = $1", [s.id])
    changed()
    await gate
  })
  await locked
  const patch = call('PATCH', path, { description: 'mine' }, { 'if-match': s.etag, 'svc-idempotency-key': key })
  // The PATCH read the subscription as it was committed (its ETag as sent), and its write waits for the row.
  const waiting = async (): Promise<boolean> => (await store.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH c AS (SELECT 1 FROM \"event_subscriptions\"%'")).rows.length > 0
  for (let i = 0; !await waiting(); i++) {
    if (i > 3000) throw new Error('the PATCH never waited for the row')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  commit()
  await other
  const refused = await patch
  t.equal(refused.status, 412, 'decided again on the subscription as changed: its If-Match is stale now')
  t.match((await call('GET', path)).body, { description: 'theirs', etag: '"changed"' }, 'not written')
  const retried = await call('PATCH', path, { description: 'mine' }, { 'if-match': '"changed"', 'svc-idempotency-key': key })
  t.equal(retried.status, 204, 'the key was not kept: the same key applies')
  t.equal((await call('GET', path)).body.description, 'mine', 'applied this time')
})
