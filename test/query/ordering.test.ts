import t from 'tap'
import { fields } from './fixtures.js'
import { orderingKey, orderingResolver } from '../../plugins/query/ordering.js'
import { createFieldMap } from '../../model/fields.js'
import type { OrderingTerm } from '../../model/query.js'

t.test('ordering values become terms ending with the id', async (t) => {
  const resolve = orderingResolver(fields)
  const cases: Array<[string | string[] | undefined, string]> = [
    [undefined, 'id'],
    [[], 'id'],
    ['name', 'name,id'],
    [['-publishedDateTime', 'name'], '-publishedDateTime,name,id'],
    [['metadata.source.system', '-amount'], 'metadata.source.system,-amount,id'],
    [['-id'], '-id'],
    [['id', 'name'], 'id,name']
  ]
  for (const [values, expected] of cases) t.equal(orderingKey(resolve(values)), expected, JSON.stringify(values))
  t.strictSame(resolve(['-name']), [{ field: 'name', direction: 'desc' }, { field: 'id', direction: 'asc' }])
})

t.test('a default ordering applies when none is asked for, and is not shared', async (t) => {
  const resolve = orderingResolver(fields, { defaultOrdering: [{ field: 'publishedDateTime', direction: 'desc' }] })
  const first = resolve(undefined)
  t.equal(orderingKey(first), '-publishedDateTime,id')
  first.pop()
  t.equal(orderingKey(resolve([])), '-publishedDateTime,id')
  t.equal(orderingKey(resolve('name')), 'name,id')
})

t.test('refusals name the value', async (t) => {
  const resolve = orderingResolver(fields, { parameter: 'sort' })
  t.throws(() => resolve('description'), {
    reason: 'field',
    parameter: 'sort',
    value: 'description',
    message: '"description" is not an attribute to sort by; use one of id, name, status, pageCount, byteCount, amount, effectiveDate, publishedDateTime, active, flagged, metadata.source.system, metadata.score, with a leading - to sort descending.'
  })
  for (const value of ['', '-', '+name', 'nope', 'tags', '--name', ' name']) t.throws(() => resolve(value), { name: 'QueryError', reason: 'field', value }, JSON.stringify(value))
  t.throws(() => resolve(['name', '-name']), { reason: 'combination', value: '-name', message: 'name appears more than once in ordering; give each attribute once.' })
})

t.test('options are checked at setup', async (t) => {
  const noId = createFieldMap([{ path: 'name', type: 'string', sortable: true }])
  t.throws(() => orderingResolver(noId), new TypeError('ordering: idField "id" is not in the field map'))
  t.strictSame(orderingResolver(noId, { idField: 'name' })(undefined), [{ field: 'name', direction: 'asc' }])
  const bad: OrderingTerm[] = [{ field: 'nope', direction: 'asc' }, { field: 'name', direction: 'up' as 'asc' }, { field: 'tags', direction: 'asc' }]
  for (const term of bad) {
    t.throws(() => orderingResolver(fields, { defaultOrdering: [term] }),
      new TypeError(`ordering: defaultOrdering has ${JSON.stringify(term)}, which is not a sortable field with direction asc or desc`))
  }
})
