import t from 'tap'
import { createFieldMap } from '../../model/fields.js'
import { defaultColumn, defaultColumns, tableColumns } from '../../store/field-columns.js'
import { compileSql } from '../../store/sql-query.js'
import type { Comparison, Filter } from '../../model/query.js'

t.test('defaultColumn follows the storage model', async (t) => {
  t.equal(defaultColumn('name', 'string'), 't."name"')
  t.equal(defaultColumn('we"ird', 'string', 'd'), 'd."we""ird"')
  t.equal(defaultColumn('metadata.source.system', 'string'), '(t."metadata"->\'source\'->>\'system\')')
  t.equal(defaultColumn('metadata.score', 'int32'), '((t."metadata"->>\'score\')::integer)')
  t.equal(defaultColumn("m.o'k", 'date-time'), '((t."m"->>\'o\'\'k\')::timestamptz)')
  t.equal(defaultColumn('m.tags', 'string-array'),
    '(CASE WHEN jsonb_typeof(t."m"->\'tags\') = \'array\' THEN ARRAY(SELECT jsonb_array_elements_text(t."m"->\'tags\')) END)')
})

t.test('defaultColumns maps every path of a field map, once per map', async (t) => {
  const fields = createFieldMap([{ path: 'id', type: 'string' }, { path: 'meta.n', type: 'int64' }])
  const columns = defaultColumns(fields)
  t.strictSame([...columns], [['id', 't."id"'], ['meta.n', '((t."meta"->>\'n\')::bigint)']])
  t.equal(defaultColumns(fields), columns, 'the same map for the same field map')
})

t.test('a ref is its prefix and a column: equality and in compare the column, every other operator the text', async (t) => {
  const fields = createFieldMap([{ path: 'id', type: 'string' }, { path: 'ref', type: 'string' }, { path: 'authorRef', type: 'string', nullable: true }, { path: 'name', type: 'string' }])
  const refs = [{ field: 'ref', prefix: "svc:o'k::", of: 'id' }, { field: 'authorRef', prefix: 'svc:author::', of: 'authorId' }, { field: 'unlisted', prefix: 'x:', of: 'x' }]
  const { columns, prefixed } = tableColumns(fields, refs)
  t.strictSame([...columns], [['id', 't."id"'], ['ref', "('svc:o''k::' || t.\"id\")"], ['authorRef', "('svc:author::' || t.\"authorId\")"], ['name', 't."name"']])
  t.strictSame([...prefixed.keys()], ['ref', 'authorRef'], 'a ref the field map does not hold is left out')
  t.equal(tableColumns(fields, refs).columns, columns, 'built once per field map and refs')
  const cmp = (op: Comparison['op'], values: Comparison['values'], field = 'ref'): Filter => ({ kind: 'cmp', field, op, values, ci: false })
  // [filter, WHERE, params]
  const rows: Array<[Filter, string, unknown[]]> = [
    [cmp('eq', ["svc:o'k::a1"]), 't."id" = $1::text', ['a1']],
    [cmp('eq', ['a1']), 'FALSE', []],
    [cmp('in', ["svc:o'k::a1", 'a2', "svc:o'k::a3"]), 't."id" = ANY($1::text[])', [['a1', 'a3']]],
    [cmp('in', ["svc:o'k::a1", 'a2']), 't."id" = $1::text', ['a1']],
    [cmp('in', ['a2']), 'FALSE', []],
    [cmp('eq', ['svc:author::b'], 'authorRef'), 't."authorId" = $1::text', ['b']],
    [cmp('ne', ["svc:o'k::a1"]), "(('svc:o''k::' || t.\"id\") IS NOT NULL AND ('svc:o''k::' || t.\"id\") <> $1::text)", ["svc:o'k::a1"]],
    [cmp('out', ['a1']), "(('svc:o''k::' || t.\"id\") IS NOT NULL AND ('svc:o''k::' || t.\"id\") <> ALL($1::text[]))", [['a1']]],
    [cmp('eq', [{ wildcard: ['svc:', ''] }]), "('svc:o''k::' || t.\"id\") COLLATE \"C\" LIKE $1 ESCAPE E'\\\\'", ['svc:%']],
    [cmp('ge', ['svc:']), "('svc:o''k::' || t.\"id\") COLLATE \"C\" >= $1::text", ['svc:']],
    [cmp('eq', ['x'], 'name'), 't."name" = $1::text', ['x']]
  ]
  const paging = { kind: 'offset', limit: 1, offset: 0, totalCount: false } as const
  for (const [filter, where, params] of rows) {
    const sql = compileSql({ filter, ordering: [{ field: 'id', direction: 'asc' }], paging }, fields, { columns, prefixed })
    t.equal(sql.where, where, JSON.stringify(filter))
    t.strictSame(sql.params, params, `${JSON.stringify(filter)}: params`)
  }
})
