import { once } from 'node:events'
import pg from 'pg'
import t from 'tap'
import { parseServiceHeader } from '../../plugins/conventions/index.js'
import { receiver, verify } from '../events/helper.js'
import { TEST_DATABASE_URL } from '../support/databases.js'

// bench/events.js holds the suite's POSTs with a subscription to a floor: a trigger writing each
// document's event in the insert's transaction (bench/lib/floor-outbox.js) and a bare process
// delivering them (bench/servers/floor-deliverer.js). It is a fair floor only if it does what
// any outbox must: an event for each committed insert and none for one rolled back, each
// delivered, signed as Standard Webhooks asks, with the headers the contract lists.

// Plain JavaScript without types: computed specifiers keep them `any`.
const harness = await import(new URL('../../bench/lib/harness.js', import.meta.url).href)
const { FLOOR_SECRET, FLOOR_TABLE, floorSchema } = await import(new URL('../../bench/lib/floor-outbox.js', import.meta.url).href)

const skip = TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '' ? 'PostgreSQL server not tested: set TEST_DATABASE_URL' : false

t.test('the floor writes an event per committed insert and delivers each, signed, once', { skip }, async (t) => {
  // A database of its own: the deliverer connects by URL and knows no schema.
  const name = `bench_floor_${process.pid}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  })
  const url = new URL(TEST_DATABASE_URL as string)
  url.pathname = `/${name}`
  const db = new pg.Client({ connectionString: url.href })
  await db.connect()
  t.teardown(() => db.end())
  await db.query('CREATE TABLE documents (id text PRIMARY KEY, name text NOT NULL)')
  for (const sql of floorSchema.create) await db.query(sql)

  const insert = async (ids: string[], commit: boolean): Promise<void> => {
    await db.query('BEGIN')
    await db.query('INSERT INTO documents (id, name) SELECT id, \'n-\' || id FROM unnest($1::text[]) AS id', [ids])
    await db.query(commit ? 'COMMIT' : 'ROLLBACK')
  }
  await insert(['off-1'], true)
  t.equal((await db.query(`SELECT count(*)::int AS n FROM ${FLOOR_TABLE}`)).rows[0].n, 0, 'no event while the trigger is disabled')
  await db.query(floorSchema.enable)
  await insert(['a-1', 'a-2', 'a-3'], true)
  await insert(['rolled-1', 'rolled-2'], false)
  const { rows } = await db.query(`SELECT payload FROM ${FLOOR_TABLE} ORDER BY id`)
  const bodies = rows.map((r) => JSON.parse(r.payload))
  t.strictSame(bodies.map((b) => b.data.id), ['a-1', 'a-2', 'a-3'], 'one event per committed insert, none for those rolled back')
  t.strictSame(Object.keys(bodies[0]), ['type', 'timestamp', 'data'], 'the contract\'s body')
  t.equal(bodies[0].type, 'document.created')
  t.match(bodies[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'a date-time of the convention')
  t.strictSame(bodies[0].data, { id: 'a-1', name: 'n-a-1' }, 'the row as written')

  const hook = await receiver(t)
  const received = hook.got

  const deliverer = await harness.startServer('floor-deliverer.js', { DATABASE_URL: url.href, BENCH_FLOOR_TARGET: hook.url })
  t.teardown(() => deliverer.stop())
  deliverer.child.send({ type: 'floor', on: true })
  // More than a batch, written while it delivers.
  const more = Array.from({ length: 300 }, (_, i) => `b-${i}`)
  for (let i = 0; i < more.length; i += 50) await insert(more.slice(i, i + 50), true)
  await db.query(floorSchema.disable)
  const idle = once(deliverer.child, 'message')
  deliverer.child.send({ type: 'floor', on: false })
  t.strictSame((await idle)[0], { type: 'floor-idle' }, 'told it is done once told to stop')

  const ids = received.map((r) => r.json.data.id).sort()
  t.strictSame(ids, ['a-1', 'a-2', 'a-3', ...more].sort(), 'every committed event delivered once')
  t.equal((await db.query(`SELECT count(*)::int AS n FROM ${FLOOR_TABLE}`)).rows[0].n, 0, 'the table emptied')
  const unsigned = received.filter((r) => {
    try {
      verify(`whsec_${FLOOR_SECRET as string}`, r)
      return false
    } catch {
      return true
    }
  })
  t.equal(unsigned.length, 0, 'every delivery verified by the standardwebhooks library')
  t.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, received.length, 'a webhook-id per event')
  const headers = received[0]?.headers ?? {}
  t.equal(headers['content-type'], 'application/json')
  t.match(headers['user-agent'], /^[\w.-]+\/\d+ \(.+\)$/, 'a User-Agent of the convention\'s form')
  t.ok(parseServiceHeader(headers['svc-service'] as string).ok, 'a Svc-Service the suite accepts')
  t.type(headers['x-request-id'], 'string', 'an X-Request-ID')
})
