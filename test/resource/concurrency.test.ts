import t from 'tap'
import { databases } from '../support/databases.js'
import { build, headers, idemKey, listen, unique, type Json } from './helper.js'

// Races over real HTTP: requests fired in parallel at a listening server (and, on a
// PostgreSQL server, at two service instances sharing one database).

const N = 8

interface Answer { status: number, body: Json | null, headers: Headers }

async function call (base: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const h: Record<string, string> = headers(extra)
  if (body !== undefined) h['content-type'] ??= method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
  const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers }
}

function count (answers: Answer[], status: number): number {
  return answers.filter(a => a.status === status).length
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t, { pool: { max: N + 2 } })
    const app = await build(t, store)
    const base = await listen(app)
    const author = (await call(base, 'POST', '/v1/authors', { name: 'Ann', email: 'ann@example.com' })).body as Json

    async function doc (): Promise<Json> {
      const res = await call(base, 'POST', '/v1/documents', { name: unique(), authorId: author.id, kind: 'INVOICE' })
      if (res.status !== 201) throw new Error(JSON.stringify(res.body))
      return res.body as Json
    }

    t.test('compare-and-set: of N parallel PATCHes with one If-Match exactly one wins', async t => {
      const d = await doc()
      const answers = await Promise.all(Array.from({ length: N }, (_, i) =>
        call(base, 'PATCH', `/v1/documents/${d.id as string}`, { pageCount: i + 1 }, { 'if-match': d.etag })))
      t.equal(count(answers, 204), 1, 'one 204')
      t.equal(count(answers, 412), N - 1, 'the others 412')
      const winner = answers.findIndex(a => a.status === 204)
      const now = (await call(base, 'GET', `/v1/documents/${d.id as string}`)).body as Json
      t.equal(now.pageCount, winner + 1, 'the winner\'s change is the stored one')
    })

    t.test('compare-and-set: of N parallel PUTs and DELETEs with one If-Match exactly one wins', async t => {
      const d = await doc()
      const url = `/v1/documents/${d.id as string}`
      const answers = await Promise.all(Array.from({ length: N }, (_, i) => i % 2 === 0
        ? call(base, 'PUT', url, { name: d.name, authorId: author.id, kind: 'CONTRACT', pageCount: i }, { 'if-match': d.etag })
        : call(base, 'DELETE', url, undefined, { 'if-match': d.etag })))
      const wins = answers.filter(a => a.status === 204)
      // A DELETE losing to a DELETE finds nothing and answers 204 (already gone); to a PUT, 412.
      const putWins = answers.filter((a, i) => i % 2 === 0 && a.status === 204).length
      const after = await call(base, 'GET', url)
      if (putWins === 1) {
        t.equal(after.status, 200)
        t.equal(after.body?.deletedDateTime, null, 'not deleted')
        t.equal(wins.length, 1, 'only the PUT won')
      } else {
        t.equal(putWins, 0)
        // Documents are soft-deleted: the deletion shows.
        t.equal(after.status, 200)
        t.type(after.body?.deletedDateTime, 'string', 'a DELETE won')
      }
      t.equal(count(answers, 204) + count(answers, 412), N)
    })

    t.test('PATCHes without If-Match do not lose updates', async t => {
      const res = await call(base, 'POST', '/v1/authors', { name: 'Counter', email: 'c@example.com' })
      const a = res.body as Json
      const answers = await Promise.all(Array.from({ length: N }, (_, i) =>
        call(base, 'PATCH', `/v1/authors/${a.id as string}`, { name: `n${i}` })))
      // No precondition was asked for, so none can fail: each merge is applied in turn.
      t.equal(count(answers, 204), N, JSON.stringify(answers.find(a => a.status !== 204)?.body))
      const after = await call(base, 'GET', `/v1/authors/${a.id as string}`)
      t.ok(Array.from({ length: N }, (_, i) => `n${i}`).includes((after.body as Json).name), 'the last merge is stored')
    })

    t.test('unique race: of N parallel POSTs of one name exactly one is created', async t => {
      const name = unique('race')
      const answers = await Promise.all(Array.from({ length: N }, () =>
        call(base, 'POST', '/v1/documents', { name, authorId: author.id, kind: 'INVOICE' })))
      t.equal(count(answers, 201), 1)
      t.equal(count(answers, 409), N - 1)
      for (const a of answers.filter(x => x.status === 409)) t.equal(a.body?.context[0].code, 'UNIQUE_NAME_VIOLATION')
    })

    t.test('idempotency: N parallel POSTs with one key create one entity; the others 409 naming it', async t => {
      const key = idemKey()
      const name = unique('idem')
      const answers = await Promise.all(Array.from({ length: N }, () =>
        call(base, 'POST', '/v1/documents', { name, authorId: author.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })))
      t.equal(count(answers, 201), 1)
      t.equal(count(answers, 409), N - 1)
      const created = answers.find(a => a.status === 201) as Answer
      for (const a of answers.filter(x => x.status === 409)) {
        t.equal(a.body?.instance, created.headers.get('location'), 'the 409 names the first resource')
        t.notOk(a.body?.context, 'not a unique-name conflict: the key decided')
      }
    })

    t.test('idempotency: two service instances on one database', { skip: db.sibling === undefined ? 'needs a PostgreSQL server: PGlite is one process' : false }, async t => {
      const other = await (db.sibling as NonNullable<typeof db.sibling>)(t, store, { pool: { max: N + 2 } })
      const app2 = await build(t, other)
      const base2 = await listen(app2)
      const key = idemKey()
      const name = unique('two')
      const answers = await Promise.all(Array.from({ length: N }, (_, i) =>
        call(i % 2 === 0 ? base : base2, 'POST', '/v1/documents', { name, authorId: author.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })))
      t.equal(count(answers, 201), 1)
      t.equal(count(answers, 409), N - 1)
      const d = answers.find(a => a.status === 201)?.body as Json
      const patchKey = idemKey()
      const patches = await Promise.all(Array.from({ length: N }, (_, i) =>
        call(i % 2 === 0 ? base : base2, 'PATCH', `/v1/documents/${d.id as string}`, { pageCount: 7 }, { 'svc-idempotency-key': patchKey, 'if-match': d.etag })))
      t.equal(count(patches, 204), N, 'a repeated PATCH answers 2xx')
      const now = (await call(base2, 'GET', `/v1/documents/${d.id as string}`)).body as Json
      t.equal(now.pageCount, 7)
      t.not(now.etag, d.etag)
    })
  })
}
