import t from 'tap'
import { createStore, type Store } from '../../store/index.js'
import { scheduleVacuum, vacuumPass } from '../../store/embedded-vacuum.js'
import type { Queryable, StoreLogger } from '../../store/types.js'

// PGlite has no autovacuum: the embedded store vacuums and analyzes its tables itself, deciding
// as autovacuum does (thresholds of the server's own settings), so that what writes replace or
// delete is reused and the planner knows the tables.

async function memoryStore (t: { teardown: (fn: () => unknown) => void }, vacuumMillis = 0): Promise<Store> {
  const store = createStore({ dataDir: 'memory', vacuumMillis })
  t.teardown(() => store.close())
  await store.ready()
  return store
}

async function fill (store: Store, table: string, rows: number): Promise<void> {
  await store.exec(`CREATE TABLE ${table} (id integer PRIMARY KEY, v integer NOT NULL, pad text NOT NULL)`)
  await store.query(`INSERT INTO ${table} SELECT g, 0, repeat('x', 200) FROM generate_series(1, $1::integer) AS g`, [rows])
}

/**
 * The backend publishes its counts at most once a second, when idle; a statement asking for the
 * next idle to publish them makes what was done so far visible to the next statement.
 */
async function published (store: Store): Promise<void> {
  await store.query('SELECT pg_stat_force_next_flush()')
}

async function stats (store: Store, table: string): Promise<{ dead: number, vacuums: number, analyzed: boolean, bytes: number }> {
  await published(store)
  const { rows } = await store.query(`SELECT n_dead_tup::int AS dead, (vacuum_count + autovacuum_count)::int AS vacuums,
    last_analyze IS NOT NULL AS analyzed, pg_relation_size(relid)::int AS bytes FROM pg_stat_user_tables WHERE relname = $1`, [table])
  return rows[0] as { dead: number, vacuums: number, analyzed: boolean, bytes: number }
}

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
/** Waits until `done` holds, however late a loaded machine gets there (a bound only against a hang). */
async function until (done: () => boolean | Promise<boolean>): Promise<void> {
  for (let n = 0; n < 2000 && !(await done()); n++) await sleep(10)
}

t.test('a pass vacuums and analyzes the tables autovacuum would, and no other', async t => {
  const store = await memoryStore(t)
  // Thresholds with the defaults: vacuum past 50 + 0.2 × rows dead (or 1000 + 0.2 × rows
  // inserted since), analyze past 50 + 0.1 × rows changed.
  await fill(store, 'churn', 1000)
  await fill(store, 'quiet', 1000)
  await fill(store, 'hot_reads', 10_000)
  await published(store)
  for (const table of ['churn', 'quiet', 'hot_reads']) await store.exec(`VACUUM (ANALYZE) ${table}`)
  await fill(store, 'grown', 1500)

  await store.query('UPDATE churn SET v = v + 1') // 1,000 dead: past 250
  await store.query('UPDATE quiet SET v = v + 1 WHERE id <= 10') // 10 dead, 10 changed: under both
  await store.query('UPDATE hot_reads SET v = v + 1 WHERE id <= 1100') // 1,100 changed: past 1,050; dead under 2,050
  await published(store)

  const done = await vacuumPass(store, 'public')
  t.strictSame(done.map(({ table, vacuumed, analyzed }) => ({ table, vacuumed, analyzed })), [
    { table: 'public.churn', vacuumed: true, analyzed: true },
    { table: 'public.grown', vacuumed: true, analyzed: true },
    { table: 'public.hot_reads', vacuumed: false, analyzed: true }
  ])
  t.equal((await stats(store, 'churn')).dead, 0, 'the dead rows are gone')
  t.equal((await stats(store, 'grown')).vacuums, 1, 'a table grown by inserts is vacuumed (its pages marked all-visible)')
  t.ok((await stats(store, 'grown')).analyzed, 'and analyzed')
  t.equal((await stats(store, 'quiet')).dead, 10, 'a table under its thresholds is left alone')
  t.strictSame(await vacuumPass(store, 'public'), [], 'a second pass finds nothing to do')
})

t.test("a pass over every schema takes PostgreSQL's catalogs too: their rows need freezing and their dead rows reclaiming as any other's", async t => {
  const store = await memoryStore(t)
  // Each table made and dropped leaves its columns' rows dead in pg_attribute.
  for (let n = 0; n < 100; n++) await store.exec(`CREATE TABLE scratch_${n} (a integer, b text); DROP TABLE scratch_${n}`)
  await published(store)
  const done = await vacuumPass(store)
  t.ok(done.some(d => d.table === 'pg_catalog.pg_attribute' && d.vacuumed), done.map(d => d.table).join(', '))
})

t.test('with passes between, a table rewritten over and over keeps its size', async t => {
  const store = await memoryStore(t)
  // A pass over `public` only: the table of the other schema stands for a store that never vacuums.
  await store.exec('CREATE SCHEMA other')
  await fill(store, 'kept', 2000)
  await fill(store, 'other.unkept', 2000)
  await published(store)
  await vacuumPass(store, 'public')
  const start = (await stats(store, 'kept')).bytes
  for (let round = 0; round < 10; round++) {
    await store.query('UPDATE kept SET v = v + 1')
    await store.query('UPDATE other.unkept SET v = v + 1')
    await published(store)
    await vacuumPass(store, 'public')
  }
  const kept = (await stats(store, 'kept')).bytes
  const unkept = (await stats(store, 'unkept')).bytes
  t.ok(kept <= 3 * start, `vacuumed: ${kept} bytes after ten rewrites, from ${start}`)
  t.ok(unkept >= 8 * start, `never vacuumed: ${unkept} bytes after ten rewrites, from ${start}`)
})

t.test('the store runs passes on its own, every vacuumMillis', async t => {
  const store = await memoryStore(t, 20)
  await fill(store, 'busy', 1000)
  await store.query('UPDATE busy SET v = v + 1')
  await published(store)
  // Waits for the schedule's pass, however late a loaded machine runs it: its vacuum, then its
  // analysis, two statements with requests' turn between them.
  await until(async () => { const s = await stats(store, 'busy'); return s.vacuums > 0 && s.analyzed })
  t.strictSame(await stats(store, 'busy'), { dead: 0, vacuums: 1, analyzed: true, bytes: (await stats(store, 'busy')).bytes })
})

t.test('a pass that fails is logged and the next one tries again; none after stop', async t => {
  let calls = 0
  const failing: Queryable = {
    query: async () => { calls++; throw new Error('the database is gone') },
    exec: async () => {}
  }
  const warned: unknown[] = []
  const log: StoreLogger = { info: () => {}, warn: (obj, msg) => { warned.push([obj, msg]) }, error: () => {} }
  const schedule = scheduleVacuum(failing, { intervalMillis: 1, schema: null, log })
  await until(() => calls >= 3)
  await schedule.stop()
  const after = calls
  t.ok(after >= 3, `tried ${after} times`)
  t.match(warned[0], [{ err: { message: 'the database is gone' } }, 'store: vacuuming the embedded database failed; trying again later'])
  await sleep(30)
  t.equal(calls, after, 'no pass after stop')
})

// A table past both thresholds: requests wait for the vacuum or for the analysis, never for both at once.
t.test('a table to vacuum and analyze gets two statements, with a turn of the event loop before each', async t => {
  const sent: string[] = []
  let now = 0
  const db: Queryable = {
    query: async <R>(sql: string) => {
      sent.push(sql)
      if (!sql.startsWith('WITH')) {
        now += sql.startsWith('VACUUM') ? 300 : 80
        // A request arriving while the statement runs.
        setImmediate(() => { sent.push('request') })
      }
      return { rows: (sql.startsWith('WITH') ? [{ name: 'public.big', vacuum: true, analyze: true }, { name: 'public.small', vacuum: false, analyze: true }] : []) as R[], rowCount: 0 }
    },
    exec: async () => {}
  }
  t.strictSame(await vacuumPass(db, null, () => now), [
    { table: 'public.big', vacuumed: true, analyzed: true, millis: 380 },
    { table: 'public.small', vacuumed: false, analyzed: true, millis: 80 }
  ])
  t.strictSame(sent.slice(1), ['VACUUM public.big', 'request', 'ANALYZE public.big', 'request', 'ANALYZE public.small'])
})

t.test('a long pass is logged with what it did', async t => {
  const infos: unknown[] = []
  const log: StoreLogger = { info: (obj, msg) => { infos.push([obj, msg]) }, warn: () => {}, error: () => {} }
  let now = 0
  const slow: Queryable = {
    // One table to vacuum; its statement takes the clock past the log's threshold.
    query: async <R>(sql: string) => {
      if (sql.startsWith('VACUUM')) now += 150
      return { rows: (sql.startsWith('WITH') ? [{ name: 'public.big', vacuum: true, analyze: false }] : []) as R[], rowCount: 0 }
    },
    exec: async () => {}
  }
  t.strictSame(await vacuumPass(slow, null, () => now), [{ table: 'public.big', vacuumed: true, analyzed: false, millis: 150 }])
  const schedule = scheduleVacuum(slow, { intervalMillis: 1, schema: null, log, clock: () => now })
  await until(() => infos.length > 0)
  await schedule.stop()
  t.match(infos[0], [{ tables: [{ table: 'public.big', vacuumed: true }] }, 'store: vacuumed the embedded database'])
})

t.test('a pass whose checkpoint (embedded-checkpoint.ts) was long is logged too', async t => {
  const infos: unknown[] = []
  const log: StoreLogger = { info: (obj, msg) => { infos.push([obj, msg]) }, warn: () => {}, error: () => {} }
  let now = 0
  const db: Queryable = {
    // No table to vacuum; a checkpoint due, whose statement takes the clock past the log's threshold.
    query: async <R>(sql: string) => {
      if (sql === 'CHECKPOINT') now += 120
      return { rows: (sql.includes('pg_control_checkpoint()') ? [{ due: true }] : []) as R[], rowCount: 0 }
    },
    exec: async () => {}
  }
  const schedule = scheduleVacuum(db, { intervalMillis: 1, schema: null, log, clock: () => now })
  await until(() => infos.length > 0)
  await schedule.stop()
  t.match(infos[0], [{ tables: [], checkpointMillis: 120, millis: 120 }, 'store: vacuumed the embedded database'])
})

t.test('stop waits for the pass under way (a closing store stops its schedule first)', async t => {
  let release = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  let vacuuming = false
  const db: Queryable = {
    query: async <R>(sql: string) => {
      if (sql.startsWith('VACUUM')) {
        vacuuming = true
        await held
      }
      return { rows: (sql.startsWith('WITH') ? [{ name: 'public.big', vacuum: true, analyze: false }] : []) as R[], rowCount: 0 }
    },
    exec: async () => {}
  }
  const schedule = scheduleVacuum(db, { intervalMillis: 1, schema: null, log: { info: () => {}, warn: () => {}, error: () => {} } })
  await until(() => vacuuming)
  let stopped = false
  const stopping = schedule.stop().then(() => { stopped = true })
  await sleep(20)
  t.notOk(stopped, 'stop waits while the VACUUM runs')
  release()
  await stopping
  t.ok(stopped, 'and resolves once it ended')
})

t.test('vacuumMillis is checked', async t => {
  for (const bad of [-1, 1.5, Number.NaN, 2147483648]) {
    t.throws(() => createStore({ dataDir: 'memory', vacuumMillis: bad }), { name: 'TypeError', message: /^createStore: vacuumMillis must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 / }, String(bad))
  }
  // The longest a timer waits: the vacuum's setTimeout takes a longer delay as 1 ms.
  const longest = createStore({ dataDir: 'memory', vacuumMillis: 2147483647 })
  await longest.ready()
  await longest.close()
})

// PGlite analyzes in the service's thread, and requests wait for it: the store keeps the sample
// small (300 rows per unit of the target), and the statistics with it.
t.test('an analysis keeps the statistics of statisticsTarget: 10 by default', async t => {
  for (const [opts, target] of [[{}, 10], [{ statisticsTarget: 40 }, 40]] as const) {
    const store = createStore({ dataDir: 'memory', vacuumMillis: 0, ...opts })
    t.teardown(() => store.close())
    // 1,000 values, each on 20 rows: none more common than another, so all go to the histogram.
    await store.exec('CREATE TABLE spread (id integer PRIMARY KEY, v integer NOT NULL)')
    await store.query('INSERT INTO spread SELECT g, g % 1000 FROM generate_series(1, 20000) AS g')
    await published(store)
    t.strictSame((await vacuumPass(store, 'public')).map(d => [d.table, d.analyzed]), [['public.spread', true]])
    const { rows } = await store.query<{ bounds: number }>("SELECT array_length(histogram_bounds, 1) AS bounds FROM pg_stats WHERE tablename = 'spread' AND attname = 'v'")
    t.strictSame(rows, [{ bounds: target + 1 }], `${target} buckets, ${JSON.stringify(opts)}`)
  }
})
