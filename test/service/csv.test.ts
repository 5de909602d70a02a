import t from 'tap'
import { parse } from 'csv-parse/sync'
import { databases } from '../support/databases.js'
import { headers } from '../resource/helper.js'
import { serviceClient, startService } from './service.js'

// Black-box over real HTTP: the reference service's "Collections as CSV" (reference-service.md),
// on PGlite and on a PostgreSQL server.

interface Reply { status: number, headers: Headers, text: string }

/** Every record of a CSV body as read by a maintained parser; fails the test on anything not RFC 4180. */
function records (text: string): string[][] {
  return parse(text, { relax_column_count: false, record_delimiter: '\r\n' }) as string[][]
}

/** The rows of a CSV page as objects by header name. */
function rows (text: string): Array<Record<string, string>> {
  const [header, ...rest] = records(text)
  return rest.map((r) => Object.fromEntries((header as string[]).map((name, i) => [name, r[i] as string])))
}

function links (header: string | null): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]+)>;\s*rel="(\w+)"$/.exec(part.trim())
    if (m !== null) out[m[2] as string] = m[1] as string
  }
  return out
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call } = serviceClient(base)
    const get = async (path: string, accept: string | undefined, extra: Record<string, string> = {}, method = 'GET'): Promise<Reply> => {
      const h = headers(accept === undefined ? extra : { accept, ...extra })
      const res = await fetch(base + path, { method, headers: h })
      return { status: res.status, headers: res.headers, text: await res.text() }
    }

    const ann = (await call('POST', '/v1/authors', { name: 'Ann, "the" author', email: 'ann@example.com' })).body
    const bob = (await call('POST', '/v1/authors', { name: 'Bob', email: 'bob@example.com', active: false })).body
    const names = ['plain', 'comma, inside', 'quote "inside"', 'line\r\nbreak', 'Grüße 日本語 😀', 'trailing space ']
    for (let i = 0; i < 25; i++) {
      const res = await call('POST', '/v1/documents', {
        name: i < names.length ? names[i] : `doc-${String(i).padStart(2, '0')}`,
        description: i === 1 ? 'lf only\nhere' : null,
        authorId: i % 5 === 0 ? bob.id : ann.id,
        kind: i % 2 === 0 ? 'INVOICE' : 'CONTRACT',
        pageCount: i,
        amount: i % 4 === 0 ? null : `${i}.25`,
        tags: i % 2 === 0 ? ['even', `n${i}`] : [],
        metadata: i % 3 === 0 ? null : { source: { system: i % 2 === 0 ? 'erp' : 'crm', region: i === 1 ? 'eu,west' : null } }
      })
      t.equal(res.status, 201)
    }
    const doc0 = (await call('GET', '/v1/documents?name=plain')).body.results[0]

    t.test('the Accept table: JSON whenever it is acceptable, CSV when only CSV is, 406 when neither', async t => {
      const cases: Array<[string | undefined, 'json' | 'csv' | 406]> = [
        [undefined, 'json'],
        ['*/*', 'json'],
        ['application/json', 'json'],
        ['text/csv, application/json', 'json'],
        ['application/json, text/csv', 'json'],
        ['text/csv;q=1, application/json;q=0.1', 'json'],
        ['text/csv, */*;q=0.01', 'json'],
        ['text/csv', 'csv'],
        ['text/*', 'csv'],
        ['text/csv; charset=utf-8', 'csv'],
        ['TEXT/CSV', 'csv'],
        ['application/json;q=0, text/csv', 'csv'],
        ['application/json;q=0, */*', 'csv'],
        ['image/png', 406],
        ['text/html', 406],
        ['text/csv;q=0, application/json;q=0', 406]
      ]
      for (const [accept, expected] of cases) {
        const res = await get('/v1/documents', accept)
        const label = `Accept ${JSON.stringify(accept)}`
        if (expected === 406) {
          t.equal(res.status, 406, label)
          t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', label)
          t.match(JSON.parse(res.text).detail, `the Accept header ${JSON.stringify(accept)}`, `${label}: detail names the Accept value`)
          continue
        }
        t.equal(res.status, 200, label)
        t.equal(res.headers.get('vary'), 'Accept', `${label}: Vary`)
        if (expected === 'json') {
          t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8', label)
          t.ok(Array.isArray(JSON.parse(res.text).results), label)
        } else {
          t.equal(res.headers.get('content-type'), 'text/csv; charset=UTF-8', label)
          t.equal(rows(res.text).length, 20, `${label}: the default limit`)
        }
      }
    })

    t.test('the header row is the summary\'s fields in schema order, nested ones dotted, no pages', async t => {
      const res = await get('/v1/documents?limit=1&name=plain', 'text/csv')
      const [header, row] = records(res.text) as [string[], string[]]
      const summary = Object.keys((await call('GET', '/v1/documents?limit=1&name=plain')).body.results[0])
      // `content` (a file's description, null here) is left to the tests of document content.
      const expected = summary.filter((k) => k !== 'content').flatMap((k) => k === 'metadata' ? ['metadata.source.system', 'metadata.source.region'] : [k])
      t.strictSame(header.filter((h) => h !== 'content' && !h.startsWith('content.')), expected, 'the JSON summary\'s fields, in order, metadata flattened')
      t.notOk(header.includes('pages'))
      t.equal(row[header.indexOf('id')], doc0.id)
      t.equal(row[header.indexOf('amount')], '', 'null is an empty field')
      t.equal(row[header.indexOf('metadata.source.system')], '', 'a null object empties its columns')
      t.equal(row[header.indexOf('tags')], 'even|n0', 'arrays joined with |')
      t.equal(row[header.indexOf('pageCount')], '0')
      t.equal(row[header.indexOf('etag')], doc0.etag)
      t.match(res.text, /^id,ref,/, 'the header row first')
      t.ok(res.text.endsWith('\r\n'), 'CRLF after the last record')
      t.notMatch(res.text.replace(/\r\n/g, ''), /(^|[^"])\n/, 'no bare LF outside quotes')
    })

    t.test('RFC 4180 quoting: commas, quotes, CR/LF and non-ASCII survive a maintained parser', async t => {
      const res = await get('/v1/documents?limit=100&ordering=pageCount', 'text/csv')
      const all = rows(res.text)
      t.strictSame(all.slice(0, names.length).map((r) => r.name), names)
      t.equal(all[1]?.description, 'lf only\nhere')
      t.equal(all[1]?.['metadata.source.region'], 'eu,west')
      t.equal(all[2]?.['metadata.source.system'], 'erp')
      t.equal(all[1]?.tags, '', 'an empty array is an empty field')
      t.match(res.text, '"comma, inside"')
      t.match(res.text, '"quote ""inside"""')
      t.match(res.text, '"line\r\nbreak"')
      t.match(res.text, 'Grüße 日本語 😀', 'UTF-8, unquoted')
      const authors = rows((await get('/v1/authors?ordering=name', 'text/csv')).text)
      t.strictSame(authors.map((a) => [a.name, a.active]), [['Ann, "the" author', 'true'], ['Bob', 'false']])
    })

    t.test('paging: the same limits as JSON, the other pages in Link', async t => {
      const first = await get('/v1/documents?limit=10&ordering=pageCount', 'text/csv')
      t.equal(rows(first.text).length, 10)
      const l1 = links(first.headers.get('link'))
      t.strictSame(Object.keys(l1), ['next'], 'no previous on the first page')
      const json = JSON.parse((await get('/v1/documents?limit=10&ordering=pageCount', 'application/json')).text)
      t.equal(l1.next, json.paging.next.url, 'the URL the JSON envelope gives')
      const nextUrl = new URL(l1.next as string)
      t.equal(nextUrl.origin, base)
      const second = await get(nextUrl.pathname + nextUrl.search, 'text/csv')
      t.strictSame(rows(second.text).map((r) => r.pageCount), ['10', '11', '12', '13', '14', '15', '16', '17', '18', '19'])
      const l2 = links(second.headers.get('link'))
      t.strictSame(Object.keys(l2).sort(), ['next', 'prev'])
      const prevUrl = new URL(l2.prev as string)
      const back = await get(prevUrl.pathname + prevUrl.search, 'text/csv')
      t.equal(back.text, first.text, 'prev walks back to the same page')

      const offset = await get('/v1/documents?limit=10&offset=20&ordering=pageCount', 'text/csv')
      t.strictSame(rows(offset.text).map((r) => r.pageCount), ['20', '21', '22', '23', '24'])
      t.strictSame(Object.keys(links(offset.headers.get('link'))), ['prev'])
      const one = await get('/v1/documents?limit=100', 'text/csv')
      t.equal(one.headers.get('link'), null, 'one page: no Link')

      const max = await get('/v1/documents?limit=500', 'text/csv')
      t.equal(max.status, 200, 'above the maximum the maximum applies')
      t.equal(rows(max.text).length, 25)
      const zero = await get('/v1/documents?limit=0', 'text/csv')
      t.equal(zero.status, 400)
      t.match(JSON.parse(zero.text).context, [{ code: 'INPUT_MIN_VALUE', field: 'limit', source: 'query' }])
      t.equal((await get('/v1/documents?colour=red', 'text/csv')).status, 400, 'unknown parameters as with JSON')
    })

    t.test('filters and ordering are honoured', async t => {
      const filtered = rows((await get('/v1/documents?kind=CONTRACT&ordering=-pageCount&filter=pageCount=lt=8', 'text/csv')).text)
      t.strictSame(filtered.map((r) => r.pageCount), ['7', '5', '3', '1'])
      t.ok(filtered.every((r) => r.kind === 'CONTRACT'))
      const tagged = rows((await get('/v1/documents?tags=n4', 'text/csv')).text)
      t.strictSame(tagged.map((r) => r.pageCount), ['4'])
      const hybrid = rows((await get('/v1/documents?metadataFilter=source.system==crm&ordering=pageCount&limit=3', 'text/csv')).text)
      t.strictSame(hybrid.map((r) => r['metadata.source.system']), ['crm', 'crm', 'crm'])
      const empty = await get('/v1/documents?name=nothing', 'text/csv')
      t.equal(empty.status, 200)
      t.strictSame(records(empty.text).length, 1, 'the header row alone')
    })

    t.test('child collections and pages answer CSV too; a missing parent is still a 404 problem', async t => {
      const bobs = rows((await get(`/v1/authors/${bob.id as string}/documents?ordering=pageCount`, 'text/csv')).text)
      t.strictSame(bobs.map((r) => r.pageCount), ['0', '5', '10', '15', '20'])
      const missing = await get('/v1/authors/nobody/documents', 'text/csv')
      t.equal(missing.status, 404)
      t.equal(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8')

      const pages = [{ number: 2, description: 'two, "quoted"', imageUrl: null }, { number: 1, description: null, imageUrl: 'https://example.com/1.png' }, { number: 3, description: 'три', imageUrl: null }]
      t.equal((await call('PUT', `/v1/documents/${doc0.id as string}/pages`, { results: pages }, { 'if-match': doc0.etag })).status, 204)
      const res = await get(`/v1/documents/${doc0.id as string}/pages?limit=2`, 'text/csv')
      t.equal(res.headers.get('content-type'), 'text/csv; charset=UTF-8')
      t.strictSame(records(res.text), [['number', 'description', 'imageUrl'], ['1', '', 'https://example.com/1.png'], ['2', 'two, "quoted"', '']])
      const next = new URL(links(res.headers.get('link')).next as string)
      t.strictSame(records((await get(next.pathname + next.search, 'text/csv')).text), [['number', 'description', 'imageUrl'], ['3', 'три', '']])
      const desc = records((await get(`/v1/documents/${doc0.id as string}/pages?ordering=-number`, 'text/csv')).text)
      t.strictSame(desc.slice(1).map((r) => r[0]), ['3', '2', '1'])
      t.equal((await get('/v1/documents/nothing/pages', 'text/csv')).status, 404)
    })

    t.test('a limit above the maximum: 100 records, and the next page asks for 100', async t => {
      const doc = (await call('GET', '/v1/documents?name=doc-10')).body.results[0]
      const pages = Array.from({ length: 150 }, (_, i) => ({ number: i + 1, description: null, imageUrl: null }))
      t.equal((await call('PUT', `/v1/documents/${doc.id as string}/pages`, { results: pages }, { 'if-match': doc.etag })).status, 204)
      const res = await get(`/v1/documents/${doc.id as string}/pages?limit=500`, 'text/csv')
      t.equal(res.status, 200)
      t.equal(rows(res.text).length, 100)
      const next = new URL(links(res.headers.get('link')).next as string)
      t.equal(next.searchParams.get('limit'), '100', 'the maximum, as paging.limit says in JSON')
      t.equal(rows((await get(next.pathname + next.search, 'text/csv')).text).length, 50)
    })

    t.test('ETag over the CSV body, 304 on a match, HEAD with the CSV headers', async t => {
      const csv = await get('/v1/authors', 'text/csv')
      const json = await get('/v1/authors', 'application/json')
      const etag = csv.headers.get('etag') as string
      t.match(etag, /^"[^"]+"$/)
      t.not(etag, json.headers.get('etag'), 'each representation has its own tag')
      const again = await get('/v1/authors', 'text/csv', { 'if-none-match': etag })
      t.equal(again.status, 304)
      t.equal(again.text, '')
      t.equal((await get('/v1/authors', 'application/json', { 'if-none-match': etag })).status, 200, 'the CSV tag does not match the JSON page')
      const head = await get('/v1/authors', 'text/csv', {}, 'HEAD')
      t.equal(head.status, 200)
      t.equal(head.text, '')
      t.equal(head.headers.get('content-type'), 'text/csv; charset=UTF-8')
      t.equal(head.headers.get('content-length'), String(Buffer.byteLength(csv.text)))
      t.equal(head.headers.get('etag'), etag)
    })

    t.test('POST search stays JSON', async t => {
      const res = await call('POST', '/v1/documents/search', { kind: 'CONTRACT' }, { accept: 'application/json' })
      t.equal(res.status, 200)
      const csvOnly = await fetch(`${base}/v1/documents/search`, { method: 'POST', headers: headers({ accept: 'text/csv', 'content-type': 'application/json' }), body: '{}' })
      t.equal(csvOnly.status, 406)
    })
  })
}
