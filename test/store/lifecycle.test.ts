import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { createStore, migrate, Unavailable, type Store, type StoreLogger, type StoreOptions } from '../../store/index.js'
import { databases, TEST_DATABASE_URL, type TestDatabase } from '../support/databases.js'

interface Latch { wait: Promise<void>, open: () => void }
function latch (): Latch {
  let open = (): void => {}
  const wait = new Promise<void>((resolve) => { open = resolve })
  return { wait, open }
}

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/** A local port nothing listens on: bound once, then released. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => { resolve() }))
  return port
}

t.test('createStore refuses invalid options, naming the option and the value', async (t) => {
  const cases: Array<[StoreOptions, RegExp]> = [
    [{ databaseUrl: 'mysql://root:hunter2@db/app' }, /databaseUrl must be a postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/root:\*\*\*@db\/app"/],
    [{ databaseUrl: 42 as never }, /databaseUrl .* got 42/],
    [{ databaseUrl: '' }, /databaseUrl .* got ""/],
    [{ dataDir: '' }, /dataDir must be a directory path or 'memory', got ""/],
    [{ dataDir: 7 as never }, /dataDir .* got 7/],
    [{ searchPath: 'a b' }, /searchPath must be a plain identifier .* got "a b"/],
    [{ searchPath: 'x;DROP' }, /searchPath .* got "x;DROP"/],
    [{ searchPath: '1abc' }, /searchPath/],
    [{ searchPath: 'a'.repeat(64) }, /searchPath/],
    [{ dataDir: 'memory', sharedBuffers: '16' }, /sharedBuffers must be a size such as '16MB' .* got "16"/],
    [{ dataDir: 'memory', sharedBuffers: '16MB; DROP' }, /sharedBuffers .* got "16MB; DROP"/],
    [{ dataDir: 'memory', sharedBuffers: 16 as never }, /sharedBuffers .* got 16/],
    [{ dataDir: 'memory', statisticsTarget: 0 }, /statisticsTarget must be an integer from 1 to 10000, got 0/],
    [{ dataDir: 'memory', statisticsTarget: 10001 }, /statisticsTarget .* got 10001/],
    [{ dataDir: 'memory', statisticsTarget: 2.5 }, /statisticsTarget .* got 2.5/],
    [{ dataDir: 'memory', statisticsTarget: '10' as never }, /statisticsTarget .* got "10"/],
    [{ databaseUrl: 'postgres://db/app', pool: { max: 0 } }, /pool.max must be a positive integer, got 0/],
    [{ databaseUrl: 'postgres://db/app', pool: { max: 2.5 } }, /pool.max .* got 2.5/],
    [{ databaseUrl: 'postgres://db/app', pool: { connectionTimeoutMillis: -1 } }, /pool.connectionTimeoutMillis .* got -1/],
    [{ databaseUrl: 'postgres://db/app', pool: { idleTimeoutMillis: 'soon' as never } }, /pool.idleTimeoutMillis .* got soon/],
    [{ databaseUrl: 'postgres://db/app', pool: { preparedStatements: -1 } }, /pool.preparedStatements must be a non-negative integer, got -1/],
    [{ databaseUrl: 'postgres://db/app', pool: { preparedStatements: 1.5 } }, /pool.preparedStatements .* got 1.5/],
    [{ databaseUrl: 'postgres://db/app', pool: { preparedStatements: '10' as never } }, /pool.preparedStatements .* got 10/],
    // Timers' delays: Node takes a longer one as 1 ms, and PostgreSQL refuses a longer statement_timeout.
    [{ databaseUrl: 'postgres://db/app', pool: { connectionTimeoutMillis: 2147483648 } }, /^createStore: pool\.connectionTimeoutMillis must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ databaseUrl: 'postgres://db/app', pool: { idleTimeoutMillis: 2147483648 } }, /^createStore: pool\.idleTimeoutMillis must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ databaseUrl: 'postgres://db/app', pool: { statementTimeoutMillis: 2147483648 } }, /^createStore: pool\.statementTimeoutMillis must be 0 \(no limit\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ dataDir: 'memory', vacuumMillis: 2147483648 }, /^createStore: vacuumMillis must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/]
  ]
  for (const [opts, message] of cases) {
    t.throws(() => createStore(opts), { name: 'TypeError', message }, JSON.stringify(opts))
  }
  t.throws(() => createStore({ databaseUrl: 'mysql://root:hunter2@db/app' }), { message: /^(?!.*hunter2)/ }, 'the password is never shown')
})

// wal_init_zero: with it on, PostgreSQL writes each new 16 MB WAL segment full of zeros, and
// PGlite, in this thread, held every request meanwhile (docs/operations.md, "What it serializes").
t.test('embedded storage runs with its buffer cache as set (16MB by default), in UTC, and writes no zeros ahead of its WAL', async (t) => {
  for (const [opts, wanted] of [[{}, '16MB'], [{ sharedBuffers: '8MB' }, '8MB']] as const) {
    const store = createStore({ dataDir: 'memory', ...opts })
    t.teardown(() => store.close())
    const { rows } = await store.query<{ sb: string, tz: string, zero: string }>("SELECT current_setting('shared_buffers') AS sb, current_setting('TimeZone') AS tz, current_setting('wal_init_zero') AS zero")
    t.strictSame(rows, [{ sb: wanted, tz: 'UTC', zero: 'off' }], JSON.stringify(opts))
  }
})

t.test('an unreachable server is Unavailable, for every operation', async (t) => {
  const port = await closedPort()
  const store = createStore({ databaseUrl: `postgres://nobody@127.0.0.1:${port}/none`, pool: { connectionTimeoutMillis: 2000 } })
  t.teardown(() => store.close())
  t.equal(store.kind, 'pg')
  const err = await store.query('SELECT 1').catch((e: unknown) => e)
  t.ok(err instanceof Unavailable)
  t.match(err, { code: 'STORE_UNAVAILABLE', retryable: true, message: `Nothing accepts connections at 127.0.0.1:${port}: check that the PostgreSQL server is running, and the host and port in DATABASE_URL.` })
  t.match((err as Unavailable).cause, { code: 'ECONNREFUSED' }, 'the socket error is kept as cause')
  await t.rejects(store.ready(), Unavailable)
  await t.rejects(store.exec('SELECT 1'), Unavailable)
  let called = false
  await t.rejects(store.transaction(async () => { called = true }), Unavailable)
  t.notOk(called, 'the function never runs without a connection')
  await t.resolves(store.close())
})

t.test('PGlite that cannot start is Unavailable', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'PG_VERSION'), 'not a data directory\n')
  const store = createStore({ dataDir: dir })
  const err = await store.ready().catch((e: unknown) => e)
  t.ok(err instanceof Unavailable)
  t.equal((err as Unavailable).message, 'The embedded database failed to start.')
  t.ok((err as Unavailable).cause instanceof Error)
  await t.rejects(store.query('SELECT 1'), Unavailable)
  await t.rejects(store.transaction(async () => 1), Unavailable)
  await t.resolves(store.close(), 'closing a store that never started')
})

t.test('a dataDir that cannot be a directory fails at once', async (t) => {
  const file = join(tempDir(t), 'a-file')
  writeFileSync(file, '')
  t.throws(() => createStore({ dataDir: join(file, 'sub') }), { code: 'ENOTDIR' })
})

t.test('PGlite on disk: ./data by default, search_path, close drains, data persists across reopen', async (t) => {
  const dir = tempDir(t)
  t.chdir(dir)
  const migrations = [{ id: '1', sql: 'CREATE TABLE disk_items (id int PRIMARY KEY, name text)' }]
  const first = createStore({ searchPath: 'app' })
  await first.ready()
  t.ok(existsSync(join(dir, 'data', 'PG_VERSION')), 'created ./data under the working directory')
  await first.exec('CREATE SCHEMA app')
  await migrate(first, migrations)
  await first.query('INSERT INTO disk_items VALUES ($1, $2)', [1, 'kept'])
  t.strictSame((await first.query("SELECT current_schema() AS s, to_regclass('app.disk_items') IS NOT NULL AS there")).rows, [{ s: 'app', there: true }])
  await closeDrains(t, first, async (s) => { await s.query('INSERT INTO disk_items VALUES ($1, $2)', [2, 'drained']) })

  const second = createStore({ dataDir: join(dir, 'data'), searchPath: 'app' })
  t.teardown(() => second.close())
  t.strictSame(await migrate(second, migrations), [], 'already migrated')
  t.strictSame((await second.query('SELECT id, name FROM disk_items ORDER BY id')).rows, [{ id: 1, name: 'kept' }, { id: 2, name: 'drained' }, { id: 3, name: 'queued' }])
})

/**
 * Holds a transaction open, queues a statement behind it, then closes: close() must wait
 * for both, refuse anything new, and resolve once they are done.
 */
async function closeDrains (t: Test, store: Store, write: (s: Pick<Store, 'query'>) => Promise<void>): Promise<void> {
  const inside = latch()
  const release = latch()
  const tx = store.transaction(async (tx) => {
    await write(tx)
    inside.open()
    await release.wait
    return 'committed'
  })
  await inside.wait
  // Issued before close(): in flight, so close() waits for it too (on PGlite it waits for the transaction).
  const queued = store.query("INSERT INTO disk_items VALUES (3, 'queued')").catch((e: unknown) => e)
  let closed = false
  const closing = store.close().then(() => { closed = true })
  t.equal(store.close(), store.close(), 'close() is idempotent')
  const refused = await store.query('SELECT 1').catch((e: unknown) => e)
  t.ok(refused instanceof Unavailable, 'new work is refused once closing')
  t.equal((refused as Error).message, 'The store is closed.')
  await t.rejects(store.transaction(async () => 1), { message: 'The store is closed.' })
  await t.rejects(store.ready(), Unavailable)
  await sleep(50)
  t.notOk(closed, 'close() waits for the open transaction')
  release.open()
  t.equal(await tx, 'committed')
  t.match(await queued, { rowCount: 1 }, 'the queued statement ran')
  await closing
  t.ok(closed)
}

for (const db of databases) {
  t.test(`${db.label}: close drains`, { skip: db.skip }, async (t) => {
    const store = await db.create(t)
    await store.exec('CREATE TABLE disk_items (id int PRIMARY KEY, name text)')
    const sibling = db.sibling === undefined ? undefined : await db.sibling(t, store)
    await closeDrains(t, store, async (s) => { await s.query("INSERT INTO disk_items VALUES (2, 'drained')") })
    if (sibling !== undefined) {
      t.strictSame((await sibling.query('SELECT id FROM disk_items ORDER BY id')).rows, [{ id: 2 }, { id: 3 }], 'both committed before the pool ended')
    }
  })
}

const server = databases.find((d): d is TestDatabase & { kind: 'pg' } => d.kind === 'pg') as TestDatabase

t.test('server: connections that fail', { skip: server.skip }, async (t) => {
  t.test('a pool with no free connection fails with Unavailable after its timeout', async (t) => {
    // Opening the first connection may itself take over 100 ms on a loaded machine: the store is
    // made again until it opens one, which the transaction below then takes from the pool.
    let store: Store | undefined
    for (let tries = 1; store === undefined; tries++) {
      store = await server.create(t, { pool: { max: 1, connectionTimeoutMillis: 100 } }).catch((err: unknown) => {
        if (!(err instanceof Unavailable) || tries === 20) throw err
        return undefined
      })
    }
    const release = latch()
    const inside = latch()
    const held = store.transaction(async (tx) => { await tx.query('SELECT 1'); inside.open(); await release.wait })
    await inside.wait
    const err = await store.query('SELECT 1').catch((e: unknown) => e)
    t.ok(err instanceof Unavailable)
    release.open()
    await held
    t.strictSame((await store.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'usable again')
  })

  t.test('a connection terminated inside a transaction, between statements, is Unavailable; the process survives', async (t) => {
    const store = await server.create(t)
    const err = await store.transaction(async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      await store.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
      await sleep(100) // the checked-out client hears of it while idle: no listener would crash the process
      await tx.query('SELECT 1')
    }).catch((e: unknown) => e)
    t.ok(err instanceof Unavailable, String(err))
    t.strictSame((await store.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the broken connection was dropped, a new one serves')
  })

  t.test('a connection terminated during a statement is Unavailable (57P01)', async (t) => {
    const store = await server.create(t)
    const err = await store.transaction(async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      const slow = tx.query('SELECT pg_sleep(5)').catch((e: unknown) => e)
      // Terminated once the server runs the statement, not after a guess at how long that takes.
      const killer = (async () => {
        for (let i = 0; i < 500; i++) {
          const { rows: active } = await store.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = \'active\'', [rows[0]?.pid])
          if (active.length > 0) break
          await sleep(10)
        }
        await store.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
      })()
      await killer
      throw await slow
    }).catch((e: unknown) => e)
    t.ok(err instanceof Unavailable)
    t.equal((err as Unavailable).sqlState, '57P01')
    t.strictSame((await store.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  })

  // The store's own wait for an answer is the statement timeout and a little more: capped at the
  // longest a timer waits, or setTimeout would take it as 1 ms and fail every statement at once.
  t.test('timeouts of 2147483647 ms, the longest a timer waits, are taken and work', async (t) => {
    const longest = 2147483647
    const store = createStore({ databaseUrl: TEST_DATABASE_URL, pool: { max: 1, statementTimeoutMillis: longest, connectionTimeoutMillis: longest, idleTimeoutMillis: longest } })
    t.teardown(() => store.close())
    const { rows } = await store.query<{ timeout: string }>("SELECT current_setting('statement_timeout') AS timeout, pg_sleep(0.05)")
    t.strictSame(rows.map((r) => r.timeout), ['2147483647ms'], 'the server took it')
    const tx = await store.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT 1 AS n, pg_sleep(0.05)')).rows)
    t.strictSame(tx.map((r) => r.n), [1])
  })

  t.test('an idle pooled connection the server drops is logged and replaced', async (t) => {
    const errors: object[] = []
    const logger: StoreLogger = { info () {}, warn () {}, error (obj) { errors.push(obj) } }
    const store = createStore({ databaseUrl: TEST_DATABASE_URL, pool: { max: 1 }, logger })
    t.teardown(() => store.close())
    const { rows } = await store.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await admin.connect()
    t.teardown(() => admin.end())
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
    // A generous bound: a loaded machine takes longer to hear of it, never less.
    for (let i = 0; i < 500 && errors.length === 0; i++) await sleep(20)
    t.equal(errors.length, 1, 'logged once')
    t.ok((errors[0] as { err?: unknown }).err instanceof Error)
    const again = await store.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    t.not(again.rows[0]?.pid, rows[0]?.pid, 'a new connection')
  })
})
