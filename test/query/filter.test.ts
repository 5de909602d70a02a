import t from 'tap'
import { fields } from './fixtures.js'
import { buildHybridFilter, hybridScope } from '../../plugins/query/hybrid-filter.js'
import { buildFilter, splitFilterParams, PAGING_PARAMETERS } from '../../plugins/query/filter.js'
import { resolveFiqlLimits } from '../../plugins/query/fiql.js'

const cmp = (field: string, op: string, values: unknown[]): object => ({ kind: 'cmp', field, op, values, ci: false })
const or = (...children: object[]): object => ({ kind: 'or', children })
const and = (...children: object[]): object => ({ kind: 'and', children })

t.test('hybridScope', async (t) => {
  t.strictSame(hybridScope('pageCountFilter', fields), { selector: 'pageCount' })
  t.strictSame(hybridScope('metadataFilter', fields), { prefix: 'metadata' })
  t.strictSame(hybridScope('metadata.sourceFilter', fields), { prefix: 'metadata.source' })
  t.strictSame(hybridScope('metadata.source.systemFilter', fields), { selector: 'metadata.source.system' })
  for (const name of ['Filter', 'filter', 'nopeFilter', 'pageCount', 'metaFilter']) t.equal(hybridScope(name, fields), undefined, name)
})

t.test('hybrid filters: selectors relative to the attribute; AND across, OR when repeated', async (t) => {
  t.strictSame(buildHybridFilter({ metadataFilter: 'source.system==erp;source.region=isnull=true' }, fields),
    and(cmp('metadata.source.system', 'eq', ['erp']), cmp('metadata.source.region', 'isnull', [true])))
  t.strictSame(buildHybridFilter({ pageCountFilter: 'pageCount=ge=2', nameFilter: 'name==a*' }, fields),
    and(cmp('pageCount', 'ge', [2]), cmp('name', 'eq', [{ wildcard: ['a', ''] }])))
  t.strictSame(buildHybridFilter({ pageCountFilter: ['pageCount=lt=2', 'pageCount=gt=8'] }, fields),
    or(cmp('pageCount', 'lt', [2]), cmp('pageCount', 'gt', [8])))
  t.strictSame(buildHybridFilter({ pageCountFilter: ['pageCount=lt=2', 'pageCount=gt=8'], activeFilter: 'active==true' }, fields),
    and(or(cmp('pageCount', 'lt', [2]), cmp('pageCount', 'gt', [8])), cmp('active', 'eq', [true])))
  t.equal(buildHybridFilter({ nameFilter: undefined, pageCountFilter: [] }, fields), null)
  t.equal(buildHybridFilter({}, fields), null)

  t.throws(() => buildHybridFilter({ nopeFilter: 'x==1' }, fields),
    { reason: 'field', parameter: 'nopeFilter', message: 'nopeFilter is not the hybrid filter of an attribute that can be filtered.' })
  t.throws(() => buildHybridFilter({ pageCountFilter: 'name==x' }, fields), { name: 'QueryError', reason: 'field', parameter: 'pageCountFilter', position: 0 })
  t.throws(() => buildHybridFilter({ metadataFilter: 'source.system==erp;nope==1' }, fields), { name: 'QueryError', reason: 'field', parameter: 'metadataFilter', position: 19 })
  t.throws(() => buildHybridFilter({ metadataFilter: 'source.system==a;source.system==b' }, fields, resolveFiqlLimits({ maxComparisons: 1 })),
    { name: 'QueryError', reason: 'limit', parameter: 'metadataFilter' })
})

t.test('buildFilter joins simple, advanced and hybrid filters with AND', async (t) => {
  t.equal(buildFilter({}, fields), null)
  t.strictSame(buildFilter({ simple: { status: 'DRAFT' }, filter: 'pageCount=gt=1,active==true' }, fields),
    and(cmp('status', 'eq', ['DRAFT']), or(cmp('pageCount', 'gt', [1]), cmp('active', 'eq', [true]))))
  t.strictSame(buildFilter({ filter: ['name==a;pageCount==1'] }, fields), and(cmp('name', 'eq', ['a']), cmp('pageCount', 'eq', [1])))
  t.strictSame(buildFilter({ simple: { status: 'DRAFT' }, hybrid: { nameFilter: 'name==a' } }, fields),
    and(cmp('status', 'eq', ['DRAFT']), cmp('name', 'eq', ['a'])))
  t.strictSame(buildFilter({ filter: 'name==a', hybrid: { nameFilter: undefined } }, fields), cmp('name', 'eq', ['a']))
  t.throws(() => buildFilter({ filter: 'name==a' }, fields, resolveFiqlLimits({ maxLength: 3 })), { name: 'QueryError', reason: 'limit', parameter: 'filter' })

  t.throws(() => buildFilter({ filter: ['name==a', 'name==b'] }, fields),
    { reason: 'combination', parameter: 'filter', message: 'The filter parameter may appear once; join expressions with ";" (and) or "," (or).' })
  t.throws(() => buildFilter({ filter: 'name==a', hybrid: { pageCountFilter: 'pageCount==1' } }, fields),
    { reason: 'combination', parameter: 'filter', message: 'filter cannot be used together with the hybrid filter pageCountFilter; use one or the other.' })
})

t.test('splitFilterParams sorts a query string or a search body', async (t) => {
  t.strictSame(PAGING_PARAMETERS, ['limit', 'offset', 'cursor', 'ordering', 'totalCount'])
  t.strictSame(splitFilterParams({
    limit: '5', ordering: ['-name'], cursor: 'abc', name: ['a', 'b'], 'metadata.source.system': 'erp', pageCountFilter: 'pageCount=ge=2', filter: 'x==1', empty: undefined
  }, fields), {
    simple: { name: ['a', 'b'], 'metadata.source.system': 'erp' },
    hybrid: { pageCountFilter: 'pageCount=ge=2' },
    filter: 'x==1'
  })
  t.strictSame(splitFilterParams({ paging: { limit: 1 }, pageCount: 3, active: null, tags: ['x', 'y'] }, fields, ['paging']), {
    simple: { pageCount: 3, active: null, tags: ['x', 'y'] }, hybrid: {}
  })
  const cases: Array<[Record<string, unknown>, object]> = [
    [{ nope: 'x' }, { reason: 'field', parameter: 'nope', message: /nope is not a parameter of this collection/ }],
    [{ filter: 3 }, { reason: 'value', parameter: 'filter', message: 'filter must be a FIQL expression.' }],
    [{ filter: ['a==1', 2] }, { reason: 'value', parameter: 'filter' }],
    [{ nameFilter: { a: 1 } }, { reason: 'value', parameter: 'nameFilter', message: 'nameFilter must be a FIQL expression.' }],
    [{ name: { a: 1 } }, { reason: 'value', parameter: 'name', message: 'name must be a value or a list of values.' }],
    [{ name: ['a', ['b']] }, { reason: 'value', parameter: 'name' }]
  ]
  for (const [params, expected] of cases) t.throws(() => splitFilterParams(params, fields), { name: 'QueryError', ...expected }, JSON.stringify(params))
})
