import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import query, { registerCollection } from '../../plugins/query/index.js'
import { build, faults, fields, get, local, PATH, search, SECRET } from './helper.js'

t.test('a POST search answers exactly what the equivalent GET answers, links and cursors included', async (t) => {
  const app = await build(t)
  const table: Array<[string, unknown]> = [
    ['', {}],
    ['limit=4&status=DRAFT&status=ARCHIVED&ordering=-pageCount&ordering=name', { ordering: ['-pageCount', 'name'], status: ['DRAFT', 'ARCHIVED'], paging: { limit: 4 } }],
    ['ordering=name&limit=3', { ordering: 'name', paging: { limit: 3, cursor: null } }],
    ['pageCount=7&active=false', { active: false, pageCount: 7 }],
    ['pageCount=7&pageCount=2', { pageCount: [7, '2'] }],
    [`filter=${encodeURIComponent('pageCount=ge=10;tags==c')}`, { filter: 'pageCount=ge=10;tags==c' }],
    [`metadataFilter=${encodeURIComponent('source.system==erp')}&offset=2&limit=3&totalCount=true`, { metadataFilter: 'source.system==erp', paging: { offset: 2, limit: 3, totalCount: true } }],
    ['description=&limit=2', { description: null, paging: { limit: 2 } }],
    ['name=Doc*&limit=1000', { name: 'Doc*', paging: { limit: 1000 } }]
  ]
  for (const [queryString, body] of table) {
    const viaGet = await get(app, `${PATH}?${queryString}`)
    const viaPost = await search(app, body)
    t.equal(viaGet.status, 200, queryString)
    t.equal(viaPost.status, 200, JSON.stringify(body))
    t.strictSame(viaPost.body, viaGet.body, `${queryString}: the same results, paging and links`)
  }
  t.ok((await get(app, `${PATH}?limit=4&status=DRAFT`)).body.paging.next !== null, 'the table has links to compare')
})

t.test('a cursor of a search works in its GET link and back in the body', async (t) => {
  const app = await build(t)
  const body = { status: 'DRAFT', ordering: '-name', paging: { limit: 3 } }
  const first = await search(app, body)
  const next = first.body.paging.next
  t.match(next.url, /^http:\/\/localhost:80\/v1\/documents\?limit=3&cursor=[\w-]+&status=DRAFT&ordering=-name$/, 'the link is the GET form')
  const viaLink = await get(app, local(next.url))
  const viaBody = await search(app, { ...body, paging: { limit: 3, cursor: next.cursor } })
  t.equal(viaLink.status, 200)
  t.strictSame(viaBody.body, viaLink.body)
  const mismatch = await search(app, { status: 'PUBLISHED', paging: { cursor: next.cursor } })
  t.equal(mismatch.status, 400)
  t.strictSame(faults(mismatch), [['paging.cursor', 'INPUT_INVALID', 'body']])
  const tampered = await search(app, { ...body, paging: { cursor: next.cursor + 'A' } })
  t.strictSame(faults(tampered), [['paging.cursor', 'INPUT_INVALID', 'body']])
})

t.test('a limit above the maximum gets the maximum, however large', async (t) => {
  const app = await build(t)
  // The body as JSON text: 1e400 is an integer to JSON, though JavaScript reads it as Infinity.
  for (const limit of ['101', '2147483648', '1e300', '1e400']) {
    for (const paging of [`{"limit":${limit}}`, `{"limit":${limit},"offset":0}`]) {
      const res = await app.inject({ method: 'POST', url: `${PATH}/search`, headers: { 'content-type': 'application/json' }, payload: `{"paging":${paging}}` })
      t.equal(res.statusCode, 200, paging)
      t.equal(JSON.parse(res.body).paging.limit, 100, `${paging}: paging.limit says the maximum applies`)
    }
  }
})

t.test('the search body is checked: unknown names, paging members and types, source body', async (t) => {
  const app = await build(t)
  const table: Array<[unknown, Array<[string | undefined, string, string]>]> = [
    [{ foo: 1, limit: 2 }, [['foo', 'INPUT_INVALID', 'body'], ['limit', 'INPUT_INVALID', 'body']]],
    [{ paging: { limit: 2, page: 3, offset: 0, cursor: 'x' } }, [['paging.page', 'INPUT_INVALID', 'body'], ['paging.cursor', 'INPUT_INVALID', 'body']]],
    [{ paging: [] }, [['paging', 'INPUT_INVALID', 'body']]],
    [{ paging: 'limit=2' }, [['paging', 'INPUT_INVALID', 'body']]],
    [{ paging: { limit: '5' } }, [['paging.limit', 'INPUT_INVALID', 'body']]],
    [{ paging: { limit: 2.5 } }, [['paging.limit', 'INPUT_INVALID', 'body']]],
    [{ paging: { limit: 0 } }, [['paging.limit', 'INPUT_MIN_VALUE', 'body']]],
    [{ paging: { limit: -1e300 } }, [['paging.limit', 'INPUT_MIN_VALUE', 'body']]],
    [{ paging: { offset: 2147483648 } }, [['paging.offset', 'INPUT_MAX_VALUE', 'body']]],
    [{ paging: { offset: -1 } }, [['paging.offset', 'INPUT_MIN_VALUE', 'body']]],
    [{ paging: { offset: 0, totalCount: 'true' } }, [['paging.totalCount', 'INPUT_INVALID', 'body']]],
    [{ paging: { totalCount: true } }, [['paging.totalCount', 'INPUT_INVALID', 'body']]],
    [{ paging: { cursor: 5 } }, [['paging.cursor', 'INPUT_INVALID', 'body']]],
    [{ ordering: 5 }, [['ordering', 'INPUT_INVALID', 'body']]],
    [{ ordering: ['name', 1] }, [['ordering', 'INPUT_INVALID', 'body']]],
    [{ ordering: 'nope' }, [['ordering', 'INPUT_INVALID', 'body']]],
    [{ filter: 5 }, [['filter', 'INPUT_INVALID', 'body']]],
    [{ filter: 'name==a', nameFilter: 'name==b' }, [['filter', 'INPUT_INVALID', 'body']]],
    [{ status: { a: 1 } }, [['status', 'INPUT_INVALID', 'body']]],
    [{ nameFilter: ['name==a', 3] }, [['nameFilter', 'INPUT_INVALID', 'body']]],
    [{ pageCount: 1.5 }, [['pageCount', 'INPUT_INVALID', 'body']]],
    [{ name: 'a\uD800' }, [['name', 'INPUT_INVALID', 'body']]],
    [{ name: ['ok', '\uDC00'] }, [['name', 'INPUT_INVALID', 'body']]],
    [{ status: Array(101).fill('DRAFT') }, [['status', 'INPUT_INVALID', 'body']]],
    [[], [[undefined, 'INPUT_INVALID', 'body']]],
    ['text', [[undefined, 'INPUT_INVALID', 'body']]]
  ]
  for (const [body, expected] of table) {
    const res = await search(app, body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.equal(res.body.title, 'Invalid Data')
    t.strictSame(faults(res), expected, JSON.stringify(body))
  }
  const res = await search(app, { limit: 2 })
  t.match(res.body.context[0].message, /limit goes inside paging/)
  t.equal((await search(app, { paging: null, ordering: ['name'], status: [] })).status, 200, 'null paging and an empty list are fine')
})

t.test('a collection without offset paging names its paging members in the body too', async (t) => {
  const app = await build(t, { collection: { offset: false } })
  const res = await search(app, { paging: { offset: 0, totalCount: true } })
  t.strictSame(faults(res), [['paging.offset', 'INPUT_INVALID', 'body'], ['paging.totalCount', 'INPUT_INVALID', 'body']])
  t.equal(res.body.context[0].message, 'is not a paging member; use limit and cursor.')
  const full = await build(t)
  t.equal((await search(full, { paging: { size: 1 } })).body.context[0].message, 'is not a paging member; use limit, cursor, offset and totalCount.')
})

t.test('paging (or anything) in the query string of a search is a 400', async (t) => {
  const app = await build(t)
  const res = await search(app, { paging: { limit: 2 } }, `${PATH}/search?limit=5&status=DRAFT&x=%ZZ`)
  t.equal(res.status, 400)
  t.strictSame(faults(res), [['limit', 'INPUT_INVALID', 'query'], ['status', 'INPUT_INVALID', 'query'], ['x', 'INPUT_INVALID', 'query']])
  t.match(res.body.context[0].message, /never sent both in the query string and in the body/)
  t.match(res.body.context[1].message, /move status there/)
  t.strictSame(res.body.context.map((c: { value?: string }) => c.value), ['5', 'DRAFT', '%ZZ'], 'each with the value sent')
  const bare = await search(app, {}, `${PATH}/search?status&status=A&%ZZ`)
  t.strictSame(bare.body.context.map((c: { field: string, value?: string }) => [c.field, c.value]), [['status', ',A'], ['%ZZ', '']], 'a name sent twice, once without a value; a malformed one without')
})

t.test('a search without a body is a 400', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: `${PATH}/search` })
  t.equal(res.statusCode, 400)
  t.match(res.json().context[0].message, /must be a JSON object/)
})

t.test('without the validation plugin the search body is still checked, never trimmed', async (t) => {
  const app = await build(t, { validation: false })
  const res = await search(app, { foo: 1, paging: { limit: 2, bar: 1 } })
  t.equal(res.status, 400)
  t.strictSame(faults(res), [['foo', 'INPUT_INVALID', 'body'], ['paging.bar', 'INPUT_INVALID', 'body']])
  t.equal((await search(app, { status: 'DRAFT', paging: { limit: 2 } })).status, 200)
  t.equal((await get(app, `${PATH}?limit=2&ordering=-name&offset=1&totalCount=true`)).status, 200)
})

t.test('registerCollection registers the search unless told not to; search routes are POSTs on /search', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
  registerCollection(app, { url: '/a/', collection: { fields }, handler: async (_q, reply) => reply.sendCollection(page) })
  registerCollection(app, { url: '/b', collection: { fields }, search: false, handler: async (_q, reply) => reply.sendCollection(page), config: { problems: [409] } })
  const wrong: Array<[string, string]> = [['POST', '/c'], ['PUT', '/c'], ['DELETE', '/c/search']]
  for (const [method, url] of wrong) {
    t.throws(() => app.route({ method: method as 'POST', url, config: { collection: { fields } }, handler: async () => ({}) }),
      new TypeError(`query plugin: config.collection of ${method} ${url}: a collection route is a GET (with its HEAD), or a POST of its own on <collection>/search`))
  }
  t.throws(() => app.route({ method: ['GET', 'POST'], url: '/d/search', config: { collection: { fields } }, handler: async () => ({}) }), TypeError)
  t.equal((await app.inject({ method: 'POST', url: '/a/search', payload: {} })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/b/search', payload: {} })).statusCode, 404)
  t.equal((await app.inject('/b')).statusCode, 200)
  await app.close()
})
