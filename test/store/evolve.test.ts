import t, { type Test } from 'tap'
import { Type, type TProperties } from '@sinclair/typebox'
import { databases } from '../support/databases.js'
import { defineResource, type ResourceDefinition, type ResourceOptions } from '../../plugins/resource/define.js'
import { DateTime, Int64, Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { evolveTables, migrate, SchemaMismatch, type SchemaDifference, type Store } from '../../store/index.js'
import { collationDdl, constraintNames, indexDdl, SERVER_COLUMNS, type Column, type TableSpec } from '../../store/table/index.js'
import { quoteIdent } from '../../store/quote.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

// Each resource table is compared with its definition at boot: what cannot fail and loses
// nothing is applied, anything else refused with the SQL that would fix it, and then nothing
// at all has changed. Every case on its own table of one store per engine.

type Options = Partial<ResourceOptions<TProperties>>

function def (table: string, fields: TProperties, opts: Options = {}): ResourceDefinition {
  return defineResource({ name: 'note', collection: table, path: `/v1/${table}`, idParam: 'noteId', fields, ...opts } as ResourceOptions<TProperties>)
}

const specs = (...defs: Array<ResourceDefinition | TableSpec>): TableSpec[] => defs.map(d => 'storage' in d ? d.storage.spec : d)

const inserted = new Map<string, number>()

/** Inserts rows with the server's columns filled in, ids `<table>-1`, `<table>-2`… */
async function insert (store: Store, table: string, rows: Array<Record<string, unknown>>): Promise<string[]> {
  const ids: string[] = []
  for (const row of rows) {
    const n = (inserted.get(table) ?? 0) + 1
    inserted.set(table, n)
    const names = Object.keys(row)
    const cols = ['ctx', 'id', 'etag', '"createdDateTime"', '"modifiedDateTime"', ...names.map(c => `"${c}"`)]
    const values = ["'prod'", `'${table}-${n}'`, "'\"e\"'", 'now()', 'now()', ...names.map((_, i) => `$${i + 1}`)]
    await store.query(`INSERT INTO "${table}" (${cols.join(', ')}) VALUES (${values.join(', ')})`, Object.values(row))
    ids.push(`${table}-${n}`)
  }
  return ids
}

async function columnsOf (store: Store, table: string): Promise<Array<{ name: string, type: string, notNull: boolean, dflt: string | null }>> {
  const { rows } = await store.query<{ name: string, type: string, notNull: boolean, dflt: string | null }>(`SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
      pg_get_expr(d.adbin, d.adrelid) AS dflt
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, [`"${table}"`])
  return rows
}

/** A table's storage parameters (`pg_class.reloptions`), sorted; null when it has none. */
async function reloptionsOf (store: Store, table: string): Promise<string[] | null> {
  const { rows } = await store.query<{ options: string[] | null }>('SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass', [`"${table}"`])
  return rows[0]?.options == null ? null : [...rows[0].options].sort()
}

async function indexesOf (store: Store, table: string): Promise<string[]> {
  const { rows } = await store.query<{ name: string }>('SELECT indexname AS name FROM pg_indexes WHERE tablename = $1 AND schemaname = current_schema() ORDER BY 1', [table])
  return rows.map(r => r.name)
}

/** The boot's refusal: every difference, and the message that lists them. */
async function refusal (t: Test, store: Store, list: TableSpec[]): Promise<SchemaMismatch> {
  const err = await evolveTables(store, list).then(() => null, (e: unknown) => e)
  t.type(err, SchemaMismatch, 'refused')
  return err as SchemaMismatch
}

/** The message holds the table, the column, the difference and each statement of the SQL. */
function named (t: Test, err: SchemaMismatch, d: SchemaDifference): void {
  t.match(err.message, `- table "${d.table}"${d.column === null ? '' : `, column "${d.column}"`}: ${d.difference}\n${d.sql.map(s => `    ${s}`).join('\n')}`, 'the message names it with its SQL')
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('the reference service\'s tables: created once, then no difference (indexes, collations, checks, references)', async t => {
      const changes = await evolveTables(store, specs(authors, documents))
      t.strictSame(changes, [{ table: 'authors', change: 'created' }, { table: 'documents', change: 'created' }])
      t.strictSame(await evolveTables(store, specs(authors, documents)), [], 'a second boot finds nothing to do')
      await insert(store, 'authors', [{ name: 'Ann', email: 'ann@example.com', active: true }])
      t.strictSame(await evolveTables(store, specs(authors, documents)), [], 'nor with rows')
      // Made with the store's fillfactor: half of each page on the embedded store, PostgreSQL's own on a server.
      const want = store.kind === 'pglite' ? ['fillfactor=50'] : null
      for (const table of ['authors', 'documents']) t.strictSame(await reloptionsOf(store, table), want, `${table}: ${String(want)}`)
    })

    t.test('a definition\'s fillfactor: the table made with it, set on a table that has another, the pages written before left as they are', async t => {
      const v1 = def('e_fill', { title: Type.String() }, { fillfactor: 80 })
      t.strictSame(await evolveTables(store, specs(v1)), [{ table: 'e_fill', change: 'created' }])
      t.strictSame(await reloptionsOf(store, 'e_fill'), ['fillfactor=80'])
      await insert(store, 'e_fill', [{ title: 'one' }])
      const v2 = def('e_fill', { title: Type.String() }, { fillfactor: 60 })
      t.strictSame(await evolveTables(store, specs(v2)), [{ table: 'e_fill', change: 'fillfactor 60 for the pages written from now on' }])
      t.strictSame(await reloptionsOf(store, 'e_fill'), ['fillfactor=60'])
      t.strictSame(await evolveTables(store, specs(v2)), [], 'a second boot finds nothing to do')
      // Named no more: the store's own where it has one, else the table keeps what it has.
      const v3 = def('e_fill', { title: Type.String() })
      t.strictSame((await evolveTables(store, specs(v3))).map(c => c.change), store.kind === 'pglite' ? ['fillfactor 50 for the pages written from now on'] : [])
      t.strictSame(await reloptionsOf(store, 'e_fill'), [store.kind === 'pglite' ? 'fillfactor=50' : 'fillfactor=60'])
      t.strictSame((await store.query('SELECT title FROM e_fill')).rows, [{ title: 'one' }], 'rows intact')
      // Other storage parameters are the operator's: left as they are, the fillfactor read among them.
      await store.exec('ALTER TABLE e_fill SET (autovacuum_enabled = false, fillfactor = 70)')
      t.strictSame((await evolveTables(store, specs(v2))).map(c => c.change), ['fillfactor 60 for the pages written from now on'])
      t.strictSame(await reloptionsOf(store, 'e_fill'), ['autovacuum_enabled=false', 'fillfactor=60'])
    })

    t.test('tables of the previous version boot without a step: made by its migration, before the collation step, with rows', async t => {
      const old = await db.create(t)
      // Made by the version before the collation step, with its migration ids recorded.
      await migrate(old, [authors, documents].map(d => ({ id: d.storage.migration.id, sql: previousTableDdl(d.storage.spec, false) })))
      const [ann] = await insert(old, 'authors', [{ name: 'Ann', email: 'ann@example.com', active: true }])
      await insert(old, 'documents', [{ name: 'A doc', authorId: ann, status: 'DRAFT', kind: 'INVOICE', pageCount: 1, tags: ['x'], pages: '[]' }])
      const changes = await evolveTables(old, specs(authors, documents))
      // The embedded store's tables leave room on their pages since (`defaultFillfactor`).
      const room = store.kind === 'pglite' ? ['fillfactor 50 for the pages written from now on'] : []
      // Documents became soft-deletable since: their deletion columns, and names unique among the rows not deleted.
      t.strictSame(changes.map(c => c.change), [
        'text columns in the "C" collation: ctx, id, etag, createdBy, modifiedBy, name, email',
        ...room,
        'added column "deletedDateTime"',
        'added column "deletedBy"',
        'text columns in the "C" collation: ctx, id, etag, createdBy, modifiedBy, name, description, authorId, status, kind, retentionDuration, validityInterval, reviewSchedule, fingerprint',
        'the unique set of "name" holds only where "deletedDateTime" IS NULL',
        ...room
      ], 'the collation step, and soft deletion')
      t.strictSame(await evolveTables(old, specs(authors, documents)), [])
      t.strictSame((await old.query('SELECT name FROM documents')).rows, [{ name: 'A doc' }], 'rows intact')

      // A field added while the previous version ran came as a nullable column, null in the rows there were.
      const v1 = def('e_prev', { title: Type.String() })
      const v2 = def('e_prev', { title: Type.String(), count: Type.Integer({ default: 3 }), note: Nullable(Type.String()) })
      await old.exec(previousTableDdl(v1.storage.spec, true))
      await insert(old, 'e_prev', [{ title: 'a' }])
      await old.exec(previousTableDdl(v2.storage.spec, true))
      t.strictSame((await evolveTables(old, specs(v2))).map(c => c.change), ['made "count" required, its default in the rows without a value', ...room])
      t.strictSame((await old.query('SELECT count FROM e_prev')).rows, [{ count: 3 }])
    })

    t.test('applied: a new nullable field, a defaulted one (rows get the default), a new index', async t => {
      const v1 = def('e_add', { title: Type.String() })
      await evolveTables(store, specs(v1))
      await insert(store, 'e_add', [{ title: 'one' }, { title: 'two' }])
      const v2 = def('e_add', {
        title: Type.String(),
        note: Nullable(Type.String()),
        count: Type.Integer({ default: 7 }),
        tags: Type.Array(Type.String(), { default: ['a', "b'c"] }),
        meta: Type.Object({ k: Type.String() }, { default: { k: 'v' } }),
        state: UpperSnakeEnum(['OPEN', 'SHUT'], { default: 'OPEN' }),
        since: Nullable(DateTime(), { default: '2024-01-02T03:04:05.678Z' })
      }, { filterable: ['title'], sortable: ['title'], indexes: [['title']] })
      const changes = await evolveTables(store, specs(v2))
      t.strictSame(changes.map(c => c.change), [
        'added column "note"',
        'added column "count", its default in the rows there were',
        'added column "tags", its default in the rows there were',
        'added column "meta", its default in the rows there were',
        'added column "state", its default in the rows there were',
        'added column "since", its default in the rows there were',
        'added the check of the values of "state"',
        'created index "e_add_by_title"'
      ])
      const { rows } = await store.query<Record<string, unknown>>('SELECT title, note, count, tags, meta, state, since FROM e_add ORDER BY title')
      t.strictSame(rows[0], { title: 'one', note: null, count: 7, tags: ['a', "b'c"], meta: { k: 'v' }, state: 'OPEN', since: '2024-01-02T03:04:05.678Z' })
      const cols = await columnsOf(store, 'e_add')
      t.strictSame(cols.filter(c => ['note', 'count', 'since'].includes(c.name)), [
        { name: 'note', type: 'text', notNull: false, dflt: null },
        { name: 'count', type: 'integer', notNull: true, dflt: null },
        { name: 'since', type: 'timestamp(3) with time zone', notNull: false, dflt: null }
      ], 'NOT NULL where required, and no default left in the table (writes fill it)')
      t.ok((await indexesOf(store, 'e_add')).includes('e_add_by_title'))
      await t.rejects(store.query("UPDATE e_add SET state = 'LOST'"), { name: 'CheckViolation' }, 'the enum\'s check is there')
      t.strictSame(await evolveTables(store, specs(v2)), [], 'then nothing more')
    })

    t.test('a new required field without a default: applied on an empty table, refused on one with rows', async t => {
      const v1 = def('e_req_empty', { title: Type.String() })
      const v2 = def('e_req_empty', { title: Type.String(), flag: Type.Boolean() })
      await evolveTables(store, specs(v1))
      t.strictSame(await evolveTables(store, specs(v2)), [{ table: 'e_req_empty', change: 'added required column "flag" (the table had no rows)' }])
      t.match((await columnsOf(store, 'e_req_empty')).find(c => c.name === 'flag'), { notNull: true })

      const w1 = def('e_req', { title: Type.String() })
      const w2 = def('e_req', { title: Type.String(), flag: Type.Boolean(), note: Nullable(Type.String()) })
      await evolveTables(store, specs(w1))
      await insert(store, 'e_req', [{ title: 'one' }])
      const err = await refusal(t, store, specs(w2))
      const d: SchemaDifference = {
        table: 'e_req',
        column: 'flag',
        difference: 'a new required field without a default, and the table has rows: they need a value',
        sql: [
          "-- The rows there are get 'false'::boolean: put the value they should have.",
          'ALTER TABLE "e_req" ADD COLUMN "flag" boolean NOT NULL DEFAULT \'false\'::boolean;',
          'ALTER TABLE "e_req" ALTER COLUMN "flag" DROP DEFAULT;'
        ]
      }
      t.strictSame(err.differences, [d])
      named(t, err, d)
      t.strictSame((await columnsOf(store, 'e_req')).map(c => c.name).filter(n => ['flag', 'note'].includes(n)), [], 'nothing changed: not even the nullable field')
    })

    t.test('refused, each with its message and SQL, all in one error, nothing changed', async t => {
      const parent = def('e_parent', { title: Type.String() })
      const v1 = def('e_many', {
        title: Type.String(),
        note: Nullable(Type.String()),
        count: Type.Integer(),
        status: UpperSnakeEnum(['A', 'B', 'C']),
        code: Type.String(),
        label: Type.String(),
        parentId: Type.String()
      }, { unique: ['code'], references: [{ field: 'parentId', resource: parent }], filterable: ['title'], sortable: ['title'], indexes: [['title']] })
      const v2 = def('e_many', {
        name: Type.String(),
        count: Int64(),
        status: UpperSnakeEnum(['A', 'B']),
        code: Type.String(),
        label: Nullable(Type.String()),
        parentId: Type.String(),
        // Not text, or the dropped note would be taken for its old name.
        extra: Nullable(Type.Integer())
      }, { unique: ['label'], filterable: ['name'], sortable: ['name'], indexes: [['name']] })
      await evolveTables(store, specs(parent, v1))
      const [p] = await insert(store, 'e_parent', [{ title: 'p' }])
      await insert(store, 'e_many', [{ title: 't', note: 'n', count: 1, status: 'C', code: 'c', label: 'l', parentId: p }])
      const err = await refusal(t, store, specs(parent, v2))
      const expected: SchemaDifference[] = [
        {
          table: 'e_many',
          column: 'title',
          difference: 'in the table but not in the definition, which has a new field "name" of the same type: if the field was renamed, this renames the column (if it was dropped instead: ALTER TABLE "e_many" DROP COLUMN "title";)',
          sql: ['ALTER TABLE "e_many" RENAME COLUMN "title" TO "name";', 'ALTER INDEX "e_many_by_title" RENAME TO "e_many_by_name";']
        },
        {
          table: 'e_many',
          column: 'note',
          difference: 'in the table but not in the definition: a field dropped (this drops the column and its values) or renamed (rename the column instead)',
          sql: ['ALTER TABLE "e_many" DROP COLUMN "note";']
        },
        {
          table: 'e_many',
          column: 'count',
          difference: 'type integer in the table, bigint in the definition: this converts the values (check that the cast fits them)',
          sql: ['ALTER TABLE "e_many" ALTER COLUMN "count" TYPE bigint USING "count"::bigint;']
        },
        {
          table: 'e_many',
          column: 'label',
          difference: 'NOT NULL in the table, nullable in the definition',
          sql: ['ALTER TABLE "e_many" ALTER COLUMN "label" DROP NOT NULL;']
        },
        {
          table: 'e_many',
          column: 'status',
          difference: "values 'C' allowed in the table, not in the definition: rows holding them need another",
          sql: [
            "-- Rows holding a removed value get 'A': put the value they should have.",
            'UPDATE "e_many" SET "status" = \'A\' WHERE "status" IN (\'C\');',
            'ALTER TABLE "e_many" DROP CONSTRAINT "e_many_status_check", ADD CONSTRAINT "e_many_status_check" CHECK ("status" IN (\'A\', \'B\'));'
          ]
        },
        {
          table: 'e_many',
          column: 'code',
          difference: 'unique in the table, not in the definition',
          sql: ['ALTER TABLE "e_many" DROP CONSTRAINT "e_many_code_key";']
        },
        {
          table: 'e_many',
          column: 'parentId',
          difference: 'references "e_parent" in the table, nothing in the definition',
          sql: ['ALTER TABLE "e_many" DROP CONSTRAINT "e_many_parentId_fkey";']
        }
      ]
      t.strictSame(err.differences, expected)
      for (const d of expected) named(t, err, d)
      t.match(err.message, /^The tables differ from the resource definitions in ways the service does not change by itself, so it did not start and changed nothing:\n/)
      t.match(err.message, /\nPut the SQL that fits in a migration file \(`svc-conventions migrate new <name>` writes one with it, docs\/migrations\.md\), or change the definitions back\.$/)
      t.equal(err.code, 'STORE_SCHEMA_MISMATCH')
      t.notOk((await columnsOf(store, 'e_many')).some(c => c.name === 'extra'), 'the nullable field that came with them was not added')
      t.notOk((await indexesOf(store, 'e_many')).includes('e_many_label_key'))
    })

    t.test('constraints the definition adds: applied where the rows meet them, refused where they break them', async t => {
      const parent = def('e_cparent', { title: Type.String() })
      const loose = { title: Nullable(Type.String()), kind: Nullable(Type.String()), parentId: Nullable(Type.String()) }
      const strict = {
        title: Type.String({ default: 'untitled' }),
        kind: Nullable(UpperSnakeEnum(['X', 'Y'])),
        parentId: Nullable(Type.String())
      }
      const opts: Options = { unique: ['title'], references: [{ field: 'parentId', resource: parent }] }
      await evolveTables(store, specs(parent, def('e_fine', loose), def('e_broken', loose)))
      const [p] = await insert(store, 'e_cparent', [{ title: 'p' }])
      await insert(store, 'e_fine', [{ title: 'a', kind: 'X', parentId: p }, { title: null, kind: null, parentId: null }])
      await insert(store, 'e_broken', [{ title: 'a', kind: 'Z', parentId: 'nobody' }, { title: 'a', kind: null, parentId: null }])

      t.strictSame((await evolveTables(store, specs(parent, def('e_fine', strict, opts)))).map(c => c.change), [
        'made "title" required, its default in the rows without a value',
        'added the check of the values of "kind"',
        'added the unique set of "title"',
        'added the reference of "parentId" to "e_cparent"',
        'created index "e_fine_parentId_idx"'
      ])
      t.strictSame((await store.query('SELECT title FROM e_fine ORDER BY title')).rows, [{ title: 'a' }, { title: 'untitled' }])
      t.strictSame(await evolveTables(store, specs(parent, def('e_fine', strict, opts))), [], 'then nothing more: the reference\'s lookup index compares equal')

      const required = def('e_broken', { ...strict, title: Type.String() }, opts)
      const err = await refusal(t, store, specs(parent, required))
      t.strictSame(err.differences.map(d => [d.column, d.difference]), [
        ['kind', "allowed values 'X', 'Y' in the definition, but rows of the table hold others"],
        ['title', 'unique in the definition, but rows of the table share values'],
        ['parentId', 'references "e_cparent" in the definition, but rows of the table hold ids "e_cparent" does not have']
      ])
      t.strictSame(err.differences.map(d => d.sql.at(-1)), [
        'ALTER TABLE "e_broken" ADD CONSTRAINT "e_broken_kind_check" CHECK ("kind" IN (\'X\', \'Y\'));',
        'ALTER TABLE "e_broken" ADD CONSTRAINT "e_broken_title_key" UNIQUE (ctx, "title");',
        'ALTER TABLE "e_broken" ADD CONSTRAINT "e_broken_parentId_fkey" FOREIGN KEY (ctx, "parentId") REFERENCES "e_cparent" (ctx, id);'
      ])
      t.match(err.differences[1]?.sql[0], /^-- The values held twice: SELECT ctx, "title", count\(\*\) FROM "e_broken" GROUP BY 1, 2 HAVING count\(\*\) > 1;$/)

      await store.exec("UPDATE e_broken SET title = NULL WHERE kind IS NULL; UPDATE e_broken SET kind = 'X', \"parentId\" = NULL")
      const nulls = await refusal(t, store, specs(parent, required))
      t.strictSame(nulls.differences, [{
        table: 'e_broken',
        column: 'title',
        difference: 'required in the definition, but rows of the table have no value',
        sql: [
          "-- Rows without a value get ''::text: put the value they should have.",
          'UPDATE "e_broken" SET "title" = \'\'::text WHERE "title" IS NULL;',
          'ALTER TABLE "e_broken" ALTER COLUMN "title" SET NOT NULL;'
        ]
      }])
      await store.exec("UPDATE e_broken SET title = 'b' WHERE title IS NULL")
      t.equal((await evolveTables(store, specs(parent, required))).length, 5, 'fixed, it applies')
    })

    t.test('enum values added: the check is replaced and takes them', async t => {
      await evolveTables(store, specs(def('e_enum', { status: UpperSnakeEnum(['A', 'B']) })))
      await insert(store, 'e_enum', [{ status: 'A' }])
      t.strictSame(await evolveTables(store, specs(def('e_enum', { status: UpperSnakeEnum(['B', 'A', 'C']) }))), [{ table: 'e_enum', change: 'added \'C\' to the values of "status"' }])
      await insert(store, 'e_enum', [{ status: 'C' }])
      t.strictSame(await evolveTables(store, specs(def('e_enum', { status: UpperSnakeEnum(['A', 'B', 'C']) }))), [], 'the order of the values is no difference')
    })

    t.test('a unique set as a partial unique index: the constraint narrowed by itself, named alike, not widened back', async t => {
      const fields = { title: Type.String(), archivedDateTime: Nullable(DateTime()) }
      const full = def('e_soft', fields, { unique: ['title'] })
      const partial: TableSpec = { ...full.storage.spec, uniqueWhere: '"archivedDateTime" IS NULL' }
      await evolveTables(store, specs(full))
      await insert(store, 'e_soft', [{ title: 'a', archivedDateTime: '2024-01-01T00:00:00Z' }])
      t.strictSame(await evolveTables(store, [partial]), [{ table: 'e_soft', change: 'the unique set of "title" holds only where "archivedDateTime" IS NULL' }])
      await insert(store, 'e_soft', [{ title: 'a', archivedDateTime: null }])
      await t.rejects(insert(store, 'e_soft', [{ title: 'a', archivedDateTime: null }]), { name: 'UniqueViolation', constraint: 'e_soft_title_key' }, 'the same name, for the same problem')
      t.strictSame(await evolveTables(store, [partial]), [], 'the predicate compares as PostgreSQL writes it')
      const err = await refusal(t, store, specs(full))
      t.strictSame(err.differences, [{
        table: 'e_soft',
        column: 'title',
        difference: 'unique over (ctx, title) WHERE ("archivedDateTime" IS NULL) in the table, over (ctx, title) in the definition',
        sql: ['DROP INDEX "e_soft_title_key";', 'ALTER TABLE "e_soft" ADD CONSTRAINT "e_soft_title_key" UNIQUE (ctx, "title");']
      }])
      // A definition of its own: index names are the table's.
      const fresh: TableSpec = { ...def('e_soft_new', fields, { unique: ['title'] }).storage.spec, uniqueWhere: '"archivedDateTime" IS NULL' }
      t.strictSame(await evolveTables(store, [fresh]), [{ table: 'e_soft_new', change: 'created' }])
      t.strictSame(await evolveTables(store, [fresh]), [], 'made so from the start')
    })

    t.test('nested JSON keys: no false difference; an index whose keys changed is rebuilt', async t => {
      const notes = def('e_nested', {
        name: Type.String(),
        metadata: Nullable(Type.Object({ source: Nullable(Type.Object({ system: Type.String() })), score: Type.Optional(Type.Integer()) }))
      }, { filterable: ['name', 'metadata.source.system', 'metadata.score'], sortable: ['metadata.source.system', 'metadata.score'], indexes: [['metadata.source.system'], ['-metadata.score', 'name']] })
      await evolveTables(store, specs(notes))
      t.strictSame(await evolveTables(store, specs(notes)), [])
      await store.exec('DROP INDEX "e_nested_by_metadata_source_system"; CREATE INDEX "e_nested_by_metadata_source_system" ON e_nested (ctx, (metadata->\'source\'->>\'system\'), id)')
      t.strictSame(await evolveTables(store, specs(notes)), [{ table: 'e_nested', change: 'rebuilt index "e_nested_by_metadata_source_system", whose keys changed' }], 'made without COLLATE "C"')
      t.strictSame(await evolveTables(store, specs(notes)), [])
    })

    t.test('a primary key that is not (ctx, id) is refused', async t => {
      const notes = def('e_pkey', { name: Type.String() })
      await evolveTables(store, specs(notes))
      await store.exec('ALTER TABLE e_pkey DROP CONSTRAINT e_pkey_pkey')
      const err = await refusal(t, store, specs(notes))
      t.strictSame(err.differences, [{ table: 'e_pkey', column: null, difference: 'no primary key (ctx, id) named "e_pkey_pkey"', sql: ['ALTER TABLE "e_pkey" ADD CONSTRAINT "e_pkey_pkey" PRIMARY KEY (ctx, id);'] }])
      t.match(err.message, '- table "e_pkey": no primary key')
    })

    t.test('constraints and indexes of one\'s own, under other names, are left alone', async t => {
      const notes = def('e_own', { name: Type.String(), size: Type.Integer() })
      await evolveTables(store, specs(notes))
      await store.exec('CREATE UNIQUE INDEX e_own_lower_name ON e_own (ctx, lower(name)); ALTER TABLE e_own ADD CONSTRAINT e_own_size_positive CHECK (size > 0); CREATE INDEX e_own_by_size ON e_own (size)')
      t.strictSame(await evolveTables(store, specs(notes)), [])
    })
  })
}

/** The DDL of the version before this one (`tableDdl` then), optionally without its collation step (older still). */
function previousTableDdl (spec: TableSpec, collation: boolean): string {
  const t = spec.table
  const T = quoteIdent(t)
  const columnDef = (c: Column): string => `${c.ident} ${c.sqlType}${c.nullable ? '' : ' NOT NULL'}`
  const literal = (v: string): string => `'${v.replaceAll("'", "''")}'`
  const defs: string[] = ['ctx text NOT NULL', ...SERVER_COLUMNS.map(columnDef), ...spec.columns.map(columnDef)]
  defs.push(`CONSTRAINT ${quoteIdent(constraintNames.primaryKey(t))} PRIMARY KEY (ctx, id)`)
  for (const f of spec.unique) defs.push(`CONSTRAINT ${quoteIdent(constraintNames.unique(t, f))} UNIQUE (ctx, ${quoteIdent(f)})`)
  for (const r of spec.references) {
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.foreignKey(t, r.field))} FOREIGN KEY (ctx, ${quoteIdent(r.field)}) REFERENCES ${quoteIdent(r.table)} (ctx, id)`)
  }
  for (const c of spec.columns) {
    if (c.enumValues === undefined) continue
    defs.push(`CONSTRAINT ${quoteIdent(constraintNames.check(t, c.field))} CHECK (${c.ident} IN (${c.enumValues.map(literal).join(', ')}))`)
  }
  const statements = [`CREATE TABLE IF NOT EXISTS ${T} (\n  ${defs.join(',\n  ')}\n)`]
  for (const c of spec.columns) statements.push(`ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS ${c.ident} ${c.sqlType}`)
  if (collation) statements.push(collationDdl(t))
  const leading = new Set(spec.indexes.map(i => (i.keys[0] as { path: string }).path))
  for (const r of spec.references) {
    if (leading.has(r.field)) continue
    statements.push(`CREATE INDEX IF NOT EXISTS ${quoteIdent(constraintNames.index(t, r.field))} ON ${T} (ctx, ${quoteIdent(r.field)})`)
  }
  for (const index of spec.indexes) statements.push(indexDdl(t, index))
  return statements.join(';\n')
}
