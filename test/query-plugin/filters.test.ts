import t from 'tap'
import { build, docs, faults, get, PATH, type Doc } from './helper.js'
import { createFieldMap } from '../../model/fields.js'

const ids = (body: { results: Doc[] }): string[] => body.results.map((d) => d.id)
const where = (test: (d: Doc) => boolean): string[] => docs.filter(test).map((d) => d.id)

t.test('simple, advanced and hybrid filters select the matching items', async (t) => {
  const app = await build(t)
  const table: Array<[string, string[]]> = [
    ['status=DRAFT', where((d) => d.status === 'DRAFT')],
    ['status=DRAFT&status=ARCHIVED', where((d) => d.status !== 'PUBLISHED')],
    ['status=DRAFT&active=true', where((d) => d.status === 'DRAFT' && d.active)],
    ['name=Doc+H', where((d) => d.name === 'Doc H')],
    ['name=Doc%20H*', where((d) => d.name.startsWith('Doc H'))],
    ['description', where((d) => d.description === null)],
    ['tags=a', where((d) => d.tags.includes('a'))],
    ['metadata.source.system=erp', where((d) => d.metadata?.source?.system === 'erp')],
    [`filter=${encodeURIComponent('pageCount=ge=10;tags==c')}`, where((d) => d.pageCount !== null && d.pageCount >= 10 && d.tags.includes('c'))],
    [`metadataFilter=${encodeURIComponent('source.system==erp;source.region=isnull=true')}`, where((d) => d.metadata?.source?.system === 'erp' && d.metadata.source.region === null)],
    [`pageCountFilter=${encodeURIComponent('pageCount=lt=5')}&pageCountFilter=${encodeURIComponent('pageCount=gt=15')}`, where((d) => d.pageCount !== null && (d.pageCount < 5 || d.pageCount > 15))],
    [`metadata.sourceFilter=${encodeURIComponent('system==crm')}&status=PUBLISHED`, where((d) => d.metadata?.source?.system === 'crm' && d.status === 'PUBLISHED')]
  ]
  for (const [query, expected] of table) {
    const res = await get(app, `${PATH}?limit=100&${query}`)
    t.equal(res.status, 200, query)
    t.strictSame(ids(res.body), expected, query)
  }
})

t.test('every bad filter and ordering value has an item of its own, not only the first', async (t) => {
  const app = await build(t)
  const cases: Array<[string, string[]]> = [
    ['pageCount=abc&status=bad', ['pageCount', 'status']],
    ['pageCount=abc&status=DRAFT', ['pageCount']],
    [`pageCountFilter=${encodeURIComponent('pageCount=xx=1')}&status=bad`, ['pageCountFilter', 'status']],
    ['ordering=bogus&ordering=alsobogus', ['ordering', 'ordering']],
    ['ordering=bogus&ordering=name', ['ordering']],
    ['pageCount=abc&ordering=bogus&limit=0', ['limit', 'pageCount', 'ordering']],
    // Each is fine alone; together they are one fault, still listed.
    [`filter=${encodeURIComponent('status==DRAFT')}&pageCountFilter=${encodeURIComponent('pageCount=gt=1')}`, ['filter']],
    [`filter=${encodeURIComponent('status==DRAFT')}&pageCountFilter=${encodeURIComponent('pageCount=gt=1')}&status=bad`, ['status', 'filter']],
    ['ordering=name&ordering=name', ['ordering']]
  ]
  for (const [query, fields] of cases) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 400, query)
    t.strictSame(faults(res).map((f) => f[0]), fields, query)
  }
  const search = await app.inject({ method: 'POST', url: `${PATH}/search`, payload: { pageCount: 'abc', status: 'bad', ordering: ['bogus', 'alsobogus'] } })
  t.strictSame(search.json().context.map((c: { field: string, source: string }) => [c.field, c.source]), [['pageCount', 'body'], ['status', 'body'], ['ordering', 'body'], ['ordering', 'body']], 'a search body alike')
})

t.test('unknown parameters are 400 INPUT_INVALID, source query, each named', async (t) => {
  const app = await build(t)
  const one = await get(app, `${PATH}?foo=1&limit=2`)
  t.equal(one.status, 400)
  t.strictSame(one.body.context, [{
    code: 'INPUT_INVALID',
    message: 'foo is not a parameter of this collection; use an attribute that can be filtered, <attribute>Filter, filter, ordering or limit, cursor, offset, totalCount.',
    field: 'foo',
    source: 'query',
    value: '1'
  }])
  const several = await get(app, `${PATH}?foo=1&Limit=2&page=3&metadata=x&nameFilterX=1&=x&metadata.source.system.x=1`)
  t.strictSame(faults(several).map((f) => f[0]), ['foo', 'Limit', 'page', 'metadata', 'nameFilterX', '', 'metadata.source.system.x'])
  // RFC 6750 §2.3's query-string token: named, never echoed into an answer a log may keep.
  const token = await get(app, `${PATH}?access_token=eyJ.a.token&limit=2`)
  t.equal(token.status, 400)
  t.strictSame(token.body.context.map((c: Record<string, unknown>) => [c.field, 'value' in c]), [['access_token', false]])
})

t.test('filter with a hybrid filter, or given twice, is a 400', async (t) => {
  const app = await build(t)
  const both = await get(app, `${PATH}?filter=name==a&nameFilter=name==b`)
  t.equal(both.status, 400)
  t.strictSame(faults(both), [['filter', 'INPUT_INVALID', 'query']])
  t.match(both.body.context[0].message, /filter cannot be used together with the hybrid filter nameFilter/)
  const twice = await get(app, `${PATH}?filter=name==a&filter=name==b`)
  t.strictSame(faults(twice), [['filter', 'INPUT_INVALID', 'query']])
  t.match(twice.body.context[0].message, /may appear once/)
  t.equal(twice.body.context[0].value, 'name==a,name==b', 'the values sent, as an unknown parameter\'s')
  t.equal(both.body.context[0].value, 'name==a', 'the filter sent')
})

t.test('every refusal of the query core is a context item naming the parameter', async (t) => {
  const app = await build(t)
  const table: Array<[string, string, RegExp, string | undefined]> = [
    [`filter=${encodeURIComponent('name==a;(status==DRAFT')}`, 'filter', /Expected "\)" \(closing the "\(" at position 8\) at position 22/, undefined],
    [`filter=${encodeURIComponent('nope==1')}`, 'filter', /nope/, 'nope'],
    [`filter=${encodeURIComponent('pageCount=gt=x')}`, 'filter', /position 13 is not an integer/, 'x'],
    [`nameFilter=${encodeURIComponent('status==DRAFT')}`, 'nameFilter', /must be name/, 'status'],
    ['pageCount=abc', 'pageCount', /not an integer/, 'abc'],
    ['status=UNKNOWN', 'status', /DRAFT, PUBLISHED, ARCHIVED/, 'UNKNOWN'],
    ['pageCount=1*', 'pageCount', /wildcard/, '1*'],
    ['ordering=nope', 'ordering', /not an attribute to sort by/, 'nope'],
    ['ordering=tags', 'ordering', /not an attribute to sort by/, 'tags'],
    ['ordering=name&ordering=-name', 'ordering', /more than once/, '-name'],
    [`filter=${'x'.repeat(2001)}`, 'filter', /at most 2000/, undefined]
  ]
  for (const [query, field, message, value] of table) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 400, query)
    t.equal(res.body.title, 'Invalid Data')
    t.equal(res.body.context.length, 1, query)
    const [item] = res.body.context
    t.strictSame([item.code, item.field, item.source, item.value], ['INPUT_INVALID', field, 'query', value], query)
    t.match(item.message, message, query)
  }
})

t.test('all violations of a request are reported together', async (t) => {
  const app = await build(t)
  const res = await get(app, `${PATH}?limit=0&foo=1&ordering=nope&pageCount=x&cursor=zzz`)
  t.equal(res.status, 400)
  t.strictSame(faults(res), [
    ['foo', 'INPUT_INVALID', 'query'],
    ['limit', 'INPUT_MIN_VALUE', 'query'],
    ['pageCount', 'INPUT_INVALID', 'query'],
    ['ordering', 'INPUT_INVALID', 'query']
  ], 'the cursor is opened only once filter and ordering are valid')
  t.match(res.body.detail, /4 invalid values/)
})

t.test('malformed percent-encoding and too many repetitions are 400s', async (t) => {
  const app = await build(t, { plugin: { fiql: { maxListSize: 3 } } })
  const malformed = await get(app, `${PATH}?name=%E0%A4%A&%ZZ=1`)
  t.equal(malformed.status, 400)
  t.strictSame(malformed.body.context.map((c: { field: string, value: string }) => [c.field, c.value]), [['name', 'name=%E0%A4%A'], ['%ZZ', '%ZZ=1']])
  t.match(malformed.body.context[0].message, /percent-encoded/)
  const repeated: Array<[string, string]> = [
    ['status=DRAFT&status=DRAFT&status=DRAFT&status=DRAFT', 'status'],
    ['ordering=name&ordering=id&ordering=pageCount&ordering=amount', 'ordering'],
    [Array(4).fill('nameFilter=name==a').join('&'), 'nameFilter']
  ]
  for (const [query, field] of repeated) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 400, query)
    t.strictSame(faults(res), [[field, 'INPUT_INVALID', 'query']])
    t.match(res.body.context[0].message, /at most 3 times/)
  }
  t.equal((await get(app, `${PATH}?status=DRAFT&status=ARCHIVED&status=PUBLISHED`)).status, 200, 'three is allowed')
  t.equal((await get(app, `${PATH}?&&limit=2&`)).status, 200, 'empty parts are skipped')
})

t.test('routes without config.collection are left alone', async (t) => {
  const app = await build(t, {
    setup: (app) => {
      app.get('/plain', async (request) => ({ query: request.query, collectionQuery: request.collectionQuery }))
      app.get('/off', { config: { collection: false } }, async (request) => ({ query: request.query }))
    }
  })
  const plain = await get(app, '/plain?foo=1&limit=0')
  t.strictSame(plain.body, { query: { foo: '1', limit: '0' }, collectionQuery: null })
  t.equal((await get(app, '/off?foo=1')).status, 200)
  t.notOk((await get(app, '/plain')).headers.etag)
})

t.test('an attribute that is sortable but not filterable takes no filter parameter', async (t) => {
  const sortOnly = createFieldMap([
    { path: 'id', type: 'string', sortable: true },
    { path: 'name', type: 'string' },
    { path: 'metadata.score', type: 'int32', nullable: true, filterable: false, sortable: true }
  ])
  const app = await build(t, { collection: { fields: sortOnly } })
  const res = await get(app, `${PATH}?metadata.score=3&metadata.scoreFilter=score==3&metadataFilter=score==3`)
  t.strictSame(faults(res), [['metadata.score', 'INPUT_INVALID', 'query'], ['metadata.scoreFilter', 'INPUT_INVALID', 'query'], ['metadataFilter', 'INPUT_INVALID', 'query']])
  const sorted = await get(app, `${PATH}?ordering=-metadata.score&limit=3`)
  t.equal(sorted.status, 200)
  t.strictSame(sorted.body.results.map((d: Doc) => d.metadata?.score ?? null), [null, null, null], 'nulls first descending')
  t.strictSame(ids((await get(app, `${PATH}?name=Doc+H&limit=100`)).body), where((d) => d.name === 'Doc H'))
})

t.test('a flood of unknown or huge names gets a short answer', async (t) => {
  const app = await build(t)
  const many = await get(app, `${PATH}?${Array.from({ length: 500 }, (_, i) => `p${i}=1`).join('&')}`)
  t.equal(many.status, 400)
  t.equal(many.body.context.length, 20)
  t.equal(many.body.detail, 'The request has 500 invalid values; context lists the first 20.')
  t.strictSame(many.body.context.slice(0, 2).map((c: { field: string }) => c.field), ['p0', 'p1'])
  const long = 'n'.repeat(5000)
  const huge = await get(app, `${PATH}?${long}=1`)
  const [item] = huge.body.context
  t.equal(item.field, 'n'.repeat(100) + '…')
  t.ok(item.message.startsWith('n'.repeat(100) + '… is not a parameter'))
  t.equal(item.value, '1', 'the value sent, not the name')
  const longValue = await get(app, `${PATH}?foo=${'v'.repeat(5000)}`)
  t.equal(longValue.body.context[0].value, 'v'.repeat(200) + '…', 'a long value is cut short')
  const body = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]))
  const res = await app.inject({ method: 'POST', url: `${PATH}/search?${long}=1`, payload: body })
  t.equal(res.json().context.length, 20)
  t.match(res.json().context[0].message, /^A search takes its parameters in the JSON body; move n{100}… there\.$/)
})
