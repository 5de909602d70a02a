import t from 'tap'
import { Type } from '@sinclair/typebox'
import { databases } from '../support/databases.js'
import { defineResource, type ResourceDefinition } from '../../plugins/resource/define.js'
import { collationDdl } from '../../store/table/index.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'
import type { OrderingTerm } from '../../model/query.js'
import { compileSql, selectStatement } from '../../store/sql-query.js'
import { migrate } from '../../store/migrate.js'
import type { Store } from '../../store/types.js'
import { Nullable } from '../../schemas/types.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

// What the migration does to the database: text columns in the "C" collation (also on a
// table made before, converted once), and expression indexes for nested paths that the
// planner matches with the compiler's SQL.

async function collations (store: Store, table: string): Promise<Record<string, string>> {
  const { rows } = await store.query<{ name: string, collation: string }>(`SELECT attname AS name, attcollation::regcollation::text AS collation
    FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND atttypid = 'text'::regtype ORDER BY attnum`, [table])
  return Object.fromEntries(rows.map(r => [r.name, r.collation]))
}

async function fileOf (store: Store, index: string): Promise<number> {
  const { rows } = await store.query<{ file: number }>('SELECT relfilenode::integer AS file FROM pg_class WHERE oid = $1::regclass', [index])
  return (rows[0] as { file: number }).file
}

/** The plan's node types and the index scanned, with sorts and other scans made a last resort. */
async function planOf (store: Store, text: string, params: unknown[]): Promise<{ types: string[], index: string | undefined, cond: string | undefined }> {
  interface Node { 'Node Type': string, 'Index Name'?: string, 'Index Cond'?: string, Plans?: Node[] }
  const all = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(all)]
  const plan = await store.transaction(async tx => {
    await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off')
    const { rows } = await tx.query<{ 'QUERY PLAN': Array<{ Plan: Node }> }>(`EXPLAIN (FORMAT JSON) ${text}`, params)
    return (rows[0] as { 'QUERY PLAN': Array<{ Plan: Node }> })['QUERY PLAN'][0]?.Plan as Node
  })
  const nodes = all(plan)
  const scan = nodes.find(n => n['Node Type'] === 'Index Scan')
  return { types: nodes.map(n => n['Node Type']), index: scan?.['Index Name'], cond: scan?.['Index Cond'] }
}

/** The page statement of a collection (store/table/statements.ts). */
function statementOf (def: ResourceDefinition, ordering: OrderingTerm[], fiql: string | null): { text: string, params: unknown[] } {
  const fields = def.storage.fields
  const filter = fiql === null ? null : parseFilter(fiql, fields)
  const sql = compileSql({ filter, ordering, paging: { kind: 'cursor', limit: 20 } }, fields, { paramStart: 2 })
  return selectStatement(sql, { select: 't.*', from: `"${def.storage.table}" t`, where: 't.ctx = $1', params: ['prod'] })
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('tables made before get their text columns in "C" once, rows and keys intact', async t => {
      // The tables as the migration made them before the collation step.
      const before = (def: ResourceDefinition): string => (def.storage.migration.sql as string).replace(collationDdl(def.storage.table), 'SELECT 1')
      await store.exec(before(authors))
      await store.exec(before(documents))
      t.equal((await collations(store, 'documents')).id, '"default"', 'made in the database\'s collation')
      await store.exec(`INSERT INTO authors (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, email, active)
        VALUES ('prod', 'a1', '"e"', now(), now(), 'Ann', 'ann@example.com', true)`)
      await store.exec(`INSERT INTO documents (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, "authorId", status, kind, "pageCount", tags, pages)
        SELECT 'prod', 'd' || i, '"e"', now(), now(), 'doc ' || i, 'a1', 'DRAFT', 'INVOICE', i, '{}', '[]' FROM generate_series(1, 50) AS i`)
      const oldKey = await fileOf(store, 'documents_pkey')

      t.strictSame(await migrate(store, [authors.storage.migration, documents.storage.migration]), [authors.storage.migration.id, documents.storage.migration.id])
      for (const table of ['authors', 'documents']) {
        const all = await collations(store, table)
        t.strictSame(Object.entries(all).filter(([, c]) => c !== '"C"'), [], `every text column of ${table} is in "C"`)
        t.ok(Object.keys(all).includes('ctx') && Object.keys(all).includes('name'))
      }
      const newKey = await fileOf(store, 'documents_pkey')
      t.not(newKey, oldKey, 'the primary key was rebuilt in the new collation')
      const { rows } = await store.query<{ n: number }>("SELECT count(*)::integer AS n FROM documents d JOIN authors a ON a.ctx = d.ctx AND a.id = d.\"authorId\" WHERE d.ctx = 'prod'")
      t.equal(rows[0]?.n, 50, 'rows and the foreign key survive')
      const plan = await planOf(store, statementOf(documents, [{ field: 'id', direction: 'asc' }], null).text, ['prod'])
      t.strictSame([plan.types, plan.index], [['Limit', 'Index Scan'], 'documents_pkey'], 'the primary key serves the id ordering')

      await store.exec(collationDdl('documents'))
      t.equal(await fileOf(store, 'documents_pkey'), newKey, 'running it again changes nothing')
    })

    t.test('a nested path has an expression index the planner matches with the compiler\'s SQL', async t => {
      const notes = defineResource({
        name: 'note',
        collection: 'notes',
        path: '/v1/notes',
        idParam: 'noteId',
        fields: {
          name: Type.String(),
          metadata: Nullable(Type.Object({ source: Nullable(Type.Object({ system: Type.String() })), score: Type.Optional(Type.Integer()) }))
        },
        filterable: ['name', 'metadata.source.system', 'metadata.score'],
        sortable: ['metadata.source.system', 'metadata.score'],
        indexes: [['metadata.source.system'], ['-metadata.score']]
      })
      await migrate(store, [notes.storage.migration])
      await store.exec(`INSERT INTO notes (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, metadata)
        SELECT 'prod', 'n' || i, '"e"', now(), now(), 'note ' || i,
          CASE WHEN i % 10 = 0 THEN NULL ELSE jsonb_build_object('source', jsonb_build_object('system', 'sys' || (i % 7)), 'score', i % 50) END
        FROM generate_series(1, 300) AS i;
        ANALYZE notes`)
      const cases: Array<[string, OrderingTerm[], string | null, string, RegExp | null]> = [
        ['ordering by nested text', [{ field: 'metadata.source.system', direction: 'asc' }, { field: 'id', direction: 'asc' }], null, 'notes_by_metadata_source_system', null],
        ['a range of nested text', [{ field: 'metadata.source.system', direction: 'asc' }, { field: 'id', direction: 'asc' }], 'metadata.source.system=ge=sys3', 'notes_by_metadata_source_system', />= 'sys3'::text/],
        ['ordering by a nested integer, descending', [{ field: 'metadata.score', direction: 'desc' }, { field: 'id', direction: 'asc' }], null, 'notes_by_metadata_score_desc', null],
        ['a range of a nested integer', [{ field: 'metadata.score', direction: 'desc' }, { field: 'id', direction: 'asc' }], 'metadata.score=lt=10', 'notes_by_metadata_score_desc', /< 10\)/]
      ]
      for (const [name, ordering, fiql, index, cond] of cases) {
        const { text, params } = statementOf(notes, ordering, fiql)
        const plan = await planOf(store, text, params)
        t.strictSame([plan.types, plan.index], [['Limit', 'Index Scan'], index], name)
        if (cond !== null) t.match(plan.cond, cond, `${name}: a condition of the index scan`)
      }
    })
  })
}
