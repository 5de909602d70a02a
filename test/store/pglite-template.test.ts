import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { createPgliteDriver } from '../../store/pglite.js'
import { readTemplate, templateFile } from '../../store/pglite-template.js'
import type { Driver } from '../../store/driver.js'

// In-memory PGlite starts from a cached snapshot of an empty cluster; the cache must never
// change what a store holds, and a bad cache must never stop a store from starting.

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-template-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

async function open (t: Test, template: boolean | string): Promise<Driver> {
  const driver = createPgliteDriver({ dataDir: 'memory', template })
  t.teardown(() => driver.close())
  await driver.query('SELECT 1')
  return driver
}

const tables = async (d: Driver): Promise<string[]> =>
  (await d.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map(r => r.name)

t.test('the snapshot is named after the PGlite build and the user, in the folder given', async (t) => {
  const file = templateFile('/some/dir')
  t.match(basename(file), /^svc-conventions-pglite-\d+\.\d+\.\d+-[0-9a-z]+-\w+\.tar$/)
  t.equal(file.startsWith('/some/dir/'), true)
  t.equal(templateFile('/some/dir'), file, 'stable')
})

t.test('the snapshot read back is a Blob of the file\'s bytes, each read a copy of its own', async (t) => {
  const file = join(tempDir(t), 'snapshot.tar')
  const bytes = Buffer.from('a snapshot: ünïcode and bytes \u0000\u00ff')
  writeFileSync(file, bytes)
  const blob = readTemplate(file)
  if (blob === undefined) throw new Error('readTemplate read nothing')
  t.type(blob, Blob)
  t.equal(blob.size, bytes.length)
  const first = new Uint8Array(await blob.arrayBuffer())
  t.same(Buffer.from(first), bytes)
  first.fill(0)
  t.same(Buffer.from(await blob.arrayBuffer()), bytes, 'changing what one read answered changes no other')
  const viaBytes = await blob.bytes()
  viaBytes.fill(0)
  t.same(Buffer.from(await blob.bytes()), bytes)
  t.equal(await blob.text(), bytes.toString('utf8'))
  t.same(Buffer.from(await blob.slice(2, 10).arrayBuffer()), bytes.subarray(2, 10))
  t.equal(blob.slice(0, 4, 'application/x-tar').type, 'application/x-tar')
  const chunks: Uint8Array[] = []
  for await (const chunk of blob.stream()) chunks.push(chunk)
  t.same(Buffer.concat(chunks), bytes)
  t.equal(readTemplate(join(tempDir(t), 'missing.tar')), undefined, 'none to read: undefined')
})

t.test('a snapshot too large for Buffer\'s pool: the first read has the bytes read at first, a later one reads the file again', async (t) => {
  const file = join(tempDir(t), 'snapshot.tar')
  const bytes = Buffer.alloc(64 * 1024, 'snapshot ')
  writeFileSync(file, bytes)
  const blob = readTemplate(file)
  if (blob === undefined) throw new Error('readTemplate read nothing')
  const later = Buffer.alloc(64 * 1024, 'replaced ')
  writeFileSync(file, later)
  t.equal(await blob.text(), bytes.toString(), 'a text read hands nothing out: the bytes read at first')
  const first = new Uint8Array(await blob.arrayBuffer())
  t.equal(first.byteLength, bytes.length)
  t.same(Buffer.from(first), bytes, 'the bytes read when the snapshot was opened')
  first.fill(0)
  t.same(Buffer.from(await blob.arrayBuffer()), later, 'the next read is the file\'s, not what the first reader changed')
  t.equal(blob.size, bytes.length)
})

t.test('the first store saves a snapshot of the empty cluster; the next starts from it with nothing of the first', async (t) => {
  const dir = tempDir(t)
  const first = await open(t, dir)
  const file = templateFile(dir)
  t.equal(existsSync(file), true, 'snapshot saved by the first start')
  const saved = statSync(file)
  t.ok(saved.size > 1_000_000, 'a whole cluster')
  await first.exec('CREATE TABLE written_after_start (x int)')
  t.same(await tables(first), ['written_after_start'])

  const second = await open(t, dir)
  t.same(await tables(second), [], 'the snapshot predates every write')
  // A snapshot PGlite refused would have been dropped and saved again.
  t.match(statSync(file), { ino: saved.ino, mtimeMs: saved.mtimeMs }, 'the second started from the snapshot as saved')
  t.same((await second.query("SELECT current_setting('TimeZone') AS tz")).rows, [{ tz: 'UTC' }], 'session setup still applied')
  await second.exec('CREATE TABLE own (x int); INSERT INTO own VALUES (1)')
  t.same((await second.query('SELECT x FROM own')).rows, [{ x: 1 }])
  t.same(readdirSync(dir), [basename(file)], 'no partial files left behind')
})

t.test('a snapshot PGlite refuses is dropped and the store starts afresh, saving a good one', async (t) => {
  const dir = tempDir(t)
  const file = templateFile(dir)
  writeFileSync(file, 'not a tar archive of a cluster')
  const driver = await open(t, dir)
  t.same((await driver.query('SELECT 41 + 1 AS n')).rows, [{ n: 42 }], 'the store works')
  t.ok(statSync(file).size > 1_000_000, 'the bad snapshot was replaced by a real one')
})

t.test('an unwritable snapshot folder only costs the cache', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'a-file'), '')
  const missing = await open(t, join(dir, 'a-file', 'folder'))
  t.same((await missing.query('SELECT 2 AS two')).rows, [{ two: 2 }], 'the store works without its cache')
  t.same(readdirSync(dir), ['a-file'], 'nothing written')
})

t.test('by default the snapshot is kept in node_modules/.cache, never in the temp folder', async (t) => {
  const file = templateFile()
  t.match(file, /[/\\]node_modules[/\\]\.cache[/\\]svc-conventions[/\\]svc-conventions-pglite-[^/\\]+\.tar$/)
  // The project's own node_modules, wherever the project is (a clone under /tmp included).
  t.ok(file.startsWith(join(import.meta.dirname, '..', '..', 'node_modules', '.cache')), 'in the project, not the temp folder')
})
