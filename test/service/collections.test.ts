import t from 'tap'
import { databases } from '../support/databases.js'
import { leaksNothing } from '../resource/helper.js'
import { serviceClient, startService, type Answer } from './service.js'

// Black-box over real HTTP: the reference service's collections (reference-service.md,
// Collections), on PGlite and on a PostgreSQL server.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call, bodies } = serviceClient(base)
    const get = async (path: string, extra?: Record<string, string>): Promise<Answer> => await call('GET', path, undefined, extra)

    const ann = (await call('POST', '/v1/authors', { name: 'Ann', email: 'ann@example.com' })).body
    const bob = (await call('POST', '/v1/authors', { name: 'Bob', email: 'bob@example.com', active: false })).body
    const kinds = ['INVOICE', 'CONTRACT', 'PURCHASE_ORDER']
    for (let i = 0; i < 25; i++) {
      const res = await call('POST', '/v1/documents', {
        name: `doc-${String(i).padStart(2, '0')}`,
        authorId: i % 5 === 0 ? bob.id : ann.id,
        kind: kinds[i % 3],
        pageCount: i,
        amount: i % 4 === 0 ? null : `${i}.25`,
        tags: i % 2 === 0 ? ['even', `n${i}`] : ['odd'],
        metadata: i % 3 === 0 ? null : { source: { system: i % 2 === 0 ? 'erp' : 'crm', region: null } },
        reviewSchedule: i % 5 === 1 ? '0 9 * * 1' : i % 5 === 2 ? '0 9 * * *' : null
      })
      t.equal(res.status, 201)
    }

    t.test('default limit 20, cursor paging that walks forward and back without skips or repeats', async t => {
      const first = await get('/v1/documents')
      t.equal(first.status, 200)
      t.equal(first.body.results.length, 20)
      t.equal(first.body.paging.limit, 20)
      t.equal(first.body.paging.previous, null)
      t.notOk('pages' in first.body.results[0], 'items are summaries without pages')
      t.match(first.headers.get('etag'), /^"[^"]+"$/, 'a collection ETag')
      const next = new URL(first.body.paging.next.url)
      t.equal(next.origin, base, 'a complete URL')
      const second = await get(next.pathname + next.search)
      t.equal(second.body.results.length, 5)
      t.equal(second.body.paging.next, null)
      const ids = [...first.body.results, ...second.body.results].map((d: { id: string }) => d.id)
      t.equal(new Set(ids).size, 25, 'every document once')
      const prev = new URL(second.body.paging.previous.url)
      const back = await get(prev.pathname + prev.search)
      t.strictSame(back.body.results.map((d: { id: string }) => d.id), first.body.results.map((d: { id: string }) => d.id), 'previous walks back')
      const again = await get('/v1/documents', { 'if-none-match': first.headers.get('etag') as string })
      t.equal(again.status, 304, 'If-None-Match on the collection ETag')
      const searched = await call('POST', '/v1/documents/search', {}, { 'if-none-match': first.headers.get('etag') as string })
      t.equal(searched.status, 200, 'a search is not answered 304')
      t.equal(searched.headers.get('etag'), first.headers.get('etag'), 'a search carries the ETag of the same page')
    })

    t.test('limit rules, offset paging and totalCount', async t => {
      const max = await get('/v1/documents?limit=500')
      t.equal(max.body.paging.limit, 100, 'above the maximum the maximum applies')
      for (const limit of [2147483648, 1e30]) {
        t.equal((await get(`/v1/documents?limit=${BigInt(limit)}`)).body.paging.limit, 100, `however large: ${limit}`)
        t.equal((await call('POST', '/v1/documents/search', { paging: { limit } })).body.paging.limit, 100, `however large, in a search: ${limit}`)
      }
      const zero = await get('/v1/documents?limit=0')
      t.equal(zero.status, 400)
      t.match(zero.body.context, [{ code: 'INPUT_MIN_VALUE', field: 'limit', source: 'query' }])
      const both = await get('/v1/documents?offset=0&cursor=abc')
      t.equal(both.status, 400)
      const offset = await get('/v1/documents?offset=20&limit=10&totalCount=true&ordering=name')
      t.equal(offset.status, 200)
      t.strictSame(offset.body.results.map((d: { name: string }) => d.name), ['doc-20', 'doc-21', 'doc-22', 'doc-23', 'doc-24'])
      t.equal(offset.body.paging.totalCount, 25)
      t.equal(offset.body.paging.offset, 20)
      const near = await get('/v1/documents?limit=7&offset=3&ordering=name')
      t.equal(near.body.paging.previous.url, `${base}/v1/documents?limit=7&offset=0&ordering=name`, 'the previous page carries the current limit')
      const tampered = await get('/v1/documents?cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
      t.equal(tampered.status, 400)
      t.match(tampered.body.context, [{ field: 'cursor' }])
    })

    t.test('simple, FIQL and hybrid filters; ordering allow-list', async t => {
      const table: Array<[string, number]> = [
        ['kind=INVOICE', 9],
        ['kind=INVOICE&kind=CONTRACT', 17],
        ['tags=odd', 12],
        ['name=doc-1*', 10],
        [`authorId=${bob.id as string}`, 5],
        ['metadata.source.system=erp', 8],
        [`filter=${encodeURIComponent('pageCount=ge=10;amount=isnull=false')}`, 11],
        [`filter=${encodeURIComponent('amount!=1.25')}`, 17],
        [`filter=${encodeURIComponent('amount=gt=9.5,kind=out=(INVOICE,CONTRACT)')}`, 15],
        [`metadataFilter=${encodeURIComponent('source.system==erp;source.region=isnull=true')}`, 8],
        [`pageCountFilter=${encodeURIComponent('pageCount=lt=3')}&pageCountFilter=${encodeURIComponent('pageCount=gt=22')}`, 5],
        [`filter=${encodeURIComponent('name=containsic=DOC-0')}`, 10],
        // A * inside a simple filter value is a character; only one at the start or end is a wildcard.
        [`reviewSchedule=${encodeURIComponent('0 9 * * 1')}`, 5],
        [`reviewSchedule=${encodeURIComponent('0 9 * * *')}`, 10]
      ]
      for (const [query, count] of table) {
        const res = await get(`/v1/documents?limit=100&${query}`)
        t.equal(res.status, 200, query)
        t.equal(res.body.results.length, count, `${query}: ${count} documents`)
      }
      const ordered = await get(`/v1/documents?limit=3&ordering=-amount&ordering=name&filter=${encodeURIComponent('amount=isnull=false')}`)
      t.strictSame(ordered.body.results.map((d: { amount: string | null }) => d.amount), ['23.25', '22.25', '21.25'], 'decimals ordered numerically')
      const nullsFirst = await get('/v1/documents?limit=8&ordering=-amount&ordering=name')
      t.strictSame(nullsFirst.body.results.map((d: { amount: string | null }) => d.amount), [null, null, null, null, null, null, null, '23.25'], 'null sorts as the greatest value: first when descending')
      const refused: Array<[string, string]> = [
        ['ordering=description', 'ordering'],
        ['unknownParam=1', 'unknownParam'],
        [`filter=${encodeURIComponent('pageCount==1')}&nameFilter=${encodeURIComponent('name==x')}`, 'filter'],
        [`filter=${encodeURIComponent('pageCount=lt=abc')}`, 'filter'],
        [`filter=${encodeURIComponent('(pageCount==1')}`, 'filter'],
        ['status=UNKNOWN', 'status'],
        // Durations, intervals and schedules have no order their text gives (P1Y < P2D as text).
        [`filter=${encodeURIComponent('retentionDuration=lt=P2D')}`, 'filter'],
        [`filter=${encodeURIComponent('validityInterval=ge=2024-01-01T00:00:00Z/P1D')}`, 'filter'],
        [`reviewScheduleFilter=${encodeURIComponent('reviewSchedule=gt=0 9 * * 1')}`, 'reviewScheduleFilter']
      ]
      for (const [query, field] of refused) {
        const res = await get(`/v1/documents?${query}`)
        t.equal(res.status, 400, query)
        t.ok(res.body.context.some((c: { field: string, source: string }) => c.field === field && c.source === 'query'), `${query}: names ${field}`)
      }
      const authors = await get('/v1/authors?active=false')
      t.strictSame(authors.body.results.map((a: { name: string }) => a.name), ['Bob'])
      const byId = await get(`/v1/authors?id=${ann.id as string}`)
      t.strictSame(byId.body.results.map((a: { name: string }) => a.name), ['Ann'], 'the id is a summary scalar too')
      const byIds = await get(`/v1/authors?filter=${encodeURIComponent(`id=in=(${ann.id as string},${bob.id as string})`)}&ordering=name`)
      t.strictSame(byIds.body.results.map((a: { name: string }) => a.name), ['Ann', 'Bob'])
    })

    t.test('every scalar of the summary filters: refs as their text, etag, deletedBy', async t => {
      const all = (await get('/v1/documents?limit=100&ordering=name')).body.results as Array<Record<string, string>>
      const [d0, d1, d2] = all as [Record<string, string>, Record<string, string>, Record<string, string>]
      const enc = encodeURIComponent
      // [query, the names of the documents it selects]
      const table: Array<[string, string[]]> = [
        [`ref=${enc(d0.ref as string)}`, ['doc-00']],
        [`ref=${enc(d0.ref as string)}&ref=${enc(d2.ref as string)}`, ['doc-00', 'doc-02']],
        // A ref is its text: a bare id, or another entity's prefix, names nothing.
        [`ref=${enc(d0.id as string)}`, []],
        [`ref=${enc(`svc:author::${d0.id as string}`)}`, []],
        [`filter=${enc(`ref=in=(${d1.ref as string},${d1.id as string})`)}`, ['doc-01']],
        [`filter=${enc(`ref=in=(${d1.id as string})`)}`, []],
        [`filter=${enc(`ref!=${d0.ref as string};name==doc-0*`)}`, ['doc-01', 'doc-02', 'doc-03', 'doc-04', 'doc-05', 'doc-06', 'doc-07', 'doc-08', 'doc-09']],
        [`filter=${enc(`ref=out=(${d0.ref as string},${d1.id as string});name=lt=doc-03`)}`, ['doc-01', 'doc-02']],
        [`refFilter=${enc(`ref==svc:document::${(d2.id as string).slice(0, 8)}*`)}`, ['doc-02']],
        [`filter=${enc('ref=startswith=svc:document::;pageCount=lt=3')}`, ['doc-00', 'doc-01', 'doc-02']],
        [`filter=${enc('ref=isnull=true')}`, []],
        [`authorRef=${enc(bob.ref as string)}`, ['doc-00', 'doc-05', 'doc-10', 'doc-15', 'doc-20']],
        [`filter=${enc(`authorRef=out=(${ann.ref as string});pageCount=ge=10`)}`, ['doc-10', 'doc-15', 'doc-20']],
        [`authorRefFilter=${enc(`authorRef=endswith=${(bob.id as string).slice(-6)}`)}&pageCount=0`, ['doc-00']],
        [`etag=${enc(d1.etag as string)}`, ['doc-01']],
        // An ETag holds double quotes: in FIQL, a value in single quotes keeps them.
        [`etagFilter=${enc(`etag=='${d1.etag as string}',etag=='${d2.etag as string}'`)}`, ['doc-01', 'doc-02']],
        ['deletedBy=', all.map(d => d.name as string)],
        ['deletedBy=user-1', []]
      ]
      for (const [query, names] of table) {
        const res = await get(`/v1/documents?limit=100&ordering=name&${query}`)
        t.equal(res.status, 200, query)
        t.strictSame(res.body.results.map((d: { name: string }) => d.name), names, query)
      }
      const searched = await call('POST', '/v1/documents/search', { ref: [d0.ref, d1.id], ordering: 'name' })
      t.strictSame(searched.body.results.map((d: { name: string }) => d.name), ['doc-00'], 'a search filters on refs too')
      const authorsTable: Array<[string, string[]]> = [
        [`ref=${enc(ann.ref as string)}`, ['Ann']],
        [`refFilter=${enc(`ref=in=(${ann.ref as string},${bob.ref as string})`)}`, ['Ann', 'Bob']],
        [`etag=${enc(bob.etag as string)}`, ['Bob']]
      ]
      for (const [query, names] of authorsTable) {
        t.strictSame((await get(`/v1/authors?ordering=name&${query}`)).body.results.map((a: { name: string }) => a.name), names, query)
      }
      // Deleted documents are listed when a filter names their deletion; then deletedBy selects them.
      const gone = await call('POST', '/v1/documents', { name: 'gone', authorId: ann.id, kind: 'INVOICE' })
      t.equal((await call('DELETE', `/v1/documents/${gone.body.id as string}`, undefined, { 'if-match': gone.body.etag })).status, 204)
      const deleted = await get(`/v1/documents?filter=${enc('deletedBy==user-1;deletedDateTime=isnull=false')}`)
      t.strictSame(deleted.body.results.map((d: { name: string }) => d.name), ['gone'])
    })

    t.test('the child collection and search by POST', async t => {
      const own = await get(`/v1/authors/${bob.id as string}/documents?ordering=pageCount`)
      t.equal(own.status, 200)
      t.strictSame(own.body.results.map((d: { pageCount: number }) => d.pageCount), [0, 5, 10, 15, 20])
      const missing = await get('/v1/authors/nobody/documents')
      t.equal(missing.status, 404)
      t.equal(missing.body.instance, '/v1/authors/nobody')
      t.match(missing.body.detail, /\/v1\/authors\/nobody/)
      const searched = await call('POST', '/v1/documents/search', { kind: ['INVOICE', 'CONTRACT'], ordering: ['-pageCount'], paging: { limit: 2 } })
      t.equal(searched.status, 200)
      t.strictSame(searched.body.results.map((d: { pageCount: number }) => d.pageCount), [24, 22])
      const viaGet = await get('/v1/documents?kind=INVOICE&kind=CONTRACT&ordering=-pageCount&limit=2')
      t.strictSame(searched.body.results, viaGet.body.results, 'the same page as the GET form')
      const mixed = await call('POST', '/v1/documents/search?limit=2', { paging: { limit: 2 } })
      t.equal(mixed.status, 400, 'paging never both in the query and the body')
    })

    t.test('execution contexts partition collections too', async t => {
      const pre = await get('/v1/documents', { 'svc-execution-context': 'preprod' })
      t.equal(pre.status, 200)
      t.strictSame(pre.body.results, [], 'an empty collection is 200 with no results')
    })

    t.test('no SQL, stack or internals in any body', async t => {
      for (const b of bodies) t.ok(leaksNothing(b))
    })
  })
}
