import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { problems } from '../../plugins/problem/errors.js'
import { registerWebhook, standardWebhooks } from '../../plugins/webhooks/index.js'
import { createStore } from '../../store/index.js'
import type { Store } from '../../store/types.js'
import { databases } from '../support/databases.js'
import { SECRET, bodyOf, build, bump, counters, countOf, signed } from './helper.js'

const URL = '/_webhooks/scanner/document-scanned'

/** An app whose handler bumps the counter named in the payload, and fails on request. */
async function scanner (t: Test, store: Store): Promise<FastifyInstance> {
  return await build(t, {
    store,
    routes: (app) => registerWebhook(app, {
      producer: 'scanner',
      event: 'document-scanned',
      verifier: standardWebhooks({ secrets: SECRET }),
      handler: async (payload: any, tx) => {
        await bump(tx, payload.counter)
        if (payload.fail === 'problem') throw problems.notFound('The document does not exist.')
        if (payload.fail === 'error') throw new Error('the handler broke')
      }
    })
  })
}

async function deliver (app: FastifyInstance, payload: unknown, id: string): Promise<{ statusCode: number, body: string }> {
  const body = JSON.stringify(payload)
  // One signature per delivery: a producer's retry is signed again, with the same id.
  return await app.inject({ method: 'POST', url: URL, payload: body, headers: signed(body, { id }) })
}

async function recorded (store: Store, id: string): Promise<Array<{ producer: string, delivery_id: string, received_at: string }>> {
  const { rows } = await store.query<{ producer: string, delivery_id: string, received_at: string }>('SELECT * FROM webhook_deliveries WHERE delivery_id = $1', [id])
  return rows
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await scanner(t, store)
    await counters(store)

    t.test('a replay is acknowledged with 204 and not applied again', async t => {
      for (let i = 0; i < 3; i++) t.equal((await deliver(app, { counter: 'seq' }, 'msg_seq')).statusCode, 204, `attempt ${i + 1}`)
      t.equal(await countOf(store, 'seq'), 1)
      const rows = await recorded(store, 'msg_seq')
      t.equal(rows.length, 1)
      t.match(rows[0], { producer: 'scanner', delivery_id: 'msg_seq', received_at: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ })
      t.equal((await deliver(app, { counter: 'seq' }, 'msg_seq_2')).statusCode, 204)
      t.equal(await countOf(store, 'seq'), 2, 'another id is another delivery')
    })

    t.test('delivery ids are scoped by producer', async t => {
      await store.query("INSERT INTO webhook_deliveries (producer, delivery_id) VALUES ('billing', 'msg_scope')")
      t.equal((await deliver(app, { counter: 'scope' }, 'msg_scope')).statusCode, 204)
      t.equal(await countOf(store, 'scope'), 1, 'the same id from another producer does not count')
    })

    t.test('100 concurrent replays: the effect happens exactly once', async t => {
      const results = await Promise.all(Array.from({ length: 100 }, async () => await deliver(app, { counter: 'burst' }, 'msg_burst')))
      t.strictSame([...new Set(results.map(r => r.statusCode))], [204])
      t.equal(await countOf(store, 'burst'), 1)
      t.equal((await recorded(store, 'msg_burst')).length, 1)
    })

    t.test('a failing handler rolls back its effect and the id, so a retry applies it', async t => {
      const missing = await deliver(app, { counter: 'fail', fail: 'problem' }, 'msg_fail')
      t.equal(missing.statusCode, 404, 'the handler\'s problem is the answer')
      t.equal(bodyOf(missing).detail, 'The document does not exist.')
      const broken = await deliver(app, { counter: 'fail', fail: 'error' }, 'msg_fail')
      t.equal(broken.statusCode, 500, 'an unexpected error: 500, retriable')
      t.equal(await countOf(store, 'fail'), 0, 'no effect kept')
      t.strictSame(await recorded(store, 'msg_fail'), [], 'no id kept')
      t.equal((await deliver(app, { counter: 'fail' }, 'msg_fail')).statusCode, 204, 'the retry succeeds')
      t.equal((await deliver(app, { counter: 'fail' }, 'msg_fail')).statusCode, 204)
      t.equal(await countOf(store, 'fail'), 1)
    })

    if (db.sibling !== undefined) {
      const sibling = db.sibling
      t.test('two instances on one database: 100 concurrent replays, applied once', async t => {
        const other = await scanner(t, await sibling(t, store))
        const results = await Promise.all(Array.from({ length: 100 }, async (_, i) => await deliver(i % 2 === 0 ? app : other, { counter: 'pair' }, 'msg_pair')))
        t.strictSame([...new Set(results.map(r => r.statusCode))], [204])
        t.equal(await countOf(store, 'pair'), 1)
        t.equal((await deliver(other, { counter: 'pair' }, 'msg_seq')).statusCode, 204, 'an id the first instance recorded')
        t.equal(await countOf(store, 'pair'), 1)
      })
    }
  })
}

t.test('PGlite on disk: the ids survive a restart', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  const first = createStore({ dataDir: dir })
  await first.ready()
  await counters(first)
  const before = await scanner(t, first)
  t.equal((await deliver(before, { counter: 'disk' }, 'msg_disk')).statusCode, 204)
  await before.close()
  await first.close()

  const second = createStore({ dataDir: dir })
  t.teardown(() => second.close())
  await second.ready()
  const after = await scanner(t, second)
  t.equal((await deliver(after, { counter: 'disk' }, 'msg_disk')).statusCode, 204, 'acknowledged after the restart')
  t.equal(await countOf(second, 'disk'), 1, 'not applied again')
  t.equal((await deliver(after, { counter: 'disk' }, 'msg_disk_2')).statusCode, 204)
  t.equal(await countOf(second, 'disk'), 2)
})

t.test('delivery ids are kept for the retention, then purged on a timer (the table does not grow for ever)', async t => {
  const store = await databases[0]?.create(t) as Store
  let at = Date.parse('2030-01-01T00:00:00.000Z')
  const now = (): Date => new Date(at)
  const app = await build(t, {
    store,
    plugin: { retention: 60_000, purgeInterval: 20, now },
    routes: (app) => registerWebhook(app, {
      producer: 'scanner',
      event: 'document-scanned',
      verifier: standardWebhooks({ secrets: SECRET }),
      handler: async (payload: any, tx) => { await bump(tx, payload.counter) }
    })
  })
  await counters(store)
  t.equal((await deliver(app, { counter: 'kept' }, 'msg_old')).statusCode, 204)
  at += 30_000
  t.equal((await deliver(app, { counter: 'kept' }, 'msg_new')).statusCode, 204)
  at += 30_000
  // msg_old is 60 s old now: past the retention; msg_new is not. However slow the machine, the
  // timer comes round: only the bound on waiting is generous.
  for (let i = 0; i < 500 && (await recorded(store, 'msg_old')).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal((await recorded(store, 'msg_old')).length, 0, 'an id past the retention is purged')
  t.equal((await recorded(store, 'msg_new')).length, 1, 'a younger one is kept')
  t.equal((await deliver(app, { counter: 'kept' }, 'msg_new')).statusCode, 204)
  t.equal(await countOf(store, 'kept'), 2, 'and a repeat of it is still not applied again')
})

t.test('retention options are checked, naming the option', async t => {
  const store = await databases[0]?.create(t) as Store
  for (const [plugin, message] of [
    [{ retention: 0 }, /webhooks plugin: retention must be a positive integer of milliseconds, got 0/],
    [{ purgeInterval: -1 }, /^webhooks plugin: purgeInterval must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got -1$/],
    // Node takes a longer timer delay as 1 ms: the purge would run every millisecond.
    [{ purgeInterval: 2147483648 }, /^webhooks plugin: purgeInterval must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ now: 'today' }, /webhooks plugin: now must be a function returning a Date, got "today"/]
  ] as const) {
    await t.rejects(build(t, { store, plugin: plugin as never }), { name: 'TypeError', message }, JSON.stringify(plugin))
  }
  const noTimer = await build(t, { store, plugin: { purgeInterval: 0, table: 'webhook_deliveries_manual' } })
  t.equal(noTimer.webhooks.deliveries.retention, 7 * 24 * 60 * 60 * 1000, 'default retention 7 days')
  // The longest a timer waits is taken; the retention, only compared with timestamps, has no such bound.
  await t.resolves(build(t, { store, plugin: { purgeInterval: 2147483647, retention: 2147483648 * 10, table: 'webhook_deliveries_longest' } }), 'purgeInterval 2147483647')
})

t.test('a failing purge of delivery ids is logged, not thrown', async t => {
  const store = await databases[0]?.create(t) as Store
  const warnings: Array<{ msg: string }> = []
  await build(t, { store, plugin: { purgeInterval: 10, table: 'webhook_deliveries_dropped' }, fastify: { logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(JSON.parse(line)) } } } } })
  await store.exec('DROP TABLE webhook_deliveries_dropped')
  for (let i = 0; i < 500 && warnings.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.match(warnings[0], { msg: /purging old delivery ids failed/ })
})
