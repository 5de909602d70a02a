import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import fc from 'fast-check'
import { createTar, type TarFileInput } from 'nanotar'
import { createPgliteDriver } from '../../store/pglite.js'
import { readTemplate, Snapshot, templateFile } from '../../store/pglite-template.js'
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

/** Every folder and file under `dir`, as `name/` and `name: contents` lines, in no set order. */
function tree (dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const name = under === '' ? entry.name : `${under}/${entry.name}`
    return entry.isDirectory() ? [`${name}/`, ...tree(dir, name)] : [`${name}: ${readFileSync(join(dir, name), 'latin1')}`]
  })
}

/** The snapshot read back from a tar of `items`, written into `dir`. */
function snapshotIn (dir: string, items: TarFileInput[]): Snapshot {
  const file = join(dir, `${randomUUID()}.tar`)
  writeFileSync(file, createTar(items))
  const snapshot = readTemplate(file)
  if (snapshot === undefined) throw new Error('readTemplate read nothing')
  return snapshot
}

t.test('a snapshot is a cluster\'s files: no file, not a tar, or a tar without PG_VERSION is none, and is deleted', async (t) => {
  const dir = tempDir(t)
  const cases: Array<[string, string | Uint8Array | undefined]> = [
    ['no file', undefined],
    ['an empty file', ''],
    ['text', 'not a tar archive of a cluster'],
    ['a tar of other files', createTar([{ name: 'base/' }, { name: 'base/1', data: 'x' }])],
    ['PG_VERSION as a folder', createTar([{ name: 'PG_VERSION/' }])]
  ]
  for (const [name, contents] of cases) {
    const file = join(dir, `${name}.tar`)
    if (contents !== undefined) writeFileSync(file, contents)
    t.equal(readTemplate(file), undefined, name)
    t.equal(existsSync(file), false, `${name}: no file left`)
  }
  t.type(snapshotIn(dir, [{ name: 'PG_VERSION', data: '17\n' }]), Snapshot, 'PG_VERSION alone is one')
})

t.test('writeTo writes the snapshot\'s folders and files into a data directory, any tree', async (t) => {
  const segment = fc.stringMatching(/^[a-z0-9_]{1,8}$/).filter((name) => name !== 'PG_VERSION')
  const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'))
  // Distinct paths; one with another beneath it is that one's folder.
  const files = fc.uniqueArray(fc.record({ path, data: fc.uint8Array({ maxLength: 1500 }) }), { selector: (f) => f.path, maxLength: 12 })
    .map((files) => files.filter((f) => !files.some((g) => g.path.startsWith(`${f.path}/`))))
  const base = tempDir(t)
  await fc.assert(fc.asyncProperty(files, fc.boolean(), async (files, listFolders) => {
    const folders = [...new Set(files.flatMap((f) => f.path.split('/').slice(0, -1).map((_, i, all) => all.slice(0, i + 1).join('/'))))]
    // The archive may list each folder before its files, as PGlite's do, or leave them out.
    const items: TarFileInput[] = [
      ...(listFolders ? folders.map((name) => ({ name: `${name}/` })) : []),
      ...files.map((f) => ({ name: f.path, data: f.data })),
      { name: 'PG_VERSION', data: '17\n' }
    ]
    const dir = mkdtempSync(join(base, 'cluster-'))
    snapshotIn(base, items).writeTo(dir)
    const expected = [
      ...folders.map((name) => `${name}/`),
      ...files.map((f) => `${f.path}: ${Buffer.from(f.data).toString('latin1')}`),
      'PG_VERSION: 17\n'
    ]
    t.strictSame(tree(dir).sort(), expected.sort())
  }), { numRuns: 40 })
})

t.test('a write cut short leaves no PG_VERSION, so the folder is never taken for a cluster', async (t) => {
  // PG_VERSION comes first in the archive, and is written last all the same.
  const snapshot = snapshotIn(tempDir(t), [{ name: 'PG_VERSION', data: '17\n' }, { name: 'base/' }, { name: 'base/1', data: 'a' }, { name: 'global/pg_control', data: 'b' }])
  const dir = tempDir(t)
  mkdirSync(join(dir, 'global', 'pg_control'), { recursive: true })
  t.throws(() => { snapshot.writeTo(dir) })
  t.equal(existsSync(join(dir, 'PG_VERSION')), false)
  t.equal(readFileSync(join(dir, 'base', '1'), 'utf8'), 'a', 'the files before the failure were written')
})

t.test('one snapshot read starts one cluster: its files are handed over', async (t) => {
  const inMemory = snapshotIn(tempDir(t), [{ name: 'PG_VERSION', data: '17\n' }])
  inMemory.memoryFs()
  t.throws(() => inMemory.memoryFs(), /read it again/)
  t.throws(() => { inMemory.writeTo(tempDir(t)) }, /read it again/)
  const onDisk = snapshotIn(tempDir(t), [{ name: 'PG_VERSION', data: '17\n' }])
  onDisk.writeTo(tempDir(t))
  t.throws(() => onDisk.memoryFs(), /read it again/)
})

t.test('the first store saves a snapshot of the empty cluster; the next starts from it with nothing of the first', async (t) => {
  const dir = tempDir(t)
  const first = await open(t, dir)
  const file = templateFile(dir)
  t.equal(existsSync(file), true, 'snapshot saved by the first start')
  const saved = statSync(file)
  t.ok(saved.size > 1_000_000, 'a whole cluster')
  await first.exec('CREATE TABLE written_after_start (x int)')
  t.strictSame(await tables(first), ['written_after_start'])

  const second = await open(t, dir)
  t.strictSame(await tables(second), [], 'the snapshot predates every write')
  // A snapshot PGlite refused would have been dropped and saved again.
  t.match(statSync(file), { ino: saved.ino, mtimeMs: saved.mtimeMs }, 'the second started from the snapshot as saved')
  t.strictSame((await second.query("SELECT current_setting('TimeZone') AS tz")).rows, [{ tz: 'UTC' }], 'session setup still applied')
  await second.exec('CREATE TABLE own (x int); INSERT INTO own VALUES (1)')
  t.strictSame((await second.query('SELECT x FROM own')).rows, [{ x: 1 }])
  t.strictSame(readdirSync(dir), [basename(file)], 'no partial files left behind')
})

t.test('a snapshot PGlite refuses is dropped and the store starts afresh, saving a good one', async (t) => {
  const dir = tempDir(t)
  const file = templateFile(dir)
  // A cluster's version file, and nothing else of one.
  writeFileSync(file, createTar([{ name: 'PG_VERSION', data: '17\n' }, { name: 'global/' }]))
  const driver = await open(t, dir)
  t.strictSame((await driver.query('SELECT 41 + 1 AS n')).rows, [{ n: 42 }], 'the store works')
  t.ok(statSync(file).size > 1_000_000, 'the bad snapshot was replaced by a real one')
})

t.test('a data directory the snapshot cannot be written into is emptied, and a cluster made there afresh', async (t) => {
  const dir = tempDir(t)
  // `a` is a file, and then a folder holding `b`: the second write fails.
  writeFileSync(templateFile(dir), createTar([{ name: 'PG_VERSION', data: '17\n' }, { name: 'a', data: 'x' }, { name: 'a/b', data: 'y' }]))
  const dataDir = join(dir, 'data')
  const driver = createPgliteDriver({ dataDir, template: dir })
  t.teardown(() => driver.close())
  await driver.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)')
  t.strictSame((await driver.query('SELECT x FROM kept')).rows, [{ x: 7 }], 'the store works')
  t.equal(existsSync(join(dataDir, 'a')), false, 'nothing of the snapshot is left')
  t.equal(existsSync(join(dataDir, 'global', 'pg_control')), true, 'a cluster of its own')
})

t.test('an unwritable snapshot folder only costs the cache', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'a-file'), '')
  const missing = await open(t, join(dir, 'a-file', 'folder'))
  t.strictSame((await missing.query('SELECT 2 AS two')).rows, [{ two: 2 }], 'the store works without its cache')
  t.strictSame(readdirSync(dir), ['a-file'], 'nothing written')
})

t.test('by default the snapshot is kept in node_modules/.cache, never in the temp folder', async (t) => {
  const file = templateFile()
  t.match(file, /[/\\]node_modules[/\\]\.cache[/\\]svc-conventions[/\\]svc-conventions-pglite-[^/\\]+\.tar$/)
  // The project's own node_modules, wherever the project is (a clone under /tmp included).
  t.ok(file.startsWith(join(import.meta.dirname, '..', '..', 'node_modules', '.cache')), 'in the project, not the temp folder')
})
