import t from 'tap'
import type { ServerResponse } from 'node:http'
import { databases } from '../support/databases.js'
import { Dispatcher } from '../../plugins/events/dispatcher.js'
import { EventTables } from '../../store/events.js'
import { migrate, type Queryable, type Store } from '../../store/index.js'
import { receiver, sleep } from './helper.js'

// A subscription is switched off when its last `maxFailures` deliveries all FAILED: a success
// recorded by one instance while another records failures starts the count again, however many
// failures there were when that success's attempt was claimed. The outcomes and the count are
// one statement, so no reader sees one without the other.

const MAX_FAILURES = 20

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const tables = new EventTables('streak')
    await migrate(store, tables.migrations())
    await tables.insertSubscription(store, { ctx: 'prod', id: 's-1', url: 'http://127.0.0.1/', events: ['x.happened'], description: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', etag: '"e"', createdBy: null }, new Date())
    const hook = await receiver(t)
    await store.query('UPDATE streak_subscriptions SET url = $1', [hook.url])
    // The first attempt is held until the others have failed; every other one fails at once.
    let first: ServerResponse | null = null
    hook.setRespond((_r, res) => {
      if (hook.got.length === 1) first = res
      else { res.statusCode = 500; res.end() }
    })

    const dispatcher = (concurrency: number): Dispatcher => {
      const d = new Dispatcher({ store, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 60_000, pollMillis: 50, concurrency, perSubscription: concurrency, maxFailures: MAX_FAILURES, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} }, stopGraceMillis: 0 })
      t.teardown(async () => { await d.stop() })
      return d
    }
    const emit = async (n: number): Promise<void> => {
      await tables.emit(store, 'prod', null, new Date(), Array.from({ length: n }, () => ({ type: 'x.happened', payload: '{}' })))
    }
    const state = async (s: Store): Promise<{ failed: number, succeeded: number, failures: number, active: boolean }> => {
      const { rows } = await s.query<{ failed: number, succeeded: number, failures: number, active: boolean }>(`SELECT
          (SELECT count(*)::int FROM streak_deliveries WHERE status = 'FAILED') AS failed,
          (SELECT count(*)::int FROM streak_deliveries WHERE status = 'SUCCEEDED') AS succeeded,
          consecutive_failures AS failures, active FROM streak_subscriptions`)
      return rows[0] as { failed: number, succeeded: number, failures: number, active: boolean }
    }
    const until = async (ok: (s: Awaited<ReturnType<typeof state>>) => boolean): Promise<void> => {
      while (!ok(await state(store))) await sleep(20)
    }

    // Instance A claims the first delivery, with no failures yet, and holds it: one at a time.
    const a = dispatcher(1)
    await emit(1)
    await a.start()
    await hook.waitFor(1)
    // Instance B fails the next ones meanwhile.
    await emit(MAX_FAILURES - 1)
    await dispatcher(32).start()
    await until(s => s.failed === MAX_FAILURES - 1)
    // A's attempt succeeds after them: the last delivery to end succeeded.
    ;(first as unknown as ServerResponse).statusCode = 204
    ;(first as unknown as ServerResponse).end()
    await until(s => s.succeeded === 1)
    t.match(await state(store), { failures: 0, active: true }, 'the success starts the count again')
    await emit(1)
    await until(s => s.failed === MAX_FAILURES)
    t.match(await state(store), { failures: 1, active: true }, 'one failure since the success: still on')
  })
}

for (const db of databases) {
  t.test(`${db.label}: outcomes in the order they ended, recorded with the count in one statement`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const tables = new EventTables('order')
    await migrate(store, tables.migrations())
    const at = new Date('2026-01-01T00:00:00Z')
    await tables.insertSubscription(store, { ctx: 'prod', id: 's-1', url: 'http://127.0.0.1/', events: ['x.happened'], description: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', etag: '"e"', createdBy: null }, at)
    const state = async (): Promise<{ failures: number, active: boolean, etag: string }> => {
      const { rows } = await store.query<{ failures: number, active: boolean, etag: string }>('SELECT consecutive_failures AS failures, active, etag FROM order_subscriptions')
      return rows[0] as { failures: number, active: boolean, etag: string }
    }
    let sent = 0
    const counting: Queryable = { query: async (text, values, options) => { sent++; return await store.query(text, values, options) }, exec: async (text) => { sent++; await store.exec(text) } }
    /** Claims `statuses.length` new deliveries and records them ending in that order. */
    const end = async (statuses: ReadonlyArray<'SUCCEEDED' | 'FAILED' | 'PENDING'>, maxFailures = 5): Promise<void> => {
      await tables.emit(store, 'prod', null, at, statuses.map(() => ({ type: 'x.happened', payload: '{}' })))
      const claimed = await tables.claim(store, 'me', at, 60_000, 100, [], 100)
      t.equal(claimed.length, statuses.length, 'each claimed')
      sent = 0
      await tables.finish(counting, 'me', claimed.map((c, i) => ({ id: c.id, status: statuses[i] as 'SUCCEEDED', statusCode: statuses[i] === 'SUCCEEDED' ? 204 : 500, next: statuses[i] === 'PENDING' ? new Date(at.getTime() + 60_000) : null, attempt: c.attemptCount })), maxFailures, at)
      t.equal(sent, 1, 'one statement')
    }

    await end(['FAILED', 'FAILED', 'PENDING'])
    t.match(await state(), { failures: 2, active: true }, 'two failures; a retry to come counts for nothing yet')
    await end(['FAILED', 'SUCCEEDED', 'FAILED', 'PENDING'])
    t.match(await state(), { failures: 1, active: true }, 'a success in the batch: only the failure after it counts')
    await end(['SUCCEEDED'])
    t.match(await state(), { failures: 0, active: true }, 'a success last: none')
    const before = await state()
    await end(['SUCCEEDED', 'SUCCEEDED'])
    t.strictSame(await state(), before, 'successes with none in a row: the subscription is not written')
    await end(['FAILED', 'FAILED', 'FAILED', 'FAILED'])
    t.match(await state(), { failures: 4, active: true }, 'one short of the limit: still on')
    await end(['FAILED'])
    const off = await state()
    t.match(off, { failures: 5, active: false }, 'the limit reached: switched off')
    t.not(off.etag, before.etag, 'with a new ETag')
  })
}
