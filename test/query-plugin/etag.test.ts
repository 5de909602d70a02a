import t from 'tap'
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import conditional from '../../plugins/conditional/index.js'
import { build, fields, get, PATH, search } from './helper.js'

t.test('a collection page carries a strong ETag over its body', async (t) => {
  const app = await build(t)
  const res = await app.inject(`${PATH}?limit=3`)
  t.equal(res.statusCode, 200)
  const etag = res.headers.etag as string
  t.equal(etag, `"${createHash('sha256').update(res.body).digest('base64url').slice(0, 22)}"`, 'the hash of the bytes sent')
  t.equal((await app.inject(`${PATH}?limit=3`)).headers.etag, etag, 'the same page, the same tag')
  t.not((await app.inject(`${PATH}?limit=4`)).headers.etag, etag, 'another page, another tag')
  const head = await app.inject({ method: 'HEAD', url: `${PATH}?limit=3` })
  t.equal(head.statusCode, 200)
  t.equal(head.headers.etag, etag, 'HEAD gives the ETag of the GET')
  t.equal(head.body, '')
})

t.test('a search carries the ETag of the GET of the same page, and does not evaluate If-None-Match', async (t) => {
  const app = await build(t)
  // [GET query string, the same query as a search body]
  const table: Array<[string, unknown]> = [
    ['limit=3', { paging: { limit: 3 } }],
    ['limit=2&status=DRAFT&ordering=-name', { status: 'DRAFT', ordering: '-name', paging: { limit: 2 } }],
    ['limit=4&offset=2&totalCount=true', { paging: { limit: 4, offset: 2, totalCount: true } }]
  ]
  for (const [query, body] of table) {
    const got = await app.inject(`${PATH}?${query}`)
    const posted = await app.inject({ method: 'POST', url: `${PATH}/search`, payload: body as object, headers: { 'if-none-match': got.headers.etag as string } })
    t.equal(posted.statusCode, 200, `${query}: a POST is not answered 304`)
    t.equal(posted.body, got.body, `${query}: the same page`)
    t.equal(posted.headers.etag, got.headers.etag, `${query}: the same tag`)
  }
  const failed = await search(app, { paging: { limit: 0 } })
  t.equal(failed.status, 400)
  t.notOk(failed.headers.etag, 'none on a refusal')
})

t.test('If-None-Match matching the page gives 304 without a body', async (t) => {
  const app = await build(t)
  const etag = (await get(app, `${PATH}?limit=3`)).headers.etag as string
  const table: Array<[string, number]> = [
    [etag, 304],
    [`W/${etag}`, 304],
    [`"stale", ${etag}`, 304],
    ['*', 304],
    ['"stale"', 200]
  ]
  for (const [header, status] of table) {
    const res = await app.inject({ url: `${PATH}?limit=3`, headers: { 'if-none-match': header } })
    t.equal(res.statusCode, status, header)
    t.equal(res.headers.etag, etag, `${header}: the ETag is sent either way`)
    if (status === 304) {
      t.equal(res.body, '', 'no body')
      t.notOk(res.headers['content-type'], 'no content type')
      t.notOk(res.headers['content-length'], 'no content length')
    } else {
      t.equal(res.json().results.length, 3)
    }
  }
  const head = await app.inject({ method: 'HEAD', url: `${PATH}?limit=3`, headers: { 'if-none-match': etag } })
  t.equal(head.statusCode, 304, 'HEAD too')
  t.equal(head.body, '')
  const other = await app.inject({ url: `${PATH}?limit=4`, headers: { 'if-none-match': etag } })
  t.equal(other.statusCode, 200, 'the tag of another page does not match')
})

t.test('a malformed If-None-Match (or If-Match) is a 400 naming the header, with or without the conditional plugin', async (t) => {
  for (const withConditional of [false, true]) {
    const app = await build(t, withConditional ? { setup: async (app) => { await app.register(conditional) } } : {})
    const malformed: Array<[string, string]> = [['if-none-match', 'garbage'], ['if-none-match', '"a", b'], ['if-match', 'W/']]
    for (const [header, value] of malformed) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await app.inject({ method, url: `${PATH}?limit=3`, headers: { [header]: value } })
        t.equal(res.statusCode, 400, `${method} ${header}: ${value}, conditional ${String(withConditional)}`)
        if (method === 'GET') t.match(res.json().context, [{ code: 'INPUT_INVALID', field: header === 'if-match' ? 'If-Match' : 'If-None-Match', source: 'header', value }])
      }
    }
    const off = await build(t, { collection: { etag: false } })
    t.equal((await off.inject({ url: `${PATH}?limit=3`, headers: { 'if-none-match': 'garbage' } })).statusCode, 200, 'a route without an ETag reads neither header')
  }
})

const PREPARED = '{"results":[],"paging":{"limit":20,"next":null,"previous":null}}'

t.test('no collection ETag on errors, with etag: false, on a stream, or when the route sets its own; bytes are hashed as sent', async (t) => {
  const app = await build(t, {
    setup: (app) => {
      app.get('/prepared', { config: { collection: { fields } } }, async (_request, reply) => reply.type('application/json').send(Buffer.from(PREPARED)))
      app.get('/streamed', { config: { collection: { fields } } }, async (_request, reply) => reply.type('application/json').send(Readable.from(['{"results":[],"paging":{}}'])))
      app.get('/own', { config: { collection: { fields } } }, async (_request, reply) => {
        reply.header('etag', '"v7"')
        return reply.sendCollection({ items: [], hasNext: false, hasPrevious: false, next: null, previous: null })
      })
    }
  })
  const error = await get(app, `${PATH}?limit=0`, { 'if-none-match': '*' })
  t.equal(error.status, 400)
  t.notOk(error.headers.etag)
  const own = await app.inject({ url: '/own', headers: { 'if-none-match': '*' } })
  t.equal(own.statusCode, 200, 'a route with its own ETag answers If-None-Match itself')
  t.equal(own.headers.etag, '"v7"')

  const prepared = await app.inject({ url: '/prepared' })
  t.equal(prepared.headers.etag, `"${createHash('sha256').update(PREPARED).digest('base64url').slice(0, 22)}"`, 'a body sent as bytes is hashed as sent')
  t.equal((await app.inject({ url: '/prepared', headers: { 'if-none-match': prepared.headers.etag as string } })).statusCode, 304)

  const streamed = await app.inject({ url: '/streamed', headers: { 'if-none-match': '*' } })
  t.equal(streamed.statusCode, 200, 'a streamed body is not hashed')
  t.notOk(streamed.headers.etag)

  const off = await build(t, { collection: { etag: false } })
  const res = await off.inject({ url: PATH, headers: { 'if-none-match': '*' } })
  t.equal(res.statusCode, 200)
  t.notOk(res.headers.etag)
  t.notOk((await search(off, {})).headers.etag, 'nor on its search')
})
