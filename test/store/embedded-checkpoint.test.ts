import t from 'tap'
import { createStore, type Store } from '../../store/index.js'
import { checkpointIfDue } from '../../store/embedded-checkpoint.js'

// PGlite runs no checkpointer, and its one backend makes no checkpoint of its own while it
// runs: the embedded store makes them, as the server's rule would, so that WAL files are reused
// rather than piled up (in memory, or in DATA_DIR) and a start after a crash replays little.

async function memoryStore (t: { teardown: (fn: () => unknown) => void }, vacuumMillis = 0): Promise<Store> {
  const store = createStore({ dataDir: 'memory', vacuumMillis })
  t.teardown(() => store.close())
  await store.ready()
  return store
}

interface Wal { sinceRedo: number, threshold: number, redo: string, files: number }

async function wal (store: Store): Promise<Wal> {
  const { rows } = await store.query<Wal>(`SELECT (pg_current_wal_insert_lsn() - redo_lsn)::float8 AS "sinceRedo",
      pg_size_bytes(current_setting('max_wal_size')) / (1 + current_setting('checkpoint_completion_target')::float8) AS threshold,
      redo_lsn::text AS redo, (SELECT count(*)::int FROM pg_ls_waldir()) AS files
    FROM pg_control_checkpoint()`)
  return rows[0] as Wal
}

/** Writes WAL (about 2 MB a statement) until `bytes` more have been written since the last checkpoint. */
async function writeWal (store: Store, bytes: number): Promise<void> {
  await store.exec('CREATE TABLE IF NOT EXISTS w (id integer, pad text)')
  const until = (await wal(store)).sinceRedo + bytes
  while ((await wal(store)).sinceRedo < until) {
    await store.query('INSERT INTO w SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 5000) AS g')
    // Keeps the table itself small: only its WAL is wanted.
    await store.exec('TRUNCATE w')
  }
}

t.test('a checkpoint is made once the WAL since the last one passes the server\'s threshold, and not before', async t => {
  const store = await memoryStore(t)
  const start = await wal(store)
  t.equal(start.threshold, 64 * 1024 * 1024 / 1.9, 'max_wal_size 64MB, checkpoint_completion_target 0.9: the store\'s settings')
  t.equal(await checkpointIfDue(store), null, 'a fresh cluster: none due')
  await writeWal(store, start.threshold - start.sinceRedo - 4 * 1024 * 1024)
  t.ok((await wal(store)).sinceRedo < start.threshold)
  t.equal(await checkpointIfDue(store), null, 'under the threshold: none')
  t.equal((await wal(store)).redo, start.redo)
  await writeWal(store, 4 * 1024 * 1024)
  let now = 0
  const millis = await checkpointIfDue(store, () => (now += 7))
  t.equal(millis, 7, 'made, and timed by the clock given')
  const after = await wal(store)
  t.not(after.redo, start.redo, 'the redo point moved')
  t.ok(after.sinceRedo < 64 * 1024, `the WAL since it is the checkpoint's own record (${after.sinceRedo} bytes)`)
  t.equal(await checkpointIfDue(store), null, 'and none is due right after')
})

t.test('with checkpoints between, WAL files are reused rather than piled up', async t => {
  const store = await memoryStore(t)
  const { threshold } = await wal(store)
  // Six times the threshold: about 200 MB, thirteen files of 16 MB were none reused.
  for (let i = 0; i < 6; i++) {
    await writeWal(store, threshold)
    t.type(await checkpointIfDue(store), 'number', `checkpoint ${i + 1}`)
  }
  const { files } = await wal(store)
  // What the server keeps: the files between the redo point and max_wal_size past it, for reuse.
  t.ok(files <= 64 / 16 + 2, `${files} WAL files of 16 MB`)
})

t.test('the store\'s own passes make them, every vacuumMillis', async t => {
  const store = await memoryStore(t, 20)
  const before = await wal(store)
  await writeWal(store, before.threshold)
  // Waits for a pass, however late a loaded machine runs it (a bound only against a hang).
  for (let n = 0; n < 2000 && (await wal(store)).redo === before.redo; n++) await new Promise(resolve => setTimeout(resolve, 10))
  t.not((await wal(store)).redo, before.redo, 'a checkpoint was made')
})
