import t from 'tap'
import type { QueryResult, Store } from '../../index.js'
import type { QueryOptions } from '../../store/types.js'
import { databases } from '../support/databases.js'
import { client, receiver, sleep, startEvents } from './helper.js'

// Deliveries are woken by the database and by the retries an instance records. The safety poll
// is a minute away and no request of this instance wrote the events, so within the bound below
// only a notification (a delivery written, one retried by hand) or the retry's own timer
// explains an attempt.

const POLL = 60_000
const BOUND_MILLIS = 20_000

/** The store as the plugin sees it, counting the claims of deliveries that have returned. */
function watched (real: Store): { store: Store, claims: () => number } {
  let claims = 0
  async function query<R extends object = Record<string, unknown>> (sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const result = await real.query<R>(sql, params, options)
    if (options?.name?.endsWith('_claim') === true) claims++
    return result
  }
  return { store: { ...real, query }, claims: () => claims }
}

async function until (check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + BOUND_MILLIS
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`not within ${BOUND_MILLIS} ms: ${what}`)
    await sleep(20)
  }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // Another instance's connection on a server; PGlite has one, which another app in this process would use alike.
    const writer = db.sibling === undefined ? store : await db.sibling(t, store)
    const w = watched(store)
    const { app, base } = await startEvents(t, w.store, {}, { pollMillis: POLL, retrySchedule: [300] })
    const call = client(base)
    const hook = await receiver(t)
    const answers = [500, 500, 204]
    hook.setRespond((_r, res) => { res.statusCode = answers.shift() ?? 204; res.end() })
    const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] }, { 'svc-execution-context': 'prod' })).body
    // The start's own look is over: the next poll is a minute away.
    await until(() => w.claims() >= 1, 'the first look')

    // Written as another instance writes it: the plugin of this one knows nothing of it.
    t.equal(await app.events.tables.emit(writer, 'prod', null, new Date(), [{ type: 'author.created', payload: '{"type":"author.created"}' }]), 1)
    await until(() => hook.got.length >= 1, 'the first attempt, woken by the notification of the delivery written')
    await until(() => hook.got.length >= 2, 'the retry, when it came due')
    t.equal(hook.got[1]?.headers['webhook-id'], hook.got[0]?.headers['webhook-id'], 'the same delivery')

    const path = `/v1/webhook-subscriptions/${s.id as string}/deliveries`
    await until(async () => (await call('GET', `${path}?status=FAILED`)).body.results.length === 1, 'FAILED after the schedule')
    const failed = (await call('GET', `${path}?status=FAILED`)).body.results[0]
    t.equal((await call('POST', `${path}/${failed.id as string}/retry`)).status, 200, 'retried by hand: the route writes, and wakes nobody itself')
    await until(() => hook.got.length >= 3, 'the attempt of a delivery retried, woken by its notification')
    await until(async () => (await call('GET', `${path}?status=SUCCEEDED`)).body.results.length === 1, 'delivered')

    // Another instance that only writes: its change is one autocommit statement, which does
    // not notify; the instance announces it once committed.
    const other = await startEvents(t, writer, {}, { pollMillis: POLL, worker: false })
    const otherCall = client(other.base)
    t.equal((await otherCall('POST', '/v1/authors', { name: 'Announced', email: 'announced@example.com' }, { 'svc-execution-context': 'prod' })).status, 201)
    await until(() => hook.got.length >= 4, 'the attempt of a change another instance wrote, woken by its announcement')
    // A bulk's changes are written in a transaction, whose statement notifies as it commits.
    // After the look that follows an attempt (a failure to wake would then pass unseen).
    await until(async () => (await call('GET', `${path}?status=SUCCEEDED`)).body.results.length === 2, 'the announced one delivered')
    await sleep(500)
    const bulk = await otherCall('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'In bulk', email: 'bulk@example.com' } }] }, { 'svc-execution-context': 'prod', 'content-type': 'application/json' })
    t.equal(bulk.body.status, 'SUCCEEDED')
    await until(() => hook.got.length >= 5, 'the attempt of a change another instance wrote in a transaction, woken as it committed')
    t.pass('every attempt came without the poll')
  })
}
