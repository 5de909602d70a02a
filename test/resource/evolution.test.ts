import t from 'tap'
import { readdirSync } from 'node:fs'
import { Type } from '@sinclair/typebox'
import { databases } from '../support/databases.js'
import { build, client, json } from './helper.js'
import { defineResource } from '../../plugins/resource/define.js'
import { Nullable } from '../../schemas/types.js'
import { migrationText, SchemaMismatch, writeMigrationFile } from '../../store/index.js'

// A renamed field used to boot and then answer every create with a 500 (the old NOT NULL column
// refused the inserts). Now the boot refuses with the SQL of the rename; that SQL in a migration
// file makes the next boot pass and serve, and a database made from scratch boots with it too.

const options = { name: 'note', collection: 'notes', path: '/v1/notes', idParam: 'noteId' } as const
const v1 = defineResource({
  ...options,
  fields: { title: Type.String({ minLength: 1 }), size: Type.Integer({ default: 0 }) },
  unique: ['title'],
  filterable: ['title'],
  sortable: ['title'],
  indexes: [['title']]
})
const v2 = defineResource({
  ...options,
  fields: { name: Type.String({ minLength: 1 }), size: Type.Integer({ default: 0 }), note: Nullable(Type.String()) },
  unique: ['name'],
  filterable: ['name'],
  sortable: ['name'],
  indexes: [['name']]
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const dir = t.testdir({})

    const first = await build(t, store, { resources: [v1], migrations: dir })
    t.equal((await client(first).post('/v1/notes', { title: 'first' })).statusCode, 201)
    await first.close()

    const err = await build(t, store, { resources: [v2], migrations: dir }).catch((e: unknown) => e)
    t.type(err, SchemaMismatch, 'the renamed field stops the boot')
    const differences = (err as SchemaMismatch).differences
    t.strictSame(differences.map(d => d.sql), [[
      'ALTER TABLE "notes" RENAME COLUMN "title" TO "name";',
      'ALTER TABLE "notes" RENAME CONSTRAINT "notes_title_key" TO "notes_name_key";',
      'ALTER INDEX "notes_by_title" RENAME TO "notes_by_name";'
    ]])
    t.match((err as Error).message, 'table "notes", column "title": in the table but not in the definition, which has a new field "name"')

    writeMigrationFile(dir, 'rename title', (file) => migrationText(file, differences))
    t.strictSame(readdirSync(dir), ['0001_rename_title.sql'])
    const app = await build(t, store, { resources: [v2], migrations: dir })
    const api = client(app)
    t.equal((await api.post('/v1/notes', { name: 'second' })).statusCode, 201, 'creates again')
    const list = json(await api.get('/v1/notes?ordering=name'))
    t.strictSame(list.results.map((n: { name: string, note: unknown }) => [n.name, n.note]), [['first', null], ['second', null]], 'the old rows under the new name, the new field added')
    const twice = await api.post('/v1/notes', { name: 'first' })
    t.equal(twice.statusCode, 409, 'the renamed unique constraint still answers for its field')
    t.match(json(twice).context, [{ code: 'UNIQUE_NAME_VIOLATION', field: 'name' }])
    await app.close()

    t.test('migrations: false reads no directory', async t => {
      const app = await build(t, store, { resources: [v2], migrations: false })
      t.equal((await client(app).get('/v1/notes')).statusCode, 200)
    })

    t.test('a database made from scratch boots with the same file', async t => {
      const fresh = await db.create(t)
      const app = await build(t, fresh, { resources: [v2], migrations: dir })
      t.equal((await client(app).post('/v1/notes', { name: 'only' })).statusCode, 201)
    })
  })
}
