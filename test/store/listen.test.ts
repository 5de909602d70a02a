import t from 'tap'
import pg from 'pg'
import { createStore, type Queryable, type StoreLogger } from '../../store/index.js'
import { countStatements } from '../support/count-statements.js'
import { databases, postgres, TEST_DATABASE_URL } from '../support/databases.js'

// Store.listen on both engines: notifications committed by any connection call the listeners of
// their channel; a stop ends it; on a server, a connection of its own that comes back after a
// failure, does nothing behind PgBouncer, and closes with the store.

/** Resolves once `check` holds, looking every 20 ms; rejects after `seconds` (a generous bound: nothing here races it). */
async function eventually (check: () => boolean | Promise<boolean>, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('eventually: the condition never held')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function channelName (): string {
  return `Chan ${process.pid}.${Math.random().toString(36).slice(2, 8)}`
}

async function notify (db: Queryable, channel: string): Promise<void> {
  await db.query('SELECT pg_notify($1, \'\')', [channel])
}

/** A logger that keeps its messages. */
function recording (): StoreLogger & { lines: string[] } {
  const lines: string[] = []
  const keep = (_obj: object, msg?: string): void => { lines.push(msg ?? '') }
  return { lines, info: keep, warn: keep, error: keep }
}

/** The server sessions whose last statement was `sql`. */
async function sessions (sql: string): Promise<number[]> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [sql])
    return rows.map(r => r.pid)
  } finally {
    await admin.end()
  }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const writer = db.sibling === undefined ? store : await db.sibling(t, store)

    t.test('a committed notification calls the listeners of its channel, its name as written; a stop ends it', async t => {
      const channel = channelName()
      let a = 0
      let b = 0
      const stopA = await store.listen(channel, () => { a++ })
      const stopB = await store.listen(channel, () => { b++ })
      await notify(writer, channel)
      await eventually(() => a === 1 && b === 1)
      await stopA()
      await notify(writer, channel)
      await eventually(() => b === 2)
      t.equal(a, 1, 'the stopped listener hears no more; the other still does')
      await writer.transaction(async (tx) => {
        await notify(tx, channel)
        await notify(tx, channel)
      })
      await notify(writer, channel.toLowerCase())
      await notify(writer, channel)
      // Notifications arrive in order: once the last one is here, the others are too.
      await eventually(() => b >= 4)
      t.equal(b, 4, 'the transaction\'s two as one; another case, another channel')
      await stopB()
      await stopB()
      t.pass('a stop twice is harmless')
    })

    t.test('a notification rolled back is never sent', async t => {
      const channel = channelName()
      let heard = 0
      const stop = await store.listen(channel, () => { heard++ })
      t.teardown(stop)
      await writer.transaction(async (tx) => {
        await tx.query('SELECT pg_notify($1, \'\')', [channel])
        await tx.savepoint(async () => { throw new Error('undo') }).catch(() => {})
        throw new Error('roll back')
      }).catch(() => {})
      await notify(writer, `${channel}-other`)
      await notify(writer, channel)
      await eventually(() => heard > 0)
      t.equal(heard, 1, 'only the committed one')
    })
  })
}

t.test('PostgreSQL server: the listening connection', { skip: postgres.skip }, async t => {
  t.test('comes back after the server ends it, LISTENs again and calls every listener once', async t => {
    const logger = recording()
    const store = createStore({ databaseUrl: TEST_DATABASE_URL, logger })
    t.teardown(() => store.close())
    const channel = channelName()
    let heard = 0
    await store.listen(channel, () => { heard++ })
    const [pid] = await sessions(`LISTEN "${channel}"`)
    t.type(pid, 'number', 'a session of its own, listening')
    await store.query('SELECT pg_terminate_backend($1)', [pid])
    await eventually(() => heard === 1)
    t.ok(logger.lines.includes('store: the LISTEN connection failed; connecting again'), 'logged')
    t.ok(logger.lines.includes('store: the LISTEN connection is back; listening again'))
    const again = await sessions(`LISTEN "${channel}"`)
    t.equal(again.length, 1)
    t.not(again[0], pid, 'a new session')
    await notify(store, channel)
    await eventually(() => heard === 2)
  })

  t.test('a server it cannot reach: listen resolves, the failure is logged, and close stops the attempts', async t => {
    const logger = recording()
    const store = createStore({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none', pool: { connectionTimeoutMillis: 1000 }, logger })
    await t.resolves(store.listen('jobs', () => {}))
    await eventually(() => logger.lines.filter(l => l === 'store: the LISTEN connection failed; connecting again').length >= 2)
    await store.close()
    const seen = logger.lines.length
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(logger.lines.length, seen, 'no attempt after close')
  })

  t.test('UNLISTEN once a channel has no listener; closed once nothing listens, and by store.close()', async t => {
    const store = createStore({ databaseUrl: TEST_DATABASE_URL })
    const first = channelName()
    const second = channelName()
    const stopFirst = await store.listen(first, () => {})
    const stopSecond = await store.listen(second, () => {})
    t.equal((await sessions(`LISTEN "${second}"`)).length, 1)
    await stopFirst()
    t.equal((await sessions(`UNLISTEN "${first}"`)).length, 1)
    await stopSecond()
    await eventually(async () => (await sessions(`UNLISTEN "${first}"`)).length === 0)
    t.pass('the connection ends once nothing listens')
    const again = await store.listen(first, () => {})
    t.equal((await sessions(`LISTEN "${first}"`)).length, 1, 'a new one once something listens again')
    await store.close()
    await eventually(async () => (await sessions(`LISTEN "${first}"`)).length === 0)
    await again()
    t.pass('a stop after close does nothing')
  })

  t.test('behind PgBouncer nothing listens: a no-op, no statement sent', async t => {
    const store = createStore({ databaseUrl: TEST_DATABASE_URL, pool: { pgbouncer: true } })
    t.teardown(() => store.close())
    const statements = countStatements()
    t.teardown(() => { statements.restore() })
    const stop = await store.listen('jobs', () => { t.fail('nothing listens') })
    await stop()
    t.strictSame(statements.texts(), [])
  })
})
