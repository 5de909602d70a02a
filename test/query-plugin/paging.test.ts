import t from 'tap'
import { build, docs, faults, get, local, PATH, search, SECRET, walk, fields, type Doc } from './helper.js'
import { queryMemory } from '../../store/memory-query.js'
import { orderingResolver } from '../../plugins/query/ordering.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'

const ids = (body: { results: Doc[] }): string[] => body.results.map((d) => d.id)
const allIds = docs.map((d) => d.id)

t.test('limit: default, maximum applied however large, 400 below 1 or when not an integer', async (t) => {
  const app = await build(t)
  const ok: Array<[string, number]> = [
    ['', 20],
    ['limit=5', 5],
    ['limit=007', 7],
    ['limit=100', 100],
    ['limit=101', 100],
    ['limit=2147483647', 100],
    // Any integer above the maximum, however large (conventions: "the maximum applies").
    ['limit=2147483648', 100],
    ['limit=99999999999999999999', 100],
    [`limit=${'9'.repeat(400)}`, 100]
  ]
  for (const [query, applied] of ok) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 200, query)
    t.equal(res.body.paging.limit, applied, `${query}: paging.limit is the limit applied`)
    t.strictSame(ids(res.body), allIds.slice(0, applied), `${query}: that many results`)
  }
  const bad: Array<[string, string, string | undefined]> = [
    ['limit=0', 'INPUT_MIN_VALUE', '0'],
    ['limit=-3', 'INPUT_MIN_VALUE', '-3'],
    ['limit=-99999999999999999999', 'INPUT_MIN_VALUE', '-99999999999999999999'],
    ['limit=abc', 'INPUT_INVALID', 'abc'],
    ['limit=1.5', 'INPUT_INVALID', '1.5'],
    ['limit=', 'INPUT_INVALID', ''],
    ['limit=-', 'INPUT_INVALID', '-'],
    ['limit=%2B5', 'INPUT_INVALID', '+5'],
    ['limit=1e2', 'INPUT_INVALID', '1e2'],
    ['limit=+5', 'INPUT_INVALID', ' 5'],
    ['limit=5&limit=6', 'INPUT_INVALID', '5,6']
  ]
  for (const [query, code, value] of bad) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 400, query)
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
    t.equal(res.body.title, 'Invalid Data')
    t.strictSame(res.body.context, [{ ...res.body.context[0], code, field: 'limit', source: 'query', value }], query)
  }
})

t.test('limits per route and per plugin', async (t) => {
  const app = await build(t, { plugin: { defaultLimit: 3, maxLimit: 6 } })
  t.equal((await get(app, PATH)).body.paging.limit, 3)
  t.equal((await get(app, `${PATH}?limit=50`)).body.paging.limit, 6)
  const small = await build(t, { collection: { maxLimit: 4 } })
  t.equal((await get(small, PATH)).body.paging.limit, 4, 'the plugin default is lowered to the route maximum')
  // Fastify's own Ajv, without the suite's validation plugin, sees the limit applied too.
  const plain = await build(t, { validation: false })
  t.equal((await get(plain, `${PATH}?limit=2147483648`)).body.paging.limit, 100)
  t.equal((await search(plain, { paging: { limit: 2147483648 } })).body.paging.limit, 100)
  const own = await build(t, { collection: { defaultLimit: 2, maxLimit: 5 } })
  t.equal((await get(own, PATH)).body.paging.limit, 2)
  t.equal((await get(own, `${PATH}?limit=9`)).body.paging.limit, 5)
})

t.test('offset paging: shape, neighbours, totalCount, and its 400s', async (t) => {
  const app = await build(t)
  const first = await get(app, `${PATH}?offset=0&limit=10`)
  t.equal(first.status, 200)
  t.strictSame(first.body.paging, { limit: 10, offset: 0, next: { url: `http://localhost:80${PATH}?limit=10&offset=10` }, previous: null })
  t.strictSame(ids(first.body), allIds.slice(0, 10))
  const middle = await get(app, `${PATH}?offset=5&limit=10`)
  t.strictSame(middle.body.paging.previous, { url: `http://localhost:80${PATH}?limit=10&offset=0` }, 'nearer the start than a limit: the first page, with the current limit')
  t.strictSame(middle.body.paging.next, { url: `http://localhost:80${PATH}?limit=10&offset=15` })
  // [offset, limit, the previous link's limit and offset]: the link carries the current limit,
  // and the page it names holds every item before this one (the first page overlaps it).
  const previous: Array<[number, number, string]> = [
    [1, 10, 'limit=10&offset=0'],
    [3, 7, 'limit=7&offset=0'],
    [6, 7, 'limit=7&offset=0'],
    [7, 7, 'limit=7&offset=0'],
    [8, 7, 'limit=7&offset=1'],
    [9, 4, 'limit=4&offset=5']
  ]
  for (const [offset, limit, link] of previous) {
    const res = await get(app, `${PATH}?limit=${limit}&offset=${offset}&status=DRAFT`)
    t.strictSame(res.body.paging.previous, { url: `http://localhost:80${PATH}?${link}&status=DRAFT` }, `offset ${offset}, limit ${limit}`)
    const back = await get(app, local(res.body.paging.previous.url))
    const drafts = docs.filter((d) => d.status === 'DRAFT').map((d) => d.id)
    const start = Math.max(0, offset - limit)
    t.strictSame(ids(back.body), drafts.slice(start, start + limit), `offset ${offset}, limit ${limit}: a page of the current limit`)
    t.ok(drafts.slice(start, offset).every((id) => ids(back.body).includes(id)), `offset ${offset}, limit ${limit}: it holds the items just before this page`)
  }
  const last = await get(app, `${PATH}?limit=10&offset=20`)
  t.strictSame(ids(last.body), allIds.slice(20))
  t.strictSame(last.body.paging, { limit: 10, offset: 20, next: null, previous: { url: `http://localhost:80${PATH}?limit=10&offset=10` } })
  const claims = await build(t, { handler: async (_request, reply) => reply.sendCollection({ items: [], hasNext: false, hasPrevious: true, next: null, previous: null }) })
  t.equal((await get(claims, `${PATH}?offset=0`)).body.paging.previous, null, 'at offset 0 no item comes before, whatever the page says')
  const beyond = await get(app, `${PATH}?offset=100`)
  t.equal(beyond.status, 200, 'an offset past the end is an empty page, not an error')
  t.strictSame(beyond.body.results, [])

  const counted = await get(app, `${PATH}?offset=0&limit=2&totalCount=true&status=DRAFT`)
  t.strictSame(counted.body.paging, {
    limit: 2,
    offset: 0,
    totalCount: docs.filter((d) => d.status === 'DRAFT').length,
    next: { url: `http://localhost:80${PATH}?limit=2&offset=2&totalCount=true&status=DRAFT` },
    previous: null
  })
  t.notOk('totalCount' in (await get(app, `${PATH}?offset=0&totalCount=false`)).body.paging)

  const bad: Array<[string, Array<[string, string, string]>]> = [
    ['offset=-1', [['offset', 'INPUT_MIN_VALUE', 'query']]],
    ['offset=x', [['offset', 'INPUT_INVALID', 'query']]],
    ['offset=2147483648', [['offset', 'INPUT_MAX_VALUE', 'query']]],
    ['offset=1&offset=2', [['offset', 'INPUT_INVALID', 'query']]],
    ['totalCount=true', [['totalCount', 'INPUT_INVALID', 'query']]],
    ['offset=0&totalCount=yes', [['totalCount', 'INPUT_INVALID', 'query']]],
    ['offset=0&cursor=abc', [['cursor', 'INPUT_INVALID', 'query']]],
    ['offset=0&cursor=', [['cursor', 'INPUT_INVALID', 'query']]],
    ['limit=0&offset=-1&totalCount=maybe', [['limit', 'INPUT_MIN_VALUE', 'query'], ['offset', 'INPUT_MIN_VALUE', 'query'], ['totalCount', 'INPUT_INVALID', 'query']]]
  ]
  for (const [query, expected] of bad) {
    const res = await get(app, `${PATH}?${query}`)
    t.equal(res.status, 400, query)
    t.strictSame(faults(res), expected, query)
  }
  t.match((await get(app, `${PATH}?offset=0&cursor=abc`)).body.context[0].message, /cannot be used together with offset/)
})

t.test('a route without offset paging refuses offset and totalCount as unknown parameters', async (t) => {
  const app = await build(t, { collection: { offset: false } })
  const res = await get(app, `${PATH}?offset=0&totalCount=true`)
  t.equal(res.status, 400)
  t.strictSame(faults(res), [['offset', 'INPUT_INVALID', 'query'], ['totalCount', 'INPUT_INVALID', 'query']])
  t.match(res.body.context[0].message, /use .* or limit, cursor\.$/)
  t.equal((await get(app, `${PATH}?limit=2`)).status, 200)
})

t.test('cursor paging walks every item once, forwards and back', async (t) => {
  const app = await build(t)
  const first = await get(app, `${PATH}?limit=7`)
  t.equal(first.body.paging.previous, null, 'no previous page on the first page')
  t.strictSame(Object.keys(first.body.paging), ['limit', 'next', 'previous'])
  t.strictSame(Object.keys(first.body.paging.next), ['cursor', 'url'])
  t.match(first.body.paging.next.cursor, /^[A-Za-z0-9_-]+$/)

  const pages = await walk(app, `${PATH}?limit=7`)
  t.strictSame(pages.map((p) => p.length), [7, 7, 7, 4])
  t.strictSame(pages.flat(), allIds)

  // From the last page, previous links walk back over the same pages.
  let last = first
  while (last.body.paging.next !== null) last = await get(app, local(last.body.paging.next.url))
  t.equal(last.body.paging.next, null, 'no next page on the last page')
  const back = await walk(app, local(last.body.paging.previous.url), 'previous')
  t.strictSame(back, pages.slice(0, -1).reverse())

  t.strictSame(ids((await get(app, `${PATH}?limit=7&cursor=`)).body), allIds.slice(0, 7), 'an empty cursor is the first page')
})

t.test('cursor paging follows ordering and filters, nulls included', async (t) => {
  const app = await build(t)
  const cases = [
    { query: 'ordering=-pageCount&ordering=name', ordering: ['-pageCount', 'name'], fiql: null },
    { query: 'ordering=metadata.source.system&status=DRAFT&status=ARCHIVED', ordering: ['metadata.source.system'], fiql: 'status=in=(DRAFT,ARCHIVED)' },
    { query: 'ordering=flagged&filter=' + encodeURIComponent('pageCount=ge=3,amount=isnull=true'), ordering: ['flagged'], fiql: 'pageCount=ge=3,amount=isnull=true' }
  ]
  const resolve = orderingResolver(fields)
  for (const c of cases) {
    const oracle = queryMemory(docs, {
      filter: c.fiql === null ? null : parseFilter(c.fiql, fields),
      ordering: resolve(c.ordering),
      paging: { kind: 'offset', limit: 100, offset: 0, totalCount: false }
    }, fields).items.map((d) => d.id)
    const pages = await walk(app, `${PATH}?limit=4&${c.query}`)
    t.strictSame(pages.flat(), oracle, c.query)
    t.ok(oracle.length > 4, 'more than one page')
  }
})

t.test('a tampered, foreign or mismatched cursor is a 400 naming cursor', async (t) => {
  const app = await build(t)
  const other = await build(t, { plugin: { cursorSecret: 'another secret of 16 bytes or more' } })
  const elsewhere = await build(t, { url: '/v1/others' })
  const first = await get(app, `${PATH}?limit=3&ordering=name&status=DRAFT`)
  const cursor: string = first.body.paging.next.cursor
  const flip = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11)
  const invalid: Array<[string, string]> = [
    [`${PATH}?limit=3&ordering=name&status=DRAFT&cursor=${flip}`, 'tampered'],
    [`${PATH}?limit=3&ordering=name&status=DRAFT&cursor=${cursor.slice(0, -4)}`, 'cut short'],
    [`${PATH}?limit=3&ordering=name&status=DRAFT&cursor=not-a-cursor`, 'made up'],
    [`${PATH}?limit=3&ordering=name&status=DRAFT&cursor=${'A'.repeat(5000)}`, 'huge']
  ]
  for (const [url, why] of invalid) {
    const res = await get(app, url)
    t.equal(res.status, 400, why)
    t.strictSame(faults(res), [['cursor', 'INPUT_INVALID', 'query']], why)
    t.match(res.body.context[0].message, /not valid/, why)
  }
  const foreign = await get(other, `${PATH}?limit=3&ordering=name&status=DRAFT&cursor=${cursor}`)
  t.equal(foreign.status, 400, 'a cursor of a service with another secret')
  const mismatched: Array<[typeof app, string, string]> = [
    [app, `${PATH}?limit=3&ordering=-name&status=DRAFT&cursor=${cursor}`, 'another ordering'],
    [app, `${PATH}?limit=3&status=DRAFT&cursor=${cursor}`, 'the default ordering'],
    [app, `${PATH}?limit=3&ordering=name&status=PUBLISHED&cursor=${cursor}`, 'another filter'],
    [app, `${PATH}?limit=3&ordering=name&cursor=${cursor}`, 'no filter'],
    [elsewhere, `/v1/others?limit=3&ordering=name&status=DRAFT&cursor=${cursor}`, 'another collection']
  ]
  for (const [server, url, why] of mismatched) {
    const res = await get(server, url)
    t.equal(res.status, 400, why)
    t.strictSame(faults(res), [['cursor', 'INPUT_INVALID', 'query']], why)
    t.match(res.body.context[0].message, /belongs to another filter, ordering or collection/, why)
  }
  const same = await get(app, `${PATH}?status=DRAFT&limit=5&ordering=name&cursor=${cursor}`)
  t.equal(same.status, 200, 'the same query in another parameter order and with another limit keeps its cursors')
})

t.test('the cursor scope: path parameters, execution context, or a scope of the route', async (t) => {
  const app = await build(t, {
    url: '/v1/authors/:authorId/documents',
    setup: (app) => {
      app.decorateRequest('executionContext', '')
      app.addHook('onRequest', async (request) => {
        (request as unknown as { executionContext: string }).executionContext = String(request.headers['svc-execution-context'] ?? 'prod')
      })
    }
  })
  const first = await get(app, '/v1/authors/a1/documents?limit=2')
  const cursor: string = first.body.paging.next.cursor
  t.equal((await get(app, `/v1/authors/a1/documents?limit=2&cursor=${cursor}`)).status, 200)
  t.equal((await get(app, `/v1/authors/a2/documents?limit=2&cursor=${cursor}`)).status, 400, 'another parent')
  t.equal((await get(app, `/v1/authors/a1/documents?limit=2&cursor=${cursor}`, { 'svc-execution-context': 'preprod' })).status, 400, 'another execution context')

  const shared = await build(t, { url: '/v1/shared', collection: { scope: () => 'documents' } })
  const alias = await build(t, { url: '/v1/alias', collection: { scope: () => 'documents' } })
  const c2: string = (await get(shared, '/v1/shared?limit=2')).body.paging.next.cursor
  t.equal((await get(alias, `/v1/alias?limit=2&cursor=${c2}`)).status, 200, 'one scope, cursors valid on both paths')
})

t.test('a cursor of a page whose neighbours were deleted gives an empty page linking back the way it came', async (t) => {
  const items = docs.slice()
  const app = await build(t, { items })
  const first = await get(app, `${PATH}?limit=5`)
  const second = await get(app, local(first.body.paging.next.url))
  items.splice(5)
  const next = await get(app, local(first.body.paging.next.url))
  t.equal(next.status, 200)
  t.strictSame(next.body.results, [])
  t.equal(next.body.paging.next, null, 'nothing after it')
  t.match(next.body.paging.previous, { cursor: String, url: String }, 'the items before it are still there')
  const back = await get(app, local(next.body.paging.previous.url))
  t.strictSame(back.body.results, first.body.results, 'and its previous page is them')
  // The other way: the page before a page whose items before it were deleted.
  items.splice(0, items.length, ...docs.slice(5))
  const before = await get(app, local(second.body.paging.previous.url))
  t.strictSame([before.body.results, before.body.paging.previous], [[], null], 'nothing before it')
  const forth = await get(app, local(before.body.paging.next.url))
  t.strictSame(forth.body.results, second.body.results, 'its next page is the items after it')
  t.ok(SECRET.length >= 16)
})
