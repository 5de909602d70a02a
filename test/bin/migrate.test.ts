import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { migrateCommand, USAGE, type MigrateIo } from '../../bin/migrate.js'
import { createStore, evolveTables, type Store } from '../../store/index.js'
import { databases, TEST_DATABASE_URL } from '../support/databases.js'
import { toolEnv } from '../support/child-env.js'
import { notes } from './fixtures/notes-v1.js'
import { resources } from './fixtures/notes-v2.js'

// `svc-conventions migrate`: the same database as the service (DATA_DIR or DATABASE_URL), the
// same files (--dir, MIGRATIONS_DIR, ./migrations); `new` writes what the comparison proposes
// after the pending files, `up` applies the pending files once.

// One case compiles the package's bin in a child process, another starts PGlite on disk.
t.setTimeout(240_000)

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

function capture (cwd: string, env: NodeJS.ProcessEnv): MigrateIo & { stdout: string[], stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  return { stdout, stderr, cwd, env, out: (line) => { stdout.push(line) }, err: (line) => { stderr.push(line) } }
}

t.test('usage: each mistake is a 2 with the usage; --help prints it', async t => {
  const io = capture(t.testdir({}), {})
  const cases: Array<[string[], string]> = [
    [[], 'say new or up'],
    [['down'], 'unknown command down'],
    [['up', 'now'], 'up takes no argument, got now'],
    [['new'], 'new takes one name, e.g. migrate new rename_title'],
    [['new', 'a', 'b', '--resources', 'x.js'], 'new takes one name, e.g. migrate new rename_title'],
    [['new', 'a'], 'new needs --resources: the module(s) that export your resource definitions'],
    [['up', '--verbose'], "Unknown option '--verbose'"]
  ]
  for (const [argv, problem] of cases) {
    t.equal(await migrateCommand(argv, io), 2, argv.join(' '))
    t.equal(io.stderr.pop(), USAGE)
    t.match(io.stderr.pop(), `svc-conventions migrate: ${problem}`)
  }
  t.equal(await migrateCommand(['--help'], io), 0)
  t.strictSame(io.stdout, [USAGE])
  t.match(USAGE, /^usage: svc-conventions migrate new <name> --resources <module>/)
})

t.test('input errors: a module without definitions, a bad DATABASE_URL, a misnamed file', async t => {
  const cwd = t.testdir({ migrations: { 'rename.sql': '' } })
  const io = capture(cwd, { DATABASE_URL: 'mysql://db/x' })
  t.equal(await migrateCommand(['new', 'x', '--resources', fixture('nothing.ts')], io), 2)
  t.match(io.stderr.pop(), /nothing\.ts exports no resource definition \(defineResource\)$/)
  t.equal(await migrateCommand(['new', 'x', '--resources', fixture('notes-v1.ts'), '--dir', 'elsewhere'], io), 2)
  t.match(io.stderr.pop(), 'createStore: databaseUrl must be a postgres:// or postgresql:// URL')
  t.equal(await migrateCommand(['up'], io), 2)
  t.match(io.stderr.pop(), /rename\.sql must be named NNNN_<name>\.sql/)
  t.equal(await migrateCommand(['up', '--dir', 'none'], io), 0)
  t.strictSame(io.stdout.pop(), 'No migration files in none.')
  // The service keeps DATA_DIR=memory in memory: no directory of that name is opened instead.
  const memory = capture(cwd, { DATA_DIR: 'memory' })
  const good = t.testdir({ migrations: { '0001_start.sql': 'CREATE TABLE cli_log (n int);' } })
  for (const [args, dir] of [[['up'], good], [['new', 'x', '--resources', fixture('notes-v1.ts')], good]] as const) {
    memory.cwd = dir
    t.equal(await migrateCommand(args, memory), 2, args[0])
    t.match(memory.stderr.pop(), /^svc-conventions migrate: DATA_DIR=memory: an in-memory database lasts as long as the process that opens it, so there is none to migrate/)
    t.notOk(existsSync(join(dir, 'memory')), `${args[0]}: no ./memory database`)
  }
})

for (const db of databases) {
  t.test(`${db.label}: new proposes the rename after the pending files, up applies each once, the service then boots`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // The command closes the store it opens: here it stays open for the next command.
    const shared: Store = { ...store, close: async () => {} }
    const cwd = t.testdir({})
    const io = { ...capture(cwd, { MIGRATIONS_DIR: 'sql' }), store: () => shared }
    await evolveTables(store, [notes.storage.spec])
    await store.query('INSERT INTO cli_notes (ctx, id, etag, "createdDateTime", "modifiedDateTime", title) VALUES ($1, $2, $3, now(), now(), $4)', ['prod', 'n1', '"e"', 'kept'])

    t.equal(await migrateCommand(['new', 'Rename title', '--resources', fixture('notes-v2.ts')], io), 0, io.stderr.join('\n'))
    t.strictSame(readdirSync(join(cwd, 'sql')), ['0001_rename_title.sql'])
    const text = readFileSync(join(cwd, 'sql', '0001_rename_title.sql'), 'utf8')
    t.match(text, /^-- 0001_rename_title\.sql: applied once/)
    t.match(text, '-- table "cli_notes", column "title": in the table but not in the definition, which has a new field "name" of the same type')
    t.match(text, 'ALTER TABLE IF EXISTS "cli_notes" RENAME COLUMN "title" TO "name";\nALTER TABLE IF EXISTS "cli_notes" RENAME CONSTRAINT "cli_notes_title_key" TO "cli_notes_name_key";')
    t.strictSame(io.stdout.splice(0), [
      'Wrote sql/0001_rename_title.sql with the SQL of 1 difference: review it, then apply it with `svc-conventions migrate up` or the service\'s next start.',
      'The next start also changes "cli_folders" by itself: created.',
      'The next start also changes "cli_notes" by itself: added column "folderId".',
      'The next start also changes "cli_notes" by itself: added the reference of "folderId" to "cli_folders".',
      'The next start also changes "cli_notes" by itself: created index "cli_notes_folderId_idx".'
    ])

    writeFileSync(join(cwd, 'sql', '0002_seed.sql'), "INSERT INTO cli_notes (ctx, id, etag, \"createdDateTime\", \"modifiedDateTime\", name) VALUES ('prod', 'n2', '\"e\"', now(), now(), 'seeded')")
    t.equal(await migrateCommand(['new', 'later', '--resources', fixture('notes-v2.ts')], io), 0, io.stderr.join('\n'))
    t.strictSame(io.stdout.splice(0, 2), [
      'Wrote sql/0003_later.sql: the tables match the definitions, so it holds no statement yet; write yours.',
      'It follows the files not applied yet: 0001_rename_title.sql, 0002_seed.sql.'
    ], 'compared as if the pending files had run')
    io.stdout.splice(0)

    t.equal(await migrateCommand(['up'], io), 0, io.stderr.join('\n'))
    t.strictSame(io.stdout.splice(0), ['Applied 0001_rename_title.sql.', 'Applied 0002_seed.sql.', 'Applied 0003_later.sql.'])
    t.equal(await migrateCommand(['up'], io), 0)
    t.strictSame(io.stdout.splice(0), ['Nothing to apply: the 3 files of sql were applied before.'])

    writeFileSync(join(cwd, 'sql', '0004_broken.sql'), 'ALTER TABLE cli_notes RENAME COLUMN title TO heading')
    t.equal(await migrateCommand(['up'], io), 1)
    t.match(io.stderr.pop(), /^svc-conventions migrate: Migration 0004_broken\.sql failed and was rolled back: column "title" does not exist/)

    t.strictSame((await evolveTables(store, [...resources].reverse().map(d => d.storage.spec))).map(c => c.change), ['created', 'added column "folderId"', 'added the reference of "folderId" to "cli_folders"', 'created index "cli_notes_folderId_idx"'])
    t.strictSame((await store.query('SELECT id, name FROM cli_notes ORDER BY id')).rows, [{ id: 'n1', name: 'kept' }, { id: 'n2', name: 'seeded' }])

    const elsewhere = mkdtempSync(join(tmpdir(), 'svc-migrate-'))
    t.teardown(() => { rmSync(elsewhere, { recursive: true, force: true }) })
    t.equal(await migrateCommand(['new', 'tail', '--resources', fixture('notes-v2.ts'), '--dir', elsewhere], io), 0)
    t.equal(io.stdout.pop(), `Wrote ${join(elsewhere, '0001_tail.sql')}: the tables match the definitions, so it holds no statement yet; write yours.`, 'a path outside the working directory in full')
  })
}

t.test('a TypeScript module under plain Node.js: loaded through the project\'s tsx, or an error saying how to run it', async t => {
  // The built bin (dist/, made before the tests) in a process without this test's TypeScript loader.
  const bin = fileURLToPath(new URL('../../dist/bin/lint.js', import.meta.url))
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const elsewhere = mkdtempSync(join(tmpdir(), 'svc-migrate-ts-'))
  t.teardown(() => { rmSync(elsewhere, { recursive: true, force: true }) })
  // A tool's environment, without coverage: tsx maps the sources it loads otherwise than tap's
  // loader, and its report of a file would corrupt the merged one.
  const run = async (cwd: string): Promise<{ code: number, stdout: string, stderr: string }> =>
    await promisify(execFile)(process.execPath, [bin, 'migrate', 'new', 'typed', '--resources', fixture('notes-v1.ts'), '--dir', join(elsewhere, 'sql')], { cwd, env: toolEnv({ DATA_DIR: join(elsewhere, 'db'), DATABASE_URL: '' }) })
      .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: { code: number, stdout: string, stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }))

  // A project without tsx (a folder outside this repository): a usage error naming each way.
  const without = await run(elsewhere)
  t.equal(without.code, 2, without.stderr)
  t.match(without.stderr, /^svc-conventions migrate: \/\S+\/notes-v1\.ts is TypeScript, which Node\.js v[\d.]+ does not load by itself \(ERR_[A-Z_]+\), and the project has no tsx to load it with: /)
  for (const way of ['npm i -D tsx', 'npx tsx node_modules/.bin/svc-conventions migrate …', 'node --import tsx node_modules/.bin/svc-conventions migrate …', 'the compiled .js module']) t.match(without.stderr, way, way)
  t.strictSame(readdirSync(elsewhere), [], 'nothing written, no database opened')

  // This repository has tsx: the module is loaded through it.
  const through = await run(root)
  t.equal(through.code, 0, through.stderr)
  t.match(through.stdout, /^Wrote \S+0001_typed\.sql: the tables match the definitions/)
})

t.test('the service\'s database: DATA_DIR, relative to where the command runs', async t => {
  const cwd = t.testdir({ migrations: { '0001_start.sql': 'CREATE TABLE cli_log (n int); INSERT INTO cli_log VALUES (1);' } })
  const io = capture(cwd, { DATA_DIR: 'db' })
  t.equal(await migrateCommand(['up'], io), 0, io.stderr.join('\n'))
  t.strictSame(io.stdout.splice(0), ['Applied 0001_start.sql.'])
  const store = createStore({ dataDir: join(cwd, 'db') })
  t.teardown(() => store.close())
  t.strictSame((await store.query('SELECT n FROM cli_log')).rows, [{ n: 1 }])
})

t.test('a server (DATABASE_URL), and the package\'s one bin routing `migrate`', { skip: TEST_DATABASE_URL === undefined ? 'PostgreSQL server not tested: set TEST_DATABASE_URL' : false }, async t => {
  const server = TEST_DATABASE_URL as string
  const name = `cli_${process.pid}`
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: server })
    await c.connect()
    try { await c.query(sql) } finally { await c.end() }
  }
  await admin(`CREATE DATABASE ${name}`)
  t.teardown(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  const url = new URL(server)
  url.pathname = `/${name}`
  const cwd = t.testdir({ migrations: { '0001_start.sql': 'CREATE TABLE cli_log (n int); INSERT INTO cli_log VALUES (1);' } })
  const io = capture(cwd, { DATABASE_URL: url.href })
  t.equal(await migrateCommand(['up'], io), 0, io.stderr.join('\n'))
  t.strictSame(io.stdout.splice(0), ['Applied 0001_start.sql.'])

  const bin = fileURLToPath(new URL('../../bin/lint.ts', import.meta.url))
  // The test runner's loader is named relative to the repository (.taprc); this child runs elsewhere.
  const execArgv = process.execArgv.map((arg) => arg.startsWith('--import=./') ? `--import=${pathToFileURL(resolve(arg.slice('--import='.length))).href}` : arg)
  const { stdout } = await promisify(execFile)(process.execPath, [...execArgv, bin, 'migrate', 'up'], { cwd, env: { ...process.env, DATABASE_URL: url.href } })
  t.equal(stdout, 'Nothing to apply: the one file of migrations was applied before.\n')
})
