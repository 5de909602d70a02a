import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { createStore } from '../../store/index.js'

// A process on the embedded store killed while it writes, after the store made checkpoints of
// its own (embedded-checkpoint.ts) and reused WAL files: reopened, the data directory holds every
// write the process was told had committed, and whole statements only.

const ROWS = 2000

t.test('killed after checkpoints, mid-writes: every acknowledged write is there, and no part of one', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-crash-'))
  t.teardown(() => { rmSync(dataDir, { recursive: true, force: true }) })
  const storeModule = pathToFileURL(join(import.meta.dirname, '..', '..', 'store', 'index.ts')).href
  // Each statement writes about a megabyte of WAL; after each, the rows written so far, the
  // checkpoints seen and the WAL files. A short vacuumMillis: a pass, and so a checkpoint when due, runs between two.
  const child = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', `
    import { createStore } from ${JSON.stringify(storeModule)}
    const store = createStore({ dataDir: ${JSON.stringify(dataDir)}, vacuumMillis: 10 })
    await store.exec('CREATE TABLE c (id integer PRIMARY KEY, pad text NOT NULL)')
    let written = 0
    let checkpoints = 0
    let redo = null
    for (;;) {
      await store.query("INSERT INTO c SELECT g, (SELECT string_agg(md5(g::text || k::text), '') FROM generate_series(1, 16) AS k) FROM generate_series($1::integer + 1, $1::integer + ${ROWS}) AS g", [written])
      written += ${ROWS}
      const { rows: [now] } = await store.query('SELECT redo_lsn::text AS redo, (SELECT count(*)::int FROM pg_ls_waldir()) AS files FROM pg_control_checkpoint()')
      if (redo !== null && now.redo !== redo) checkpoints++
      redo = now.redo
      process.stdout.write(written + ' ' + checkpoints + ' ' + now.files + '\\n')
      await new Promise(resolve => setTimeout(resolve, 1))
    }`], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let acknowledged = 0
  let checkpointed = 0
  let walFiles = 0
  for await (const line of createInterface({ input: child.stdout })) {
    [acknowledged, checkpointed, walFiles] = line.split(' ').map(Number) as [number, number, number]
    // Two checkpoints come within about 70 MB of WAL; three times that ends the wait regardless.
    if (checkpointed >= 2 || acknowledged >= 150 * ROWS) break
  }
  child.kill('SIGKILL')
  if (child.exitCode === null && child.signalCode === null) await new Promise(resolve => child.once('exit', resolve))
  t.ok(checkpointed >= 2, `${acknowledged} rows acknowledged when it was killed, after ${checkpointed} checkpoints`)
  t.ok(walFiles <= 64 / 16 + 3, `${walFiles} WAL files of 16 MB then: reused, not piled up`)

  const store = createStore({ dataDir, vacuumMillis: 0 })
  t.teardown(() => store.close())
  const { rows } = await store.query<{ n: number, top: number }>('SELECT count(*)::int AS n, max(id)::int AS top FROM c')
  const { n, top } = rows[0] as { n: number, top: number }
  t.ok(n >= acknowledged, `every acknowledged row is there (${n} of ${acknowledged})`)
  // One more statement may have committed before the kill, its answer not yet told.
  t.ok(n <= acknowledged + ROWS, 'and at most the statement that was running')
  t.equal(n % ROWS, 0, 'whole statements only')
  t.equal(top, n, 'with no gap')
})
