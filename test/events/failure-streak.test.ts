import t from 'tap'
import type { ServerResponse } from 'node:http'
import { databases } from '../support/databases.js'
import { Dispatcher } from '../../plugins/events/dispatcher.js'
import { EventTables } from '../../store/events.js'
import { migrate, type Store } from '../../store/index.js'
import { receiver, sleep } from './helper.js'

// A subscription is switched off when its last `maxFailures` deliveries all FAILED: a success
// recorded by one instance while another records failures starts the count again, however many
// failures there were when that success's attempt was claimed.

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
