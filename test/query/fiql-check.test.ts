import t from 'tap'
import { fields } from './fixtures.js'
import { checkFiql, parseFilter } from '../../plugins/query/fiql-check.js'
import { parseFiql, resolveFiqlLimits } from '../../plugins/query/fiql.js'
import { createFieldMap } from '../../model/fields.js'

const cmp = (field: string, op: string, values: unknown[], ci = false): object => ({ kind: 'cmp', field, op, values, ci })

t.test('comparisons are typed by the field map', async (t) => {
  const cases: Array<[string, object]> = [
    ['name==abc', cmp('name', 'eq', ['abc'])],
    ['name==a*b', cmp('name', 'eq', [{ wildcard: ['a', 'b'] }])],
    ['name!=*x', cmp('name', 'ne', [{ wildcard: ['', 'x'] }])],
    ['name==\\*', cmp('name', 'eq', ['*'])],
    ['name==""', cmp('name', 'eq', [''])],
    ['name=lt=b', cmp('name', 'lt', ['b'])],
    ['name=startswith=ab', cmp('name', 'startswith', ['ab'])],
    ['name=endswithic=AB', cmp('name', 'endswith', ['AB'], true)],
    ['name=like=a*b*', cmp('name', 'like', [{ wildcard: ['a', 'b', ''] }])],
    ['name=like=abc', cmp('name', 'like', [{ wildcard: ['abc'] }])],
    ['name=notlikeic=*x', cmp('name', 'notlike', [{ wildcard: ['', 'x'] }], true)],
    ['metadata.source.system=containsic=ERP', cmp('metadata.source.system', 'contains', ['ERP'], true)],
    ['pageCount=ge=2', cmp('pageCount', 'ge', [2])],
    ['pageCount=in=(1,-2)', cmp('pageCount', 'in', [1, -2])],
    ['pageCount=isnull=false', cmp('pageCount', 'isnull', [false])],
    ['byteCount=lt=9223372036854775807', cmp('byteCount', 'lt', ['9223372036854775807'])],
    ['amount=gt=10.25', cmp('amount', 'gt', ['10.25'])],
    ['effectiveDate=le=2024-02-29', cmp('effectiveDate', 'le', ['2024-02-29'])],
    ['publishedDateTime=ge=2024-01-01T00:00:00Z', cmp('publishedDateTime', 'ge', ['2024-01-01T00:00:00Z'])],
    ['active==true', cmp('active', 'eq', [true])],
    ['active=lt=true', cmp('active', 'lt', [true])],
    ['status==DRAFT', cmp('status', 'eq', ['DRAFT'])],
    ['status=out=(DRAFT,ARCHIVED)', cmp('status', 'out', ['DRAFT', 'ARCHIVED'])],
    ['tags==x', cmp('tags', 'eq', ['x'])],
    ['tags!=x', cmp('tags', 'ne', ['x'])],
    ['tags=in=(a,b)', cmp('tags', 'in', ['a', 'b'])],
    ['tags=out=x', cmp('tags', 'out', ['x'])],
    ['tags=isnull=true', cmp('tags', 'isnull', [true])],
    ['description=isnull=true', cmp('description', 'isnull', [true])],
    ['name==a;pageCount==1,active==false', {
      kind: 'or',
      children: [{ kind: 'and', children: [cmp('name', 'eq', ['a']), cmp('pageCount', 'eq', [1])] }, cmp('active', 'eq', [false])]
    }]
  ]
  for (const [input, expected] of cases) t.strictSame(parseFilter(input, fields), expected, input)
})

t.test('hybrid scopes: paths inside an object, or the one selector of a scalar', async (t) => {
  t.strictSame(parseFilter('source.system==erp;source.region=isnull=true', fields, { prefix: 'metadata', parameter: 'metadataFilter' }), {
    kind: 'and', children: [cmp('metadata.source.system', 'eq', ['erp']), cmp('metadata.source.region', 'isnull', [true])]
  })
  t.strictSame(parseFilter('pageCount=ge=2', fields, { selector: 'pageCount', parameter: 'pageCountFilter' }), cmp('pageCount', 'ge', [2]))
  t.strictSame(checkFiql(parseFiql('score==3'), fields, { prefix: 'metadata' }), cmp('metadata.score', 'eq', [3]))
})

t.test('typing errors name the parameter, the position and the value', async (t) => {
  const hidden = createFieldMap([{ path: 'id', type: 'string' }, { path: 'secret', type: 'string', filterable: false }])
  const cases: Array<[string, object, object]> = [
    ['nope==1', {}, { reason: 'field', position: 0, value: 'nope', message: /^Unknown attribute "nope" at position 0; filterable attributes are id, name, description, status,/ }],
    ['a.b.c.d==1', {}, { reason: 'field', position: 0, message: /"a.b.c.d" at position 0 nests more than 3 levels/ }],
    ['1abc==x', {}, { reason: 'field', message: /Unknown attribute "1abc"/ }],
    ['name==x;pageCount=contains=1', {}, { reason: 'operator', position: 17, value: '=contains=', message: 'The operator =contains= at position 17 applies to text attributes only; pageCount is an integer attribute.' }],
    ['status=like=D*', {}, { reason: 'operator', message: /status is an enumerated attribute/ }],
    ['tags=lt=x', {}, { reason: 'operator', position: 4, message: /does not apply to the array attribute tags; use ==, !=, =in=, =out= or =isnull=/ }],
    ['tags=contains=x', {}, { reason: 'operator', message: /tags is an array attribute/ }],
    ['name==(a,b)', {}, { reason: 'operator', position: 4, message: /A list of values is allowed only with =in= and =out=, not with ==/ }],
    ['pageCount==1*', {}, { reason: 'value', position: 12, value: '*', message: /The wildcard \* at position 12 works only with ==, != and =like= on text attributes; write \\\* for a literal star/ }],
    ['name=contains=a*', {}, { reason: 'value', position: 15 }],
    ['tags==a*', {}, { reason: 'value', position: 7 }],
    ['name=isnull=*', {}, { reason: 'value', position: 12 }],
    ['pageCount==x', {}, { reason: 'value', position: 11, value: 'x', message: 'The value "x" at position 11 is not an integer from -2147483648 to 2147483647, as pageCount == needs.' }],
    ['pageCount=in=(1,x)', {}, { reason: 'value', position: 16, value: 'x' }],
    ['description=isnull=yes', {}, { reason: 'value', message: /"yes" at position 19 is not true or false/ }],
    ['status==draft', {}, { reason: 'value', message: /is not one of DRAFT, PUBLISHED, ARCHIVED/ }],
    ['publishedDateTime=gt=2024-01-01', {}, { reason: 'value', message: /UTC date-time/ }],
    ['name==x', { selector: 'pageCount', parameter: 'pageCountFilter' }, { reason: 'field', parameter: 'pageCountFilter', value: 'name', message: 'The selector at position 0 must be pageCount, the attribute of pageCountFilter.' }],
    ['nope==x', { prefix: 'metadata', parameter: 'metadataFilter' }, { reason: 'field', parameter: 'metadataFilter', message: /filterable attributes are source.system, source.region, score\.$/ }],
    ['source.system.deep==x', { prefix: 'metadata' }, { reason: 'field', message: /nests more than 3 levels/ }]
  ]
  for (const [input, options, expected] of cases) {
    t.throws(() => parseFilter(input, fields, options), { name: 'QueryError', code: 'INPUT_INVALID', parameter: 'filter', ...expected }, input)
  }
  t.throws(() => parseFilter('secret==x', hidden), { reason: 'field', message: /filterable attributes are id\.$/ }, 'a field that is not filterable is unknown')
})

t.test('parseFilter applies the limits it is given', async (t) => {
  t.throws(() => parseFilter('name==a;name==b', fields, { limits: resolveFiqlLimits({ maxComparisons: 1 }), parameter: 'nameFilter' }),
    { name: 'QueryError', reason: 'limit', parameter: 'nameFilter' })
})

t.test('a field without a meaningful order (a duration) takes equality and text operators, never a range', async (t) => {
  const map = createFieldMap([{ path: 'id', type: 'string' }, { path: 'keep', type: 'string', ordered: false }])
  for (const op of ['=lt=', '=le=', '=gt=', '=ge=']) {
    t.throws(() => parseFilter(`keep${op}P2D`, map), {
      reason: 'operator',
      position: 4,
      value: op,
      message: `The operator ${op} at position 4 needs an order, and keep has none (its values compare as equal or not); use ==, !=, =in=, =out= or a text operator.`
    }, op)
  }
  t.strictSame(parseFilter('keep==P1Y', map), cmp('keep', 'eq', ['P1Y']))
  t.strictSame(parseFilter('keep=in=(P1Y,P2D)', map), cmp('keep', 'in', ['P1Y', 'P2D']))
  t.strictSame(parseFilter('keep=startswith=PT', map), cmp('keep', 'startswith', ['PT']))
})
