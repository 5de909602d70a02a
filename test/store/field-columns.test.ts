import t from 'tap'
import { createFieldMap } from '../../model/fields.js'
import { defaultColumn, defaultColumns } from '../../store/field-columns.js'

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
  t.same([...columns], [['id', 't."id"'], ['meta.n', '((t."meta"->>\'n\')::bigint)']])
  t.equal(defaultColumns(fields), columns, 'the same map for the same field map')
})
