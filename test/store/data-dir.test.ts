import t, { type Test } from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { pathToFileURL } from 'node:url'
import { createStore, DataDirInUse, LOCK_FILE } from '../../store/index.js'
import { lockDataDir } from '../../store/data-dir-lock.js'
import { createPgliteDriver, startFailure } from '../../store/pglite.js'
import { templateFile } from '../../store/pglite-template.js'

// A data directory belongs to one store at a time: PGlite is one backend per directory, and a
// second process opening it would overwrite what the first acknowledged. The lock file names
// the holder; a dead holder's lock is taken over. test/app/data-dir.test.ts runs two services.

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-data-dir-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/**
 * The pid of a process that has exited and is not reaped (a zombie: signals still reach it),
 * on Linux; undefined elsewhere. Its parent, which never reaps it, is killed on teardown.
 */
async function zombiePid (t: Test): Promise<number | undefined> {
  if (!existsSync('/proc/self/stat')) return undefined
  for (;;) {
    // sh starts a child, then becomes `sleep`, which never waits for it. A child that ended
    // before the exec may have been reaped by sh itself: then another pair is started.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] })
    t.teardown(() => { parent.kill('SIGKILL') })
    const [chunk] = await once(parent.stdout, 'data') as [Buffer]
    const pid = Number(String(chunk).trim())
    for (;;) {
      let stat: string
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      } catch {
        break
      }
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return pid
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
}

/** The pid of a process that has exited. */
function deadPid (): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  return Number(child.stdout)
}

t.test('the lock names its holder; a second taker in this process is refused until release', async (t) => {
  const dir = join(tempDir(t), 'new', 'data')
  const lock = lockDataDir(dir)
  t.equal(lock.file, join(dir, LOCK_FILE), 'created with its directory')
  t.equal(readFileSync(lock.file, 'utf8'), `${process.pid}\n${hostname()}\n`)
  t.throws(() => lockDataDir(dir), {
    name: 'DataDirInUse',
    pid: process.pid,
    dataDir: dir,
    message: `The data directory ${dir} is in use by this process (pid ${process.pid}), by another store: stop it, or use another data directory.`
  })
  lock.release()
  t.notOk(existsSync(lock.file), 'released')
  lock.release()
  const again = lockDataDir(dir)
  t.teardown(again.release)
  t.ok(existsSync(again.file), 'taken again once released')
})

t.test('a lock of a process that is gone, or unreadable, is taken over', async (t) => {
  // A container's service is PID 1 at every start: the lock a killed one left names the pid
  // of the process starting now, which does not hold it.
  const zombie = await zombiePid(t)
  const table: Array<[string, string]> = [['a dead process', `${deadPid()}\n${hostname()}\n`], ['an earlier process with this pid', `${process.pid}\n${hostname()}\n`], ['an empty file', ''], ['garbage', 'not a lock']]
  // A killed holder its parent has not reaped yet (a container's PID 1 that reaps nothing).
  if (zombie !== undefined) table.push(['a process killed and not yet reaped', `${zombie}\n${hostname()}\n`])
  for (const [name, content] of table) {
    const dir = tempDir(t)
    writeFileSync(join(dir, LOCK_FILE), content)
    const lock = lockDataDir(dir)
    t.equal(readFileSync(lock.file, 'utf8'), `${process.pid}\n${hostname()}\n`, name)
    t.strictSame(readdirSync(dir), [LOCK_FILE], `${name}: nothing else left in the directory`)
    lock.release()
  }
})

t.test('a lock held on another host is refused, naming the host and the file to delete if it is gone', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, LOCK_FILE), '4242\nother-host\n')
  t.throws(() => lockDataDir(dir), {
    name: 'DataDirInUse',
    code: 'STORE_DATA_DIR_IN_USE',
    pid: 4242,
    message: `The data directory ${dir} is in use by process 4242 on host other-host: stop it, or use another data directory (if it is gone, delete ${join(dir, LOCK_FILE)}).`
  })
})

t.test('release removes only its own lock', async (t) => {
  const dir = tempDir(t)
  const lock = lockDataDir(dir)
  writeFileSync(lock.file, '4242\nother-host\n')
  lock.release()
  t.equal(readFileSync(lock.file, 'utf8'), '4242\nother-host\n', 'a lock someone else wrote stays')
})

t.test('createStore takes the directory at once, and closing gives it back', async (t) => {
  const dir = tempDir(t)
  const first = createStore({ dataDir: dir })
  t.equal(first.location, `PGlite in ${dir}`)
  t.throws(() => createStore({ dataDir: dir }), DataDirInUse, 'refused before anything opens the directory')
  await first.ready()
  await first.close()
  t.notOk(existsSync(join(dir, LOCK_FILE)), 'released on close')
  const second = createStore({ dataDir: dir })
  t.teardown(() => second.close())
  await second.ready()
})

t.test('a process that exits without closing its store leaves no lock behind', async (t) => {
  const dir = tempDir(t)
  const lockModule = pathToFileURL(join(import.meta.dirname, '..', '..', 'store', 'data-dir-lock.ts')).href
  const child = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e',
    `import { lockDataDir } from ${JSON.stringify(lockModule)}; lockDataDir(${JSON.stringify(dir)}); process.exit(0)`], { stdio: 'inherit' })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0)
  t.strictSame(readdirSync(dir), [], 'the exit handler removed the lock')
})

t.test('a new data directory starts from the snapshot, and keeps what is written', async (t) => {
  const snapshots = tempDir(t)
  const memory = createPgliteDriver({ dataDir: 'memory', template: snapshots })
  await memory.query('SELECT 1')
  await memory.close()
  t.ok(existsSync(templateFile(snapshots)), 'a snapshot, made in memory')
  const dataDir = join(tempDir(t), 'data')
  const first = createPgliteDriver({ dataDir, template: snapshots })
  await first.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)')
  await first.close()
  t.ok(existsSync(join(dataDir, 'PG_VERSION')), 'a cluster on disk')
  const again = createPgliteDriver({ dataDir, template: snapshots })
  t.teardown(() => again.close())
  t.strictSame((await again.query('SELECT x FROM kept')).rows, [{ x: 7 }], 'reopened, not started from the snapshot again')
})

t.test('a new data directory whose snapshot PGlite refuses starts afresh with initdb', async (t) => {
  const snapshots = tempDir(t)
  writeFileSync(templateFile(snapshots), 'not a tar archive of a cluster')
  const dataDir = join(tempDir(t), 'data')
  const lock = lockDataDir(dataDir)
  const driver = createPgliteDriver({ dataDir, template: snapshots, lock })
  t.strictSame((await driver.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  t.notOk(existsSync(templateFile(snapshots)), 'the bad snapshot is dropped; none is made from a data directory')
  t.ok(existsSync(lock.file), 'the lock survives the fresh start')
  await driver.close()
  t.notOk(existsSync(lock.file), 'and goes with the driver')
})

t.test('a data directory that cannot be made is refused at once, naming it and saying why', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'a-file')
  writeFileSync(file, '')
  symlinkSync(join(dir, 'no-such-volume'), join(dir, 'dangling'))
  const table: Array<[string, string, string, string]> = [
    ['a file', file, 'ENOTDIR', `The data directory ${file} cannot be created: it is a file, not a directory.`],
    ['below a file', join(file, 'data'), 'ENOTDIR', `The data directory ${join(file, 'data')} cannot be created: it is a file, not a directory at ${file}.`],
    ['below a link to nothing', join(dir, 'dangling', 'data'), 'EEXIST', `The data directory ${join(dir, 'dangling', 'data')} cannot be created: something that is not a directory is there (EEXIST) at ${join(dir, 'dangling')}.`]
  ]
  // A file system that refuses children of a directory it has: Node's recursive mkdir retried for ever.
  if (existsSync('/proc/self')) table.push(['where the file system allows none', '/proc/svc-data-dir/data', 'ENOENT', 'The data directory /proc/svc-data-dir/data cannot be created: the file system does not allow a directory there (ENOENT) at /proc/svc-data-dir.'])
  for (const [name, path, code, message] of table) {
    t.throws(() => lockDataDir(path), { message, code }, name)
    t.throws(() => createStore({ dataDir: path }), { message, code }, `${name}: createStore`)
  }
  const nested = join(dir, 'a', 'b', 'c')
  lockDataDir(nested).release()
  t.ok(statSync(nested).isDirectory(), 'missing parents are made')
})

t.test('a start that fails for the file system says why: PGlite gives only an Emscripten error number', async (t) => {
  // What PGlite throws when a write fails in the data directory (its FS.ErrnoError).
  const errnoError = (errno: number): Error => Object.assign(new Error(), { name: 'ErrnoError', errno })
  const table: Array<[string, unknown, string | undefined, string]> = [
    ['a full disk', errnoError(51), '/srv/data', 'The embedded database failed to start: no space left on the device (ENOSPC) in /srv/data.'],
    ['a quota', errnoError(19), '/srv/data', 'The embedded database failed to start: the disk quota is used up (EDQUOT) in /srv/data.'],
    ['a read-only file system', errnoError(69), '/srv/data', 'The embedded database failed to start: the file system is read-only (EROFS) in /srv/data.'],
    ['no permission', errnoError(2), '/srv/data', 'The embedded database failed to start: permission denied (EACCES) in /srv/data.'],
    ['not permitted', errnoError(63), '/srv/data', 'The embedded database failed to start: operation not permitted (EPERM) in /srv/data.'],
    ['a failing disk', errnoError(29), '/srv/data', 'The embedded database failed to start: an input/output error (EIO) in /srv/data.'],
    ['in memory', errnoError(51), undefined, 'The embedded database failed to start: no space left on the device (ENOSPC).'],
    ['another file-system error', errnoError(54), '/srv/data', 'The embedded database failed to start.'],
    ['an error number that is no number', Object.assign(new Error(), { name: 'ErrnoError', errno: 'ENOSPC' }), '/srv/data', 'The embedded database failed to start.'],
    ['another error', new Error('abort'), '/srv/data', 'The embedded database failed to start.'],
    ['nothing', undefined, '/srv/data', 'The embedded database failed to start.']
  ]
  for (const [name, err, dataDir, message] of table) t.equal(startFailure(err, dataDir), message, name)
})

t.test('a lock is never there without its holder: a process starting at that moment would take it over as unreadable', async (t) => {
  const fs = await import('node:fs')
  const dir = tempDir(t)
  const file = join(dir, LOCK_FILE)
  // What another process opening the directory reads the moment the lock file appears.
  const seen: string[] = []
  const { lockDataDir: lock } = await t.mockImport<typeof import('../../store/data-dir-lock.js')>('../../store/data-dir-lock.js', {
    'node:fs': {
      ...fs,
      // As Node writes a file: opened (created, empty), then written; with `wx`, created only if absent.
      writeFileSync: (path: string, data: string, options?: { flag?: string }) => {
        const fd = fs.openSync(path, options?.flag ?? 'w')
        if (path === file) seen.push(fs.readFileSync(file, 'utf8'))
        fs.writeSync(fd, data)
        fs.closeSync(fd)
      },
      linkSync: (existing: string, path: string) => {
        fs.linkSync(existing, path)
        if (path === file) seen.push(fs.readFileSync(file, 'utf8'))
      }
    }
  })
  const held = lock(dir)
  t.teardown(held.release)
  t.strictSame(seen, [`${process.pid}\n${hostname()}\n`], 'the lock appeared with its holder in it')
  t.strictSame(readdirSync(dir), [LOCK_FILE], 'nothing else left in the directory')
})
