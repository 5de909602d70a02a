import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource, type ResourceOptions } from '../../plugins/resource/define.js'
import { collationDdl, constraintNames, tableDdl } from '../../store/table/index.js'
import { Int32, Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

// The `indexes` option of defineResource: checked at definition time, resolved to the SQL
// the query compiler uses for each key, and created by the table's migration.

const fields = {
  name: Type.String(),
  kind: UpperSnakeEnum(['A', 'B']),
  pageCount: Int32({ minimum: 0, maximum: 10, default: 0 }),
  tags: Type.Array(Type.String(), { default: [] }),
  authorId: Type.String(),
  metadata: Nullable(Type.Object({
    source: Nullable(Type.Object({ system: Type.String() })),
    score: Type.Optional(Type.Integer())
  }))
}

const base: ResourceOptions<typeof fields> = {
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields,
  references: [{ field: 'authorId', resource: authors, ref: 'authorRef' }],
  filterable: ['name', 'kind', 'pageCount', 'tags', 'authorId', 'createdDateTime', 'metadata.source.system'],
  sortable: ['name', 'pageCount', 'createdDateTime', 'metadata.score']
}

t.test('indexes that cannot work are refused at definition time, naming the option', async t => {
  const table: Array<[string, unknown, RegExp]> = [
    ['not a list', 'name', /^defineResource: indexes must be an array of indexes, each a non-empty list of field paths or \{ fields: \[\.\.\.\] \}, got "name"$/],
    ['an empty index', [[]], /indexes must be an array of indexes.*, got \[\]$/],
    ['a field that is not a string', [['name', 1]], /indexes must be an array of indexes.*, got \["name",1\]$/],
    ['an object without fields', [{ field: ['name'] }], /indexes must be an array of indexes.*, got \{"field":\["name"\]\}$/],
    ['a bare string', ['name'], /indexes must be an array of indexes.*, got "name"$/],
    ['a field twice', [['name', '-name']], /indexes must be indexes naming each field once, got \["name","-name"\]$/],
    ['the id', [['-id']], /indexes must be fields other than the id, which ends every index, got "id"$/],
    ['a field no query uses', [['pageCount'], ['metadata.score', 'kind'], ['nope']], /indexes must be filterable or sortable fields \(name, kind, .*metadata\.score\), with a leading - for descending, got "nope"$/],
    ['an array', [['kind', 'tags']], /indexes must be fields that are not arrays \(a btree index does not serve array operators\), got "tags"$/],
    ['the same index twice', [['name'], { fields: ['name'] }], /indexes must be distinct indexes, got "notes_by_name"$/]
  ]
  for (const [name, indexes, message] of table) {
    t.throws(() => defineResource({ ...base, indexes } as never), { name: 'TypeError', message }, name)
  }
  t.throws(() => defineResource({ ...base, filterable: [...(base.filterable ?? []), 'authorRef'], indexes: [['authorRef']] }), {
    name: 'TypeError', message: /^defineResource: indexes must name stored fields of the collection items: fieldsFromSchema: queryable\(\) is false for "authorRef"/
  }, 'a computed field')
  const omitted = { ...base, summary: { omit: ['metadata'] as Array<'metadata'> }, indexes: [['metadata.source.system']] }
  t.throws(() => defineResource(omitted), { name: 'TypeError', message: /indexes must name stored fields of the collection items: fieldsFromSchema: filterable lists "metadata\.source\.system"/ },
    'a field left out of collection items serves no collection query')
  t.strictSame(defineResource({ ...base, defaultOrdering: [] }).storage.spec.indexes, [], 'none declared, and the default ordering by id alone: none')
})

t.test('the default ordering: creation order, its index, configurable per resource', async t => {
  const byCreation = { name: 'notes_by_createdDateTime', keys: [{ path: 'createdDateTime', sql: '"createdDateTime"', descending: false }] }
  const plain = defineResource(base)
  t.strictSame(plain.storage.defaultOrdering, [{ field: 'createdDateTime', direction: 'asc' }], 'creation order by default')
  t.strictSame(plain.storage.spec.indexes, [byCreation], 'served by (ctx, createdDateTime, id)')
  t.match(plain.storage.migration.sql as string, 'CREATE INDEX IF NOT EXISTS "notes_by_createdDateTime" ON "notes" (ctx, "createdDateTime", id)')
  t.strictSame(defineResource({ ...base, indexes: [['createdDateTime']] }).storage.spec.indexes, [byCreation], 'a declared index that is the same one is not made twice')

  const bare = defineResource({ ...base, sortable: [] })
  t.strictSame(bare.api.sortable, ['createdDateTime'], 'its fields become sortable, so a client may ask for the same order')
  t.equal(bare.storage.fields.get('createdDateTime')?.sortable, true)

  const newest = defineResource({ ...base, defaultOrdering: ['-pageCount', 'name'] })
  t.strictSame(newest.storage.defaultOrdering, [{ field: 'pageCount', direction: 'desc' }, { field: 'name', direction: 'asc' }])
  t.strictSame(newest.storage.spec.indexes.map(i => i.name), ['notes_by_pageCount_desc_name'])
  t.strictSame(defineResource({ ...base, defaultOrdering: [] }).storage.defaultOrdering, [], '[]: the id alone')

  const bad: Array<[string, unknown, RegExp]> = [
    ['not a list', 'name', /^defineResource: defaultOrdering must be an array of field names, got "name"$/],
    ['the id', ['id'], /^defineResource: defaultOrdering must be fields other than the id, which ends every index, got "id"$/],
    ['an array field', ['tags'], /^defineResource: defaultOrdering must be fields that are not arrays/],
    ['a computed field', ['authorRef'], /^defineResource: defaultOrdering must name stored fields of the collection items/],
    ['a field twice', ['name', '-name'], /^defineResource: defaultOrdering must be indexes naming each field once/]
  ]
  for (const [name, defaultOrdering, message] of bad) t.throws(() => defineResource({ ...base, defaultOrdering } as never), { name: 'TypeError', message }, name)
})

t.test('each key gets the SQL the query compiler orders and compares by', async t => {
  const notes = defineResource({
    ...base,
    indexes: [['kind', '-pageCount'], { fields: ['metadata.source.system'] }, ['-metadata.score', 'createdDateTime'], ['name']]
  })
  t.strictSame(notes.storage.spec.indexes, [
    {
      name: 'notes_by_kind_pageCount_desc',
      keys: [{ path: 'kind', sql: '"kind"', descending: false }, { path: 'pageCount', sql: '"pageCount"', descending: true }]
    },
    {
      name: 'notes_by_metadata_source_system',
      // Nested text is an expression of the default collation: the index takes the compiler's COLLATE "C".
      keys: [{ path: 'metadata.source.system', sql: '("notes"."metadata"->\'source\'->>\'system\') COLLATE "C"', descending: false }]
    },
    {
      name: 'notes_by_metadata_score_desc_createdDateTime',
      keys: [
        { path: 'metadata.score', sql: '(("notes"."metadata"->>\'score\')::integer)', descending: true },
        { path: 'createdDateTime', sql: '"createdDateTime"', descending: false }
      ]
    },
    { name: 'notes_by_name', keys: [{ path: 'name', sql: '"name"', descending: false }] },
    // The default ordering's, added by itself.
    { name: 'notes_by_createdDateTime', keys: [{ path: 'createdDateTime', sql: '"createdDateTime"', descending: false }] }
  ])
  const ddl = notes.storage.migration.sql as string
  t.match(ddl, 'CREATE INDEX IF NOT EXISTS "notes_by_kind_pageCount_desc" ON "notes" (ctx, "kind", "pageCount" DESC, id)')
  t.match(ddl, 'CREATE INDEX IF NOT EXISTS "notes_by_metadata_source_system" ON "notes" (ctx, ("notes"."metadata"->\'source\'->>\'system\') COLLATE "C", id)')
  t.match(ddl, 'ON "notes" (ctx, (("notes"."metadata"->>\'score\')::integer) DESC, "createdDateTime", id)')
  t.match(ddl, 'CREATE INDEX IF NOT EXISTS "notes_authorId_idx" ON "notes" (ctx, "authorId")', 'no declared index leads with authorId: the foreign key gets its own')
  t.ok(ddl.indexOf(collationDdl('notes')) < ddl.indexOf('CREATE INDEX'), 'text columns are in "C" before any index is built on them')
  t.not(notes.storage.migration.id, defineResource(base).storage.migration.id, 'declaring an index changes the migration id, so the DDL runs again')
  t.equal(defineResource({ ...base, indexes: [['kind', '-pageCount']] }).storage.migration.id, defineResource({ ...base, indexes: [{ fields: ['kind', '-pageCount'] }] }).storage.migration.id,
    'the two spellings are one index')
})

t.test('an index leading with a reference serves its foreign key', async t => {
  const notes = defineResource({ ...base, indexes: [['authorId']] })
  const ddl = notes.storage.migration.sql as string
  t.match(ddl, 'CREATE INDEX IF NOT EXISTS "notes_by_authorId" ON "notes" (ctx, "authorId", id)')
  t.notMatch(ddl, 'notes_authorId_idx')
  t.match(defineResource({ ...base, indexes: [['name', 'authorId']] }).storage.migration.sql as string, 'notes_authorId_idx', 'only an index that leads with it')
})

t.test('index names are deterministic and fit PostgreSQL\'s 63 bytes', async t => {
  const key = (path: string, descending = false): { path: string, sql: string, descending: boolean } => ({ path, sql: '', descending })
  t.equal(constraintNames.queryIndex('documents', [key('metadata.source.system'), key('pageCount', true)]), 'documents_by_metadata_source_system_pageCount_desc')
  const long = 'a_table_name_of_forty_characters_exactly'
  const a = constraintNames.queryIndex(long, [key('metadata.source.system'), key('createdDateTime', true)])
  const b = constraintNames.queryIndex(long, [key('metadata.source.system'), key('createdDateTime')])
  t.equal(a.length, 63)
  t.match(a, /^a_table_name_of_forty_characters_exactly_by_metadata_s_[0-9a-f]{8}$/)
  t.not(a, b, 'names cut short stay distinct')
  t.equal(constraintNames.queryIndex(long, [key('metadata.source.system'), key('createdDateTime', true)]), a)
})

t.test('the collation step only touches text columns not yet in "C"', async t => {
  const sql = collationDdl('notes')
  t.match(sql, /^DO \$collation\$/)
  t.match(sql, 'attrelid = \'"notes"\'::regclass')
  t.match(sql, 'atttypid = \'text\'::regtype AND attcollation <> \'"C"\'::regcollation')
  t.match(sql, 'EXECUTE \'ALTER TABLE \' || \'"notes"\' || \' \' || changes')
  const ddl = tableDdl({ table: 'x', columns: [], unique: [], references: [] })
  t.match(ddl, collationDdl('x'), 'every table gets it')
})

t.test('the reference resources declare their query indexes', async t => {
  t.strictSame(documents.storage.spec.indexes.map(i => i.name), [
    'documents_by_authorId_createdDateTime', 'documents_by_name', 'documents_by_pageCount', 'documents_by_status_createdDateTime',
    'documents_by_createdDateTime_desc', 'documents_by_kind_pageCount_desc', 'documents_by_createdDateTime'
  ])
  t.notMatch(documents.storage.migration.sql as string, 'documents_authorId_idx', 'documents_by_authorId_createdDateTime serves the foreign key')
  t.strictSame(authors.storage.spec.indexes.map(i => i.name), ['authors_by_name', 'authors_by_createdDateTime'])
})
