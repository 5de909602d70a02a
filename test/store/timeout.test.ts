import t from 'tap'
import { createStore, migrate, StatementTimeout, Unavailable, type Store } from '../../store/index.js'
import { havePostgres, startPostgres } from '../../scripts/postgres.js'

// A PostgreSQL server that stops answering (frozen with SIGSTOP: connections stay open, nothing
// comes back) must turn into errors within the statement timeout, not requests that hang, and
// must not hold up closing the store. Its own throwaway server, since freezing stops everything.

const SKIP = havePostgres() ? false : 'needs the PostgreSQL server binaries'

async function elapsed<T> (work: Promise<T>): Promise<{ ms: number, result: PromiseSettledResult<T> }> {
  const started = Date.now()
  const [result] = await Promise.allSettled([work])
  return { ms: Date.now() - started, result: result as PromiseSettledResult<T> }
}

/**
 * Opens `n` connections in `store`'s pool: `n` overlapping transactions. Untimed, for the
 * statement timeout is not what a warm-up tests; tried again should a loaded machine make a
 * connection miss the store's short connection timeout.
 */
async function warm (store: Store, n: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await Promise.all(Array.from({ length: n }, async () => await store.transaction(async tx => await tx.query('SELECT pg_sleep(0.05)'), { statementTimeout: false })))
      return
    } catch (err) {
      if (!(err instanceof Unavailable) || attempt >= 10) throw err
    }
  }
}

t.test('statement timeout against a server that stops answering', { skip: SKIP }, async t => {
  const server = await startPostgres()
  t.teardown(() => { server.stop() })
  const store = createStore({ databaseUrl: server.url, pool: { max: 3, statementTimeoutMillis: 300, connectionTimeoutMillis: 800 } })
  // Setup and inspection go through a store of default timeouts: only the statements under
  // test meet the short ones, which a loaded machine could make any statement miss.
  const plain = createStore({ databaseUrl: server.url })
  t.teardown(() => plain.close())
  // Warm the pool: these connections are open when the server freezes.
  await warm(store, 3)

  t.test('a slow statement is cancelled by the server at the timeout (Unavailable); the next one gets a sound connection', async t => {
    const { ms, result } = await elapsed(store.query('SELECT pg_sleep(5)'))
    t.equal(result.status, 'rejected')
    const err = (result as PromiseRejectedResult).reason
    t.type(err, StatementTimeout)
    t.type(err, Unavailable)
    t.equal(err.sqlState, '57014', 'cancelled by PostgreSQL itself (its statement_timeout), not only abandoned by the store')
    t.match(err.message, 'ran longer than the statement timeout')
    t.ok(ms >= 290, `failed after ${ms} ms`)
    const running = await plain.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)' AND state = 'active'")
    t.strictSame(running.rows, [{ n: 0 }], 'nothing keeps running on the server')
    // The pool's next use, untimed: its answer, not the time it takes, is the point here.
    const { rows } = await store.transaction(async tx => await tx.query<{ n: number }>('SELECT 1 AS n'), { statementTimeout: false })
    t.strictSame(rows, [{ n: 1 }], 'the late answer of the dropped connection is read by no one')
  })

  t.test('a transaction without the timeout (migrations) waits as long as it takes', async t => {
    const { result } = await elapsed(store.transaction(async tx => await tx.query('SELECT pg_sleep(0.6)'), { statementTimeout: false }))
    t.equal(result.status, 'fulfilled')
    const applied = await migrate(store, [{ id: 'slow-one', sql: 'SELECT pg_sleep(0.6); CREATE TABLE slow_one (id int)' }])
    t.strictSame(applied, ['slow-one'])
  })

  t.test('a timed transaction fails with Unavailable and leaves nothing', async t => {
    await plain.query('CREATE TABLE IF NOT EXISTS kept (id int)')
    const { result } = await elapsed(store.transaction(async tx => {
      await tx.query('INSERT INTO kept VALUES (1)')
      await tx.query('SELECT pg_sleep(5)')
    }))
    t.type((result as PromiseRejectedResult).reason, Unavailable)
    t.equal((result as PromiseRejectedResult).reason.sqlState, '57014', 'cancelled by the server inside the transaction too')
    const { rows } = await plain.query('SELECT * FROM kept')
    t.strictSame(rows, [])
  })

  t.test('a frozen server: statements fail in time, and close() does not wait for it', async t => {
    await warm(store, 3)
    const other = createStore({ databaseUrl: server.url, pool: { max: 2, statementTimeoutMillis: 300, connectionTimeoutMillis: 800 } })
    await warm(other, 2)
    server.freeze()
    t.teardown(() => { server.thaw() })
    const answers = await Promise.all([1, 2, 3, 4, 5].map(async () => await elapsed(store.query('SELECT 1'))))
    for (const { ms, result } of answers) {
      t.equal(result.status, 'rejected')
      t.type((result as PromiseRejectedResult).reason, Unavailable)
      // Within the statement timeout on an open connection, or the connection timeout for a new
      // one; a frozen server would otherwise hold them for ever, so a wide bound proves it.
      t.ok(ms < 20_000, `answered after ${ms} ms`)
    }
    await store.query('SELECT 1').catch(() => {})
    const closing = await elapsed(store.close())
    t.equal(closing.result.status, 'fulfilled')
    t.ok(closing.ms < 20_000, `closed after ${closing.ms} ms`)
    // Idle connections to the frozen server: their goodbye is not waited for.
    const idleClosing = await elapsed(other.close())
    t.equal(idleClosing.result.status, 'fulfilled')
    t.ok(idleClosing.ms < 20_000, `closed after ${idleClosing.ms} ms`)
  })

  t.test('invalid timeouts are refused, naming the option', async t => {
    t.throws(() => createStore({ databaseUrl: server.url, pool: { statementTimeoutMillis: -1 } }), /pool.statementTimeoutMillis must be 0 \(no limit\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got -1/)
    await t.rejects(store.transaction(async () => {}, { statementTimeout: 'no' as never }), /statementTimeout must be a boolean, got no/)
  })
})
