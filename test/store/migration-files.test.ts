import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { databases } from '../support/databases.js'
import { defineResource } from '../../plugins/resource/define.js'
import { Nullable } from '../../schemas/types.js'
import {
  applyMigrationFiles, appliedMigrations, evolveTables, MigrationFailed, migrationSlug, migrationText, previewTables,
  readMigrationFiles, SchemaMismatch, writeMigrationFile, type SchemaDifference
} from '../../store/index.js'
import { guarded } from '../../store/table/evolve.js'

// Versioned SQL files: read in the order of their numbers, applied once each, recorded beside
// the migrations in code; and the files `migrate new` writes, which also pass on a database
// whose tables do not exist yet.

const folder = (t: Test, files: Record<string, string> = {}): string => t.testdir(files)

t.test('reading: numeric order, other files ignored, mistakes refused by name', async t => {
  const dir = folder(t, { '10_c.sql': 'SELECT 10', '2_b.sql': 'SELECT 2', '0001_a-one.sql': 'SELECT 1', 'README.md': 'notes', 'draft.txt': '' })
  t.strictSame(readMigrationFiles(dir).map(f => [f.id, f.number, f.text]), [['file:0001_a-one.sql', 1, 'SELECT 1'], ['file:2_b.sql', 2, 'SELECT 2'], ['file:10_c.sql', 10, 'SELECT 10']])
  t.strictSame(readMigrationFiles(join(dir, 'missing')), [], 'no directory, no files')
  t.throws(() => readMigrationFiles(join(dir, 'missing'), { required: true }), { name: 'TypeError', message: `migrations: the directory ${join(dir, 'missing')} does not exist` })
  t.throws(() => readMigrationFiles(join(dir, 'README.md')), { name: 'TypeError', message: `migrations: ${join(dir, 'README.md')} is not a directory` })
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ 'rename.sql': '' }, /rename\.sql must be named NNNN_<name>\.sql/],
    [{ '0001-rename.sql': '' }, /0001-rename\.sql must be named/],
    [{ '0001_.sql': '' }, /0001_\.sql must be named/],
    [{ '0001_a.sql': '', '1_b.sql': '' }, /^migrations: 0001_a\.sql and 1_b\.sql have the same number; renumber one$/]
  ]
  for (const [files, message] of cases) {
    t.throws(() => readMigrationFiles(folder(t, files)), { name: 'TypeError', message }, Object.keys(files).join(', '))
  }
})

t.test('writing: the next number, four digits at least, a name made safe, never over a file', async t => {
  const dir = join(folder(t, {}), 'migrations')
  t.match(writeMigrationFile(dir, 'Rename title', () => 'A'), /migrations\/0001_rename_title\.sql$/, 'the directory is made')
  const seen: string[] = []
  const second = writeMigrationFile(dir, 'drop: old column!', (file) => { seen.push(file); return `-- ${file}` })
  t.strictSame(seen, ['0002_drop_old_column.sql'])
  t.equal(readFileSync(second, 'utf8'), '-- 0002_drop_old_column.sql')
  writeFileSync(join(dir, '0041_later.sql'), '')
  t.match(writeMigrationFile(dir, 'x', () => ''), /0042_x\.sql$/)
  const cases: Array<[string, string]> = [['a', 'a'], ['  Add Index ', 'add_index'], ['ünïcode-name', 'n_code_name'], ['__x__', 'x']]
  for (const [name, slug] of cases) t.equal(migrationSlug(name), slug, name)
  t.throws(() => migrationSlug(' -!'), { name: 'TypeError', message: 'migrations: a migration needs a name with letters or digits, got " -!"' })
})

t.test('the file form of a statement does nothing where its table is missing', async t => {
  const cases: Array<[string, string]> = [
    ['ALTER TABLE "t" RENAME COLUMN "a" TO "b";', 'ALTER TABLE IF EXISTS "t" RENAME COLUMN "a" TO "b";'],
    ['ALTER INDEX "t_by_a" RENAME TO "t_by_b";', 'ALTER INDEX IF EXISTS "t_by_a" RENAME TO "t_by_b";'],
    ['DROP INDEX "t_a_key";', 'DROP INDEX IF EXISTS "t_a_key";'],
    ['UPDATE "t" SET "a" = \'x\' WHERE "a" IS NULL;', 'DO $$ BEGIN IF to_regclass(\'"t"\') IS NOT NULL THEN UPDATE "t" SET "a" = \'x\' WHERE "a" IS NULL; END IF; END $$;'],
    ['-- a comment', '-- a comment']
  ]
  for (const [statement, form] of cases) t.equal(guarded(statement, 't'), form, statement)
  t.equal(migrationText('0003_none.sql', []), [
    '-- 0003_none.sql: applied once, in one transaction, before the tables are compared with the definitions.',
    '-- Statements on a table do nothing when it does not exist yet (IF EXISTS, to_regclass), so the file',
    '-- also passes on a database made from scratch, whose tables are created from the definitions after it.',
    '',
    '-- The tables match the definitions: nothing to propose. Write the statements of your change here.',
    ''
  ].join('\n'))
  const d: SchemaDifference = { table: 't', column: 'a', difference: 'a difference', sql: ['-- why', 'ALTER TABLE "t" DROP COLUMN "a";'] }
  t.match(migrationText('0004_x.sql', [d, { ...d, column: null }]), '\n\n-- table "t", column "a": a difference.\n-- why\nALTER TABLE IF EXISTS "t" DROP COLUMN "a";\n\n-- table "t": a difference.\n')
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('applied in order, once each, recorded as file:<name>; a blank file is fine', async t => {
      const dir = folder(t, {
        '0001_create.sql': 'CREATE TABLE mf_log (n int);\nINSERT INTO mf_log VALUES (1);',
        '0002_nothing.sql': '-- only a comment\n\n',
        '0003_more.sql': 'INSERT INTO mf_log VALUES (3);'
      })
      t.strictSame(await appliedMigrations(store), new Set(), 'no table yet, nothing applied')
      const files = readMigrationFiles(dir)
      t.strictSame(await applyMigrationFiles(store, files), ['file:0001_create.sql', 'file:0002_nothing.sql', 'file:0003_more.sql'])
      t.strictSame(await applyMigrationFiles(store, files), [], 'once')
      t.strictSame((await store.query('SELECT n FROM mf_log ORDER BY n')).rows, [{ n: 1 }, { n: 3 }])
      t.ok((await appliedMigrations(store)).has('file:0003_more.sql'))
    })

    t.test('a failing file is rolled back, named with the database\'s words, and stops the run', async t => {
      const dir = folder(t, {
        '0001_ok.sql': 'CREATE TABLE mf_fail (n int)',
        '0002_bad.sql': 'INSERT INTO mf_fail VALUES (2);\nALTER TABLE mf_fail RENAME COLUMN nope TO yes;',
        '0003_after.sql': 'INSERT INTO mf_fail VALUES (3)'
      })
      const err = await applyMigrationFiles(store, readMigrationFiles(dir)).catch((e: unknown) => e)
      t.type(err, MigrationFailed)
      t.match(err, { migration: '0002_bad.sql', code: 'STORE_MIGRATION_FAILED', sqlState: '42703', message: /^Migration 0002_bad\.sql failed and was rolled back: column "nope" does not exist/ })
      t.strictSame((await store.query('SELECT n FROM mf_fail')).rows, [], 'its insert was rolled back and the next file did not run')
      t.notOk((await appliedMigrations(store)).has('file:0002_bad.sql'))
    })

    t.test('what migrate new writes: the comparison after the pending files, which passes on the old table and on none', async t => {
      const v1 = defineResource({ name: 'note', collection: 'mf_notes', path: '/v1/mf_notes', idParam: 'noteId', fields: { title: Type.String(), size: Type.Integer() }, unique: ['title'] })
      const v2 = defineResource({ name: 'note', collection: 'mf_notes', path: '/v1/mf_notes', idParam: 'noteId', fields: { name: Type.String(), weight: Type.Integer(), note: Nullable(Type.String()) }, unique: ['name'] })
      await evolveTables(store, [v1.storage.spec])
      await store.query('INSERT INTO mf_notes (ctx, id, etag, "createdDateTime", "modifiedDateTime", title, size) VALUES ($1, $2, $3, now(), now(), $4, $5)', ['prod', 'n1', '"e"', 'first', 1])
      const dir = folder(t, { '0001_size.sql': 'ALTER TABLE IF EXISTS mf_notes RENAME COLUMN size TO weight;' })
      const pending = readMigrationFiles(dir)

      const preview = await previewTables(store, [v2.storage.spec], pending)
      t.strictSame(preview.changes, [{ table: 'mf_notes', change: 'added column "note"' }], 'what the boot would do alone')
      t.strictSame(preview.refusals.map(d => d.column), ['title'], 'the pending file renames size: only the title is left')
      t.strictSame((await store.query('SELECT title, size FROM mf_notes')).rows, [{ title: 'first', size: 1 }], 'nothing changed meanwhile')

      const path = writeMigrationFile(dir, 'rename title', (file) => migrationText(file, preview.refusals))
      t.match(readFileSync(path, 'utf8'), 'ALTER TABLE IF EXISTS "mf_notes" RENAME COLUMN "title" TO "name";\nALTER TABLE IF EXISTS "mf_notes" RENAME CONSTRAINT "mf_notes_title_key" TO "mf_notes_name_key";\n')
      await t.rejects(evolveTables(store, [v2.storage.spec]), SchemaMismatch, 'before the files run')
      t.strictSame(await applyMigrationFiles(store, readMigrationFiles(dir)), ['file:0001_size.sql', 'file:0002_rename_title.sql'])
      t.strictSame(await evolveTables(store, [v2.storage.spec]), [{ table: 'mf_notes', change: 'added column "note"' }])
      t.strictSame((await store.query('SELECT name, weight, note FROM mf_notes')).rows, [{ name: 'first', weight: 1, note: null }])

      // A database made from scratch: the files find no table, then the definition makes it.
      const other = defineResource({ ...v2Options(), collection: 'mf_fresh', path: '/v1/mf_fresh' })
      const fresh = folder(t, { '0001_rename.sql': readFileSync(path, 'utf8').replaceAll('mf_notes', 'mf_fresh') })
      t.strictSame(await applyMigrationFiles(store, readMigrationFiles(fresh).map(f => ({ ...f, id: `${f.id}:fresh` }))), ['file:0001_rename.sql:fresh'])
      t.strictSame(await evolveTables(store, [other.storage.spec]), [{ table: 'mf_fresh', change: 'created' }])
    })

    t.test('a pending file that fails is named by the preview too', async t => {
      const v = defineResource({ name: 'note', collection: 'mf_prev', path: '/v1/mf_prev', idParam: 'noteId', fields: { title: Type.String() } })
      const dir = folder(t, { '0007_broken.sql': 'ALTER TABLE mf_nothing ADD COLUMN x int' })
      const err = await previewTables(store, [v.storage.spec], readMigrationFiles(dir)).catch((e: unknown) => e)
      t.match(err, { name: 'MigrationFailed', migration: '0007_broken.sql', message: /relation "mf_nothing" does not exist/ })
    })
  })
}

function v2Options (): Parameters<typeof defineResource>[0] {
  return { name: 'note', collection: 'mf_notes', path: '/v1/mf_notes', idParam: 'noteId', fields: { name: Type.String(), weight: Type.Integer(), note: Nullable(Type.String()) }, unique: ['name'] }
}
