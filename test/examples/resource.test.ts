import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../../examples/resource.js'
import { signToken } from '../../plugins/auth/sign.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import type { Store } from '../../store/types.js'
import { postgres, type Teardown } from '../support/databases.js'

const jwtSecret = 'a test secret of at least thirty-two bytes'
const cursorSecret = 'a cursor secret of thirty-two bytes'
const token = (scope = 'books:read books:write'): string => signToken({ secret: jwtSecret, sub: 'alice', scope })
const headers = (extra: Record<string, string> = {}, scope?: string): Record<string, string> =>
  ({ 'user-agent': 'library-test/1.0', authorization: `Bearer ${token(scope)}`, ...extra })

const book = (isbn: string, pageCount: number, format = 'EBOOK'): Record<string, unknown> => ({ title: `Book ${isbn.slice(-3)}`, isbn, format, pageCount })

async function create (app: FastifyInstance, body: Record<string, unknown>): Promise<{ id: string, etag: string }> {
  const res = await app.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: body })
  if (res.statusCode !== 201) throw new Error(`POST /v1/books: ${res.statusCode} ${res.body}`)
  return res.json()
}

// The default store (DATA_DIR unset: PGlite in memory) once, a PostgreSQL server when there is one.
const engines = [
  { label: 'PGlite (the example\'s default store)', skip: false as const, open: async (_tt: Teardown) => await build({ jwtSecret, cursorSecret }) },
  { label: postgres.label, skip: postgres.skip, open: async (tt: Teardown) => await build({ jwtSecret, cursorSecret, store: await postgres.create(tt) }) }
]

for (const engine of engines) {
  t.test(`the book resource on ${engine.label}`, { skip: engine.skip }, async (t) => {
    const app = await engine.open(t)
    t.teardown(() => app.close())
    await app.ready()
    t.strictSame(lintOpenApi(app.swagger()), [], 'the OpenAPI document passes the convention linter')

    const created = await app.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: { title: 'Dune', isbn: '9780441013593', pageCount: 412 } })
    t.equal(created.statusCode, 201)
    const dune = created.json()
    t.equal(created.headers.location, `/v1/books/${dune.id}`)
    t.match(dune, { title: 'Dune', format: 'PAPERBACK', ref: `svc:book::${dune.id}`, createdBy: 'alice', modifiedBy: 'alice', createdDateTime: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ })

    const duplicate = await app.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: { title: 'Dune again', isbn: '9780441013593', pageCount: 1 } })
    t.equal(duplicate.statusCode, 409, 'the unique isbn is a database constraint')
    t.match(duplicate.json(), { title: 'Conflict', status: 409, context: [{ field: 'isbn' }] })

    const invalid = await app.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: { title: '', isbn: '123', pageCount: 0, id: 'mine', colour: 'red' } })
    t.equal(invalid.statusCode, 400)
    t.strictSame(invalid.json().context.map((c: { field: string }) => c.field).sort(), ['colour', 'id', 'isbn', 'pageCount', 'title'])

    const read = await app.inject({ url: `/v1/books/${dune.id}`, headers: headers({}, 'books:read') })
    t.equal(read.statusCode, 200)
    t.equal(read.headers.etag, dune.etag)
    const unchanged = await app.inject({ url: `/v1/books/${dune.id}`, headers: headers({ 'if-none-match': dune.etag }) })
    t.equal(unchanged.statusCode, 304)

    const patch = { 'content-type': 'application/merge-patch+json' }
    t.equal((await app.inject({ method: 'PATCH', url: `/v1/books/${dune.id}`, headers: headers(patch), payload: { pageCount: 896 } })).statusCode, 428, 'If-Match is required')
    t.equal((await app.inject({ method: 'PATCH', url: `/v1/books/${dune.id}`, headers: headers({ ...patch, 'if-match': '"stale"' }), payload: { pageCount: 896 } })).statusCode, 412)
    const patched = await app.inject({ method: 'PATCH', url: `/v1/books/${dune.id}`, headers: headers({ ...patch, 'if-match': dune.etag }), payload: { pageCount: 896 } })
    t.equal(patched.statusCode, 204)
    t.not(patched.headers.etag, dune.etag)

    t.equal((await app.inject({ method: 'POST', url: '/v1/books', headers: headers({}, 'books:read'), payload: book('9780000000001', 10) })).statusCode, 403, 'writing needs books:write')
    t.equal((await app.inject({ url: '/v1/books', headers: { 'user-agent': 'library-test/1.0' } })).statusCode, 401)

    for (const [isbn, pages] of [['9780000000101', 100], ['9780000000102', 300], ['9780000000103', 200]] as const) await create(app, book(isbn, pages))
    await create(app, book('9780000000104', 999, 'HARDCOVER'))
    const first = await app.inject({ url: '/v1/books?format=EBOOK&ordering=-pageCount&limit=2', headers: headers() })
    t.equal(first.statusCode, 200)
    const page = first.json()
    t.strictSame(page.results.map((b: { pageCount: number }) => b.pageCount), [300, 200])
    t.equal(page.paging.previous, null)
    const next = new URL(page.paging.next.url)
    const second = (await app.inject({ url: next.pathname + next.search, headers: headers() })).json()
    t.strictSame(second.results.map((b: { pageCount: number }) => b.pageCount), [100])
    t.equal(second.paging.next, null)

    const cursor = next.searchParams.get('cursor') ?? ''
    const tampered = await app.inject({ url: `/v1/books?format=EBOOK&ordering=-pageCount&limit=2&cursor=${cursor.slice(0, -2)}AA`, headers: headers() })
    t.equal(tampered.statusCode, 400, 'a tampered cursor is refused, not served')

    const fiql = await app.inject({ url: `/v1/books?filter=${encodeURIComponent('pageCount=ge=300;format=in=(EBOOK,PAPERBACK)')}&ordering=pageCount`, headers: headers() })
    t.strictSame(fiql.json().results.map((b: { isbn: string }) => b.isbn), ['9780000000102', '9780441013593'])
    const counted = await app.inject({ url: '/v1/books?offset=0&totalCount=true&title=Book*', headers: headers() })
    t.match(counted.json().paging, { offset: 0, totalCount: 4 })
    const unsortable = await app.inject({ url: '/v1/books?ordering=isbn', headers: headers() })
    t.equal(unsortable.statusCode, 400)

    const current = (await app.inject({ url: `/v1/books/${dune.id}`, headers: headers() })).headers.etag as string
    t.equal((await app.inject({ method: 'DELETE', url: `/v1/books/${dune.id}`, headers: headers({ 'if-match': current }) })).statusCode, 204)
    t.equal((await app.inject({ url: `/v1/books/${dune.id}`, headers: headers() })).statusCode, 404)
  })
}

t.test('missing secrets fail at boot, naming the option', async (t) => {
  // The boot fails before the store is touched.
  const store = {} as Store
  await t.rejects(build({ cursorSecret, store }), { name: 'TypeError', message: /secret/ })
  await t.rejects(build({ jwtSecret, store }), { name: 'TypeError', message: /cursorSecret/ })
})
