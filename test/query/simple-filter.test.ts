import t from 'tap'
import { fields } from './fixtures.js'
import { buildSimpleFilter, type SimpleParams } from '../../plugins/query/simple-filter.js'

const cmp = (field: string, op: string, values: unknown[]): object => ({ kind: 'cmp', field, op, values, ci: false })
const or = (...children: object[]): object => ({ kind: 'or', children })
const and = (...children: object[]): object => ({ kind: 'and', children })

t.test('the ten rules of simple filtering', async (t) => {
  const cases: Array<[string, SimpleParams, object | null]> = [
    ['nothing', {}, null],
    ['an absent parameter', { name: undefined }, null],
    ['1: different attributes AND', { name: 'a', status: 'DRAFT' }, and(cmp('name', 'eq', ['a']), cmp('status', 'eq', ['DRAFT']))],
    ['2: a repeated attribute ORs its values, as one in', { name: ['a', 'b'] }, cmp('name', 'in', ['a', 'b'])],
    ['2: a repeated attribute given once', { name: ['a'] }, cmp('name', 'eq', ['a'])],
    ['2: no value at all', { name: [] }, null],
    ['3: case-sensitive equality, text kept as sent', { name: 'Ab C' }, cmp('name', 'eq', ['Ab C'])],
    ['3: typed equality', { pageCount: '7', amount: '1.50', active: 'false', byteCount: '9223372036854775807' },
      and(cmp('pageCount', 'eq', [7]), cmp('amount', 'eq', ['1.50']), cmp('active', 'eq', [false]), cmp('byteCount', 'eq', ['9223372036854775807']))],
    ['4: nested names', { 'metadata.source.system': 'erp' }, cmp('metadata.source.system', 'eq', ['erp'])],
    ['5: a prefix wildcard', { name: '*ab' }, cmp('name', 'eq', [{ wildcard: ['', 'ab'] }])],
    ['5: a suffix wildcard', { 'metadata.source.system': 'er*' }, cmp('metadata.source.system', 'eq', [{ wildcard: ['er', ''] }])],
    ['5: wildcards and plain values of one attribute OR', { name: ['a', '*z', 'b'] },
      or(cmp('name', 'in', ['a', 'b']), cmp('name', 'eq', [{ wildcard: ['', 'z'] }]))],
    ['6: empty on a nullable text: null or ""', { description: '' }, or(cmp('description', 'isnull', [true]), cmp('description', 'eq', ['']))],
    ['6: empty on a non-nullable text: ""', { name: '' }, cmp('name', 'eq', [''])],
    ['6: empty on a nullable number: null', { pageCount: '' }, cmp('pageCount', 'isnull', [true])],
    ['6: null from a search body is empty', { pageCount: null }, cmp('pageCount', 'isnull', [true])],
    ['6: empty on a nullable boolean: null', { flagged: '' }, cmp('flagged', 'isnull', [true])],
    ['6: empty on a non-nullable boolean: no filtering', { active: '', name: 'a' }, cmp('name', 'eq', ['a'])],
    ['6: no filtering wins over the other values', { active: ['true', ''] }, null],
    ['6: an empty value counts once', { description: ['', '', 'x'] },
      or(cmp('description', 'eq', ['x']), cmp('description', 'isnull', [true]), cmp('description', 'eq', ['']))],
    ['6: empty on a non-nullable array: contains ""', { tags: '' }, cmp('tags', 'eq', [''])],
    ['7: an array attribute: containment', { tags: 'x' }, cmp('tags', 'eq', ['x'])],
    ['7: an array attribute repeated: contains any', { tags: ['x', 'y'] }, cmp('tags', 'in', ['x', 'y'])],
    ['5: a * inside a value is a character', { name: 'a*b' }, cmp('name', 'eq', ['a*b'])],
    ['5: the wildcard at the end, a * inside is a character', { name: '0 9 * * *' }, cmp('name', 'eq', [{ wildcard: ['0 9 * * ', ''] }])],
    ['5: the wildcard at the start, the one before it a character', { name: '**x' }, cmp('name', 'eq', [{ wildcard: ['', '*x'] }])],
    ['5: a** is a prefix ending in a star', { name: 'a**' }, cmp('name', 'eq', [{ wildcard: ['a*', ''] }])],
    ['8: commas are not lists', { name: 'a,b' }, cmp('name', 'eq', ['a,b'])],
    ['search bodies may send JSON scalars', { pageCount: 3, active: true, name: ['a', 'b'] },
      and(cmp('pageCount', 'eq', [3]), cmp('active', 'eq', [true]), cmp('name', 'in', ['a', 'b']))]
  ]
  for (const [label, params, expected] of cases) t.strictSame(buildSimpleFilter(params, fields), expected, label)
})

t.test('refusals name the parameter and the value', async (t) => {
  const cases: Array<[SimpleParams, object]> = [
    [{ nope: 'x' }, { reason: 'field', parameter: 'nope', value: 'nope', message: 'nope is not an attribute that can be filtered.' }],
    [{ 'a.b.c.d': 'x' }, { reason: 'field', parameter: 'a.b.c.d', message: 'The attribute a.b.c.d nests more than 3 levels.' }],
    [{ metadata: 'x' }, { reason: 'field', parameter: 'metadata' }],
    [{ pageCount: 'many' }, { reason: 'value', parameter: 'pageCount', value: 'many', message: 'The value of pageCount is not an integer from -2147483648 to 2147483647.' }],
    [{ status: 'draft' }, { reason: 'value', message: /one of DRAFT, PUBLISHED, ARCHIVED/ }],
    [{ pageCount: '1*' }, { reason: 'value', value: '1*', message: 'The wildcard * works only on text attributes; pageCount is an integer attribute.' }],
    [{ status: 'DR*' }, { reason: 'value', message: /status is an enumerated attribute/ }],
    [{ tags: '*x' }, { reason: 'value', message: /tags is an array attribute/ }],
    [{ name: '*x*' }, { reason: 'value', value: '*x*', message: 'The value of name may use * as a wildcard once, at its start or its end, with text beside it; use the filter parameter for other patterns.' }],
    [{ name: '**' }, { reason: 'value', value: '**' }],
    [{ name: '*' }, { reason: 'value', value: '*' }],
    [{ pageCount: '1*2' }, { reason: 'value', value: '1*2', message: 'The value of pageCount is not an integer from -2147483648 to 2147483647.' }],
    // Fuzz regression: a NUL reached PostgreSQL, which refused the statement with a 500.
    [{ name: ['ok', 'a\u0000*'] }, { reason: 'value', parameter: 'name', value: 'a\u0000*', message: 'The value of name has a NUL character (U+0000), which no attribute can hold; remove it.' }]
  ]
  for (const [params, expected] of cases) {
    t.throws(() => buildSimpleFilter(params, fields), { name: 'QueryError', code: 'INPUT_INVALID', ...expected }, JSON.stringify(params))
  }
})
