import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import { Type } from '@sinclair/typebox'
import query, { buildEnvelope, collectionQueryOf, registerCollection } from '../../plugins/query/index.js'
import { Collection } from '../../schemas/collection.js'
import { queryMemory } from '../../store/memory-query.js'
import { build, docs, fields, get, local, PATH, SECRET, URL_BASE } from './helper.js'

t.test('links carry limit, cursor, every filter parameter sorted by name, then the ordering', async (t) => {
  const app = await build(t)
  const res = await get(app, `${PATH}?ordering=-pageCount&tags=a&limit=2&status=DRAFT&status=ARCHIVED&ordering=name&nameFilter=${encodeURIComponent('name=="Doc *"')}`)
  t.equal(res.status, 200)
  const next = res.body.paging.next
  t.equal(next.url, `${URL_BASE}${PATH}?limit=2&cursor=${next.cursor as string}&nameFilter=name%3D%3D%22Doc%20*%22&status=DRAFT&status=ARCHIVED&tags=a&ordering=-pageCount&ordering=name`)
  const reordered = await get(app, `${PATH}?status=DRAFT&nameFilter=${encodeURIComponent('name=="Doc *"')}&status=ARCHIVED&limit=2&ordering=-pageCount&ordering=name&tags=a`)
  t.strictSame(reordered.body.paging, res.body.paging, 'the same query in another order gives the same links and cursors')
  const second = await get(app, local(next.url))
  t.equal(second.status, 200)
  t.equal(second.body.paging.previous.url, `${URL_BASE}${PATH}?limit=2&cursor=${second.body.paging.previous.cursor as string}&nameFilter=name%3D%3D%22Doc%20*%22&status=DRAFT&status=ARCHIVED&tags=a&ordering=-pageCount&ordering=name`)
})

t.test('links are percent-encoded so that following them repeats the filter exactly', async (t) => {
  const items = docs.map((d, i) => ({ ...d, name: i % 2 === 0 ? 'a&b=c;d,e +é😀%' : d.name }))
  const app = await build(t, { items })
  const expected = items.filter((d) => d.name === 'a&b=c;d,e +é😀%').map((d) => d.id)
  for (const q of [
    `name=${encodeURIComponent('a&b=c;d,e +é😀%')}`,
    `filter=${encodeURIComponent('name=="a&b=c;d,e +é😀%"')}`,
    `name=${encodeURIComponent('a&b=c;d,e').replaceAll('%20', '+')}+%2B%C3%A9%F0%9F%98%80%25`
  ]) {
    const first = await get(app, `${PATH}?limit=3&${q}`)
    t.equal(first.status, 200, q)
    const all = [first.body.results.map((d: { id: string }) => d.id)]
    let link = first.body.paging.next
    while (link !== null) {
      const page = await get(app, local(link.url))
      all.push(page.body.results.map((d: { id: string }) => d.id))
      link = page.body.paging.next
    }
    t.strictSame(all.flat(), expected, q)
  }
})

t.test('scheme and host come from the request, and from X-Forwarded-* only behind a trusted proxy', async (t) => {
  const proxied = await build(t, { server: { trustProxy: true } })
  const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' }
  const behind = await get(proxied, `${PATH}?limit=2`, headers)
  t.match(behind.body.paging.next.url, /^https:\/\/api\.example\.com\/v1\/documents\?limit=2&cursor=/)
  const offset = await get(proxied, `${PATH}?limit=2&offset=2`, headers)
  t.equal(offset.body.paging.previous.url, 'https://api.example.com/v1/documents?limit=2&offset=0')

  const direct = await build(t)
  const ignored = await get(direct, `${PATH}?limit=2`, headers)
  t.match(ignored.body.paging.next.url, /^http:\/\/localhost:80\/v1\/documents\?/, 'untrusted X-Forwarded-* are ignored')
  const hosted = await get(direct, `${PATH}?limit=2`, { host: '[::1]:8443' })
  t.match(hosted.body.paging.next.url, /^http:\/\/\[::1\]:8443\/v1\/documents\?/)
  for (const host of ['evil.example/x?', 'a b', 'x'.repeat(256)]) {
    const odd = await get(direct, `${PATH}?limit=2`, { host })
    t.equal(odd.status, 200)
    t.match(odd.body.paging.next.url, /^\/v1\/documents\?limit=2&cursor=/, `Host ${JSON.stringify(host.slice(0, 20))} gives a path-absolute link`)
  }
})

t.test('an empty collection is a 200 with an empty page', async (t) => {
  const app = await build(t, { items: [] })
  const cursor = await get(app, PATH)
  t.equal(cursor.status, 200)
  t.strictSame(cursor.body, { results: [], paging: { limit: 20, next: null, previous: null } })
  const offset = await get(app, `${PATH}?offset=0&totalCount=true`)
  t.strictSame(offset.body, { results: [], paging: { limit: 20, offset: 0, totalCount: 0, next: null, previous: null } })
})

t.test('a handler may return buildEnvelope(request, page) itself', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  app.get('/items', { config: { collection: { fields } } }, async (request) => buildEnvelope(request, queryMemory(docs, collectionQueryOf(request), fields)))
  const res = await app.inject('/items?limit=1&status=DRAFT')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.strictSame(body.results.map((d: { id: string }) => d.id), ['d00'])
  t.match(body.paging.next.url, /^http:\/\/localhost:80\/items\?limit=1&cursor=[\w-]+&status=DRAFT$/)
  await app.close()
})

t.test('setup mistakes in handlers are 500s, never wrong envelopes', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  app.get('/plain', async (_request, reply) => reply.sendCollection({ items: [], hasNext: false, hasPrevious: false, next: null, previous: null }))
  app.get('/plain-query', async (request) => collectionQueryOf(request))
  app.get('/uncounted', { config: { collection: { fields } } }, async (request, reply) => {
    const page = queryMemory(docs, collectionQueryOf(request), fields)
    return reply.sendCollection({ ...page, totalCount: undefined })
  })
  app.get('/counted', { config: { collection: { fields } } }, async (request, reply) => reply.sendCollection(queryMemory(docs, collectionQueryOf(request), fields)))
  const bare = Fastify()
  await bare.register(problem)
  bare.get('/bare', async (request) => buildEnvelope(request, { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }))
  for (const [server, url] of [[app, '/plain'], [app, '/plain-query'], [app, '/uncounted?offset=0&totalCount=true'], [bare, '/bare']] as const) {
    const res = await server.inject(url)
    t.equal(res.statusCode, 500, url)
    t.equal(res.json().title, 'Internal Server Error')
  }
  const fine = await app.inject('/uncounted?offset=0')
  t.equal(fine.statusCode, 200, 'totalCount is needed only when asked')
  t.equal((await app.inject('/counted?offset=0&totalCount=true')).json().paging.totalCount, docs.length)
  await app.close()
  await bare.close()
})

t.test('the envelope serializes through the suite\'s Collection response schema unchanged', async (t) => {
  const Summary = Type.Object({ id: Type.String(), name: Type.String() })
  const app = await build(t, {
    setup: (app) => {
      registerCollection(app, {
        url: '/v1/summaries',
        collection: { fields },
        schema: { response: { 200: Collection(Summary) } },
        handler: async (request, reply) => reply.sendCollection(queryMemory(docs, collectionQueryOf(request), fields))
      })
    }
  })
  for (const q of ['limit=2', 'limit=2&offset=2&totalCount=true', 'limit=2&offset=24']) {
    const plain = await get(app, `${PATH}?${q}`)
    const res = await get(app, `/v1/summaries?${q}`)
    t.equal(res.status, 200, q)
    t.strictSame(res.body.results, plain.body.results.map((d: { id: string, name: string }) => ({ id: d.id, name: d.name })), `${q}: items as the schema says`)
    t.strictSame(Object.keys(res.body.paging), Object.keys(plain.body.paging), `${q}: every paging member kept`)
    t.strictSame(res.body.paging.limit, plain.body.paging.limit)
  }
  const search = await app.inject({ method: 'POST', url: '/v1/summaries/search', payload: { paging: { limit: 1 } } })
  t.strictSame(Object.keys(search.json().paging), ['limit', 'next', 'previous'])
})
