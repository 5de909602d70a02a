import t from 'tap'
import { QueryError, isQueryError, toContextItem } from '../../plugins/query/errors.js'
import { isWildcard, junction, type Filter } from '../../model/query.js'

t.test('a QueryError becomes one context item naming the parameter', async (t) => {
  const err = new QueryError('syntax', 'nameFilter', 'Expected a value at position 6, found the end of the expression.', 6, 'x')
  t.ok(err instanceof Error)
  t.ok(isQueryError(err))
  t.notOk(isQueryError(new Error('x')))
  t.strictSame([err.name, err.code, err.reason, err.parameter, err.position, err.value], ['QueryError', 'INPUT_INVALID', 'syntax', 'nameFilter', 6, 'x'])
  t.strictSame(toContextItem(err), { code: 'INPUT_INVALID', message: err.message, field: 'nameFilter', source: 'query', value: 'x' })
  t.strictSame(toContextItem(new QueryError('cursor-invalid', 'paging.cursor', 'Bad.'), 'body'), { code: 'INPUT_INVALID', message: 'Bad.', field: 'paging.cursor', source: 'body' })
})

t.test('junction flattens, unwraps one child and drops empty ones', async (t) => {
  const a: Filter = { kind: 'cmp', field: 'a', op: 'eq', values: [1], ci: false }
  const b: Filter = { kind: 'cmp', field: 'b', op: 'eq', values: [{ wildcard: ['x', ''] }], ci: false }
  t.equal(junction('and', []), null)
  t.equal(junction('or', [a]), a)
  t.strictSame(junction('and', [a, { kind: 'and', children: [a, b] }, { kind: 'or', children: [a, b] }]),
    { kind: 'and', children: [a, a, b, { kind: 'or', children: [a, b] }] })
  t.ok(isWildcard({ wildcard: [] }))
  t.notOk(isWildcard('x'))
})
