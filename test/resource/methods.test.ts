import t from 'tap'
import { databases } from '../support/databases.js'
import { build, client, headers, json, leaksNothing, unique } from './helper.js'

// The method semantics of the convention (Method rules, status mapping) for the reference
// resources, over PGlite and a PostgreSQL server.

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store)
    const api = client(app)

    async function author (name = 'Ann'): Promise<Record<string, any>> {
      const res = await api.post('/v1/authors', { name, email: 'ann@example.com' })
      if (res.statusCode !== 201) throw new Error(res.body)
      return json(res)
    }

    async function document (authorId: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
      const res = await api.post('/v1/documents', { name: unique(), authorId, kind: 'INVOICE', ...extra })
      if (res.statusCode !== 201) throw new Error(res.body)
      return json(res)
    }

    t.test('POST creates: 201, Location, ETag equal to the etag property, the whole entity', async t => {
      const res = await api.post('/v1/authors', { name: 'Ann', email: 'ann@example.com' })
      t.equal(res.statusCode, 201)
      const body = json(res)
      t.match(body.id, UUID)
      t.equal(res.headers.location, `/v1/authors/${body.id as string}`)
      t.equal(res.headers.etag, body.etag)
      t.match(body.etag, /^"[A-Za-z0-9_-]+"$/, 'a strong entity tag, quoted as the header carries it')
      t.strictSame(body, {
        id: body.id,
        ref: `svc:author::${body.id as string}`,
        name: 'Ann',
        email: 'ann@example.com',
        active: true,
        createdDateTime: body.createdDateTime,
        createdBy: 'user-1',
        modifiedDateTime: body.createdDateTime,
        modifiedBy: 'user-1',
        etag: body.etag
      })
      t.match(body.createdDateTime, DATE_TIME)
    })

    t.test('a document keeps every type: nulls written, defaults applied, numbers as strings, UTC milliseconds', async t => {
      const a = await author()
      const name = unique()
      const res = await api.post('/v1/documents', {
        name,
        authorId: a.id,
        kind: 'CONTRACT',
        byteCount: '9223372036854775807',
        amount: '-123456789012345.1234',
        discountPercentage: '12.5',
        tags: ['b', 'a'],
        pages: [{ number: 1, imageUrl: 'https://example.com/1.png' }, { number: 2, description: 'two', imageUrl: null }],
        retentionDuration: 'P1Y2M',
        validityInterval: '2024-01-01T00:00:00Z/P1D',
        reviewSchedule: '0 9 * * MON-FRI',
        effectiveDate: '2024-02-29',
        publishedDateTime: '2024-05-01T12:00:00Z',
        metadata: { source: { system: 'erp' } }
      })
      t.equal(res.statusCode, 201, res.body)
      const d = json(res)
      t.strictSame(d, {
        id: d.id,
        ref: `svc:document::${d.id as string}`,
        name,
        description: null,
        authorId: a.id,
        status: 'DRAFT',
        kind: 'CONTRACT',
        pageCount: 0,
        byteCount: '9223372036854775807',
        amount: '-123456789012345.1234',
        discountPercentage: '12.5',
        tags: ['b', 'a'],
        pages: [
          { number: 1, description: null, imageUrl: 'https://example.com/1.png' },
          { number: 2, description: 'two', imageUrl: null }
        ],
        retentionDuration: 'P1Y2M',
        validityInterval: '2024-01-01T00:00:00Z/P1D',
        reviewSchedule: '0 9 * * MON-FRI',
        effectiveDate: '2024-02-29',
        publishedDateTime: '2024-05-01T12:00:00.000Z',
        metadata: { source: { system: 'erp', region: null } },
        fingerprint: null,
        content: null,
        authorRef: `svc:author::${a.id as string}`,
        createdDateTime: d.createdDateTime,
        createdBy: 'user-1',
        modifiedDateTime: d.modifiedDateTime,
        modifiedBy: 'user-1',
        etag: d.etag,
        deletedDateTime: null,
        deletedBy: null
      })
      const got = await api.get(`/v1/documents/${d.id as string}`)
      t.strictSame(json(got), d, 'GET reads back exactly what POST returned')
    })

    t.test('GET: 200 with ETag; HEAD: the same without a body; unknown: 404 naming it', async t => {
      const a = await author()
      const res = await api.get(`/v1/authors/${a.id as string}`)
      t.equal(res.statusCode, 200)
      t.equal(res.headers.etag, a.etag)
      t.strictSame(json(res), a)
      const head = await api.head(`/v1/authors/${a.id as string}`)
      t.equal(head.statusCode, 200)
      t.equal(head.headers.etag, a.etag)
      t.equal(head.body, '')
      const missing = await api.get('/v1/authors/nobody')
      t.equal(missing.statusCode, 404)
      t.equal(json(missing).instance, '/v1/authors/nobody')
      t.match(json(missing).detail, 'nobody')
      t.equal((await api.head('/v1/authors/nobody')).statusCode, 404)
      const bad = await api.get('/v1/authors/not%20an%20id')
      t.equal(bad.statusCode, 400, 'an id outside the identifier alphabet is invalid')
    })

    t.test('conditional GET: If-None-Match gives 304 without a body, If-Match a 412', async t => {
      const a = await author()
      const url = `/v1/authors/${a.id as string}`
      const cases: Array<[Record<string, string>, number]> = [
        [{ 'if-none-match': a.etag }, 304],
        [{ 'if-none-match': `W/${a.etag as string}` }, 304],
        [{ 'if-none-match': `"other", ${a.etag as string}` }, 304],
        [{ 'if-none-match': '*' }, 304],
        [{ 'if-none-match': '"other"' }, 200],
        [{ 'if-match': a.etag }, 200],
        [{ 'if-match': '"other"' }, 412],
        [{ 'if-match': `W/${a.etag as string}` }, 412],
        [{ 'if-match': '*' }, 200],
        [{ 'if-match': 'unquoted' }, 400],
        [{ 'if-none-match': '"a" "b"' }, 400]
      ]
      for (const [h, status] of cases) {
        const res = await api.get(url, h)
        t.equal(res.statusCode, status, JSON.stringify(h))
        if (status === 304) {
          t.equal(res.body, '')
          t.equal(res.headers.etag, a.etag)
          t.notOk(res.headers['content-type'])
        }
        if (status === 400) t.equal(json(res).context[0].source, 'header')
        if (status === 412) t.match(json(res).detail, 'If-Match')
      }
      const head = await api.head(url, { 'if-none-match': a.etag })
      t.equal(head.statusCode, 304)
    })

    t.test('HEAD answers GET\'s status and headers: Content-Length the 200\'s, none on a 304 (RFC 9110 §8.6)', async t => {
      const a = await author()
      const url = `/v1/authors/${a.id as string}`
      const length = String(Buffer.byteLength((await api.get(url)).body))
      const cases: Array<[string, Record<string, string>, number, string | undefined]> = [
        ['no condition', {}, 200, length],
        ['another If-None-Match', { 'if-none-match': '"other"' }, 200, length],
        ['the current If-Match', { 'if-match': a.etag as string }, 200, length],
        ['a matching If-None-Match', { 'if-none-match': a.etag as string }, 304, undefined],
        ['If-None-Match: *', { 'if-none-match': '*' }, 304, undefined]
      ]
      for (const [name, h, status, contentLength] of cases) {
        const get = await api.get(url, h)
        const head = await api.head(url, h)
        t.equal(head.statusCode, status, name)
        t.equal(get.statusCode, status, `${name}: as GET`)
        t.equal(head.body, '', `${name}: no body`)
        t.equal(head.headers['content-length'], contentLength, `${name}: Content-Length`)
        t.equal(head.headers.etag, a.etag, `${name}: the ETag`)
        t.equal(head.headers['content-type'], get.headers['content-type'], `${name}: GET's Content-Type`)
      }
      const stale = await api.head(url, { 'if-match': '"other"' })
      t.equal(stale.statusCode, 412, 'a stale If-Match: 412 as on GET')
      t.equal((await api.head('/v1/authors/nobody')).statusCode, 404)
    })

    t.test('read-only fields in POST, PUT and PATCH bodies: 400 INPUT_INVALID naming each', async t => {
      const a = await author()
      const d = await document(a.id)
      const ro = { id: 'x', ref: 'svc:document::x', etag: '"x"', createdDateTime: '2024-01-01T00:00:00Z', createdBy: 'u', modifiedDateTime: '2024-01-01T00:00:00Z', modifiedBy: 'u', authorRef: 'svc:author::x', fingerprint: 'abc' }
      const post = await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE', ...ro })
      t.equal(post.statusCode, 400)
      const fields = json(post).context.map((c: Record<string, string>) => c.field).sort()
      t.strictSame(fields, Object.keys(ro).sort())
      for (const c of json(post).context) {
        t.equal(c.code, 'INPUT_INVALID')
        t.equal(c.source, 'body')
        t.match(c.message, 'read-only')
      }
      const { id: _id, ...roButId } = ro
      const put = await api.put(`/v1/documents/${d.id as string}`, { name: d.name, authorId: a.id, kind: 'INVOICE', ...roButId }, { 'if-match': d.etag })
      t.equal(put.statusCode, 400)
      t.equal(json(put).context.length, Object.keys(roButId).length)
      const patch = await api.patch(`/v1/documents/${d.id as string}`, { fingerprint: 'x', etag: '"y"' }, { 'if-match': d.etag })
      t.equal(patch.statusCode, 400)
      t.strictSame(json(patch).context.map((c: Record<string, string>) => c.field).sort(), ['etag', 'fingerprint'])
    })

    t.test('validation: one context item per violation, never stored', async t => {
      const res = await api.post('/v1/documents', { name: '', kind: 'MEMO', pageCount: -1, amount: 1.5, tags: ['a', 'a'] })
      t.equal(res.statusCode, 400)
      const items = json(res).context as Array<Record<string, string>>
      const byField = Object.fromEntries(items.map(i => [i.field, i.code]))
      t.equal(byField.name, 'INPUT_BLANK')
      t.equal(byField.authorId, 'INPUT_NULL')
      t.equal(byField.kind, 'INPUT_INVALID')
      t.equal(byField.pageCount, 'INPUT_MIN_VALUE')
      t.equal(byField.amount, 'INPUT_INVALID')
      t.equal(byField.tags, 'INPUT_INVALID')
      t.ok(items.every(i => i.source === 'body'))
      const unknown = await api.post('/v1/authors', { name: 'A', email: 'a@example.com', nickname: 'x' })
      t.equal(unknown.statusCode, 400)
      t.equal(json(unknown).context[0].field, 'nickname')
    })

    t.test('PUT creates a new id and replaces an existing one entirely', async t => {
      const id = `author-${unique('put')}`
      const url = `/v1/authors/${id}`
      const created = await api.put(url, { name: 'Bea', email: 'bea@example.com', active: false })
      t.equal(created.statusCode, 204)
      t.equal(created.body, '')
      t.notOk(created.headers.location, 'Location goes only with 201')
      const first = json(await api.get(url))
      t.match(first, { id, ref: `svc:author::${id}`, name: 'Bea', active: false, createdBy: 'user-1' })
      const replaced = await app.inject({ method: 'PUT', url, headers: headers({ 'content-type': 'application/json' }, 'user-2'), payload: { id, name: 'Bea B', email: 'bea@example.com' } })
      t.equal(replaced.statusCode, 204, 'a body id equal to the path is accepted')
      const second = json(await api.get(url))
      t.equal(second.active, true, 'an omitted field goes back to its default')
      t.equal(second.name, 'Bea B')
      t.equal(second.createdDateTime, first.createdDateTime, 'creation stamps stay')
      t.equal(second.createdBy, 'user-1')
      t.equal(second.modifiedBy, 'user-2')
      t.not(second.etag, first.etag)
      const mismatch = await api.put(url, { id: 'other', name: 'X', email: 'x@example.com' })
      t.equal(mismatch.statusCode, 400)
      t.match(json(mismatch).context[0], { field: 'id', code: 'INPUT_INVALID', source: 'body', value: 'other' })
    })

    t.test('PUT of a document resets omitted optional fields and keeps the read-only ones', async t => {
      const a = await author()
      const d = await document(a.id, { description: 'text', status: 'PUBLISHED', tags: ['x'], amount: '1.5', metadata: { source: null } })
      const url = `/v1/documents/${d.id as string}`
      const res = await api.put(url, { name: d.name, authorId: a.id, kind: 'INVOICE' }, { 'if-match': d.etag })
      t.equal(res.statusCode, 204, res.body)
      const after = json(await api.get(url))
      t.match(after, { description: null, status: 'DRAFT', tags: [], amount: null, metadata: null, fingerprint: null, pageCount: 0 })
    })

    t.test('PUT preconditions: 428 without If-Match on documents, 412 on a stale one, If-None-Match: * creates only', async t => {
      const a = await author()
      const d = await document(a.id)
      const url = `/v1/documents/${d.id as string}`
      const body = { name: d.name, authorId: a.id, kind: 'INVOICE' }
      const missing = await api.put(url, body)
      t.equal(missing.statusCode, 428)
      t.match(json(missing).detail, 'If-Match')
      t.equal((await api.put(url, body, { 'if-match': '"stale"' })).statusCode, 412)
      t.equal((await api.put(url, body, { 'if-none-match': '*' })).statusCode, 412, 'it exists')
      t.equal((await api.put(url, body, { 'if-match': d.etag, 'if-none-match': '*' })).statusCode, 412)
      t.equal((await api.put(url, body, { 'if-match': d.etag, 'if-none-match': d.etag })).statusCode, 412)
      t.equal((await api.put(url, body, { 'if-match': `"x", ${d.etag as string}`, 'if-none-match': '"other"' })).statusCode, 204)
      const newUrl = `/v1/documents/${unique('new')}`
      t.equal((await api.put(newUrl, { ...body, name: unique() }, { 'if-match': '*' })).statusCode, 412, 'If-Match: * needs a current one')
      t.equal((await api.put(newUrl, { ...body, name: unique() }, { 'if-none-match': '*' })).statusCode, 204, 'created')
      t.equal((await api.get(newUrl)).statusCode, 200)
    })

    t.test('PUT on authors: If-Match optional, If-None-Match with a list', async t => {
      const a = await author()
      const url = `/v1/authors/${a.id as string}`
      const body = { name: 'N', email: 'n@example.com' }
      t.equal((await api.put(url, body, { 'if-none-match': a.etag })).statusCode, 412)
      t.equal((await api.put(url, body, { 'if-none-match': '"other"' })).statusCode, 204)
      t.equal((await api.put(url, body, { 'if-match': a.etag })).statusCode, 412, 'the ETag changed with the last PUT')
    })

    t.test('PATCH is JSON Merge Patch', async t => {
      const a = await author()
      const b = await author('Bob')
      const base = {
        description: 'first',
        status: 'PUBLISHED',
        pageCount: 3,
        tags: ['a', 'b'],
        pages: [{ number: 1 }],
        metadata: { source: { system: 'erp', region: 'eu' } }
      }
      const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
        ['an empty patch changes nothing', {}, base],
        ['omitted fields are unchanged', { pageCount: 4 }, { ...base, pageCount: 4 }],
        ['null removes: back to null', { description: null }, { ...base, description: null }],
        ['null removes: back to the default', { status: null, tags: null, pageCount: null }, { ...base, status: 'DRAFT', tags: [], pageCount: 0 }],
        ['arrays are replaced whole', { tags: ['c'], pages: [{ number: 2, description: 'x' }] }, { ...base, tags: ['c'], pages: [{ number: 2, description: 'x', imageUrl: null }] }],
        ['nested objects merge', { metadata: { source: { region: null } } }, { ...base, metadata: { source: { system: 'erp', region: null } } }],
        ['a nested member is replaced', { metadata: { source: { system: 'crm' } } }, { ...base, metadata: { source: { system: 'crm', region: 'eu' } } }],
        ['a nested object removed', { metadata: { source: null } }, { ...base, metadata: { source: null } }],
        ['the whole object removed', { metadata: null }, { ...base, metadata: null }],
        ['a reference changes', { authorId: b.id }, { ...base, authorId: b.id, authorRef: `svc:author::${b.id as string}` }]
      ]
      for (const [name, patch, expected] of cases) {
        const d = await document(a.id, base)
        const url = `/v1/documents/${d.id as string}`
        const res = await api.patch(url, patch, { 'if-match': d.etag })
        t.equal(res.statusCode, 204, `${name}: ${res.body}`)
        t.equal(res.body, '')
        const after = json(await api.get(url))
        t.match(after, expected, name)
        t.not(after.etag, d.etag, `${name}: a new ETag`)
        t.equal(after.createdDateTime, d.createdDateTime)
      }
    })

    t.test('PATCH: the merged entity is validated; bad patches are 400', async t => {
      const a = await author()
      const d = await document(a.id)
      const url = `/v1/documents/${d.id as string}`
      const cases: Array<[string, unknown, string, string]> = [
        ['a required field removed', { name: null }, 'name', 'INPUT_NULL'],
        ['a required field removed (kind)', { kind: null }, 'kind', 'INPUT_NULL'],
        ['a nested required member missing after the merge', { metadata: { source: { region: 'eu' } } }, 'metadata.source.system', 'INPUT_NULL'],
        ['a wrong type', { pageCount: 'many' }, 'pageCount', 'INPUT_INVALID'],
        ['an unknown field', { colour: 'red' }, 'colour', 'INPUT_INVALID'],
        ['an unknown nested member', { metadata: { owner: 'x' } }, 'metadata.owner', 'INPUT_INVALID']
      ]
      for (const [name, patch, field, code] of cases) {
        const res = await api.patch(url, patch, { 'if-match': d.etag })
        t.equal(res.statusCode, 400, name)
        t.match(json(res).context, [{ field, code, source: 'body' }], name)
      }
      t.equal((await api.patch(url, [1, 2], { 'if-match': d.etag })).statusCode, 400, 'a patch is an object')
      t.equal(json(await api.get(url)).etag, d.etag, 'nothing was stored')
    })

    t.test('PATCH media types, preconditions and unknown ids', async t => {
      const a = await author()
      const d = await document(a.id)
      const url = `/v1/documents/${d.id as string}`
      t.equal((await api.patch(url, { pageCount: 1 })).statusCode, 428, 'documents require If-Match')
      t.equal((await api.patch(url, { pageCount: 1 }, { 'if-match': '"stale"' })).statusCode, 412)
      t.equal((await api.patch(url, { pageCount: 1 }, { 'if-match': d.etag, 'if-none-match': d.etag })).statusCode, 412)
      const plain = await api.patch(url, { pageCount: 2 }, { 'if-match': d.etag, 'content-type': 'application/json' })
      t.equal(plain.statusCode, 204, 'application/json is accepted too')
      const text = await api.patch(url, 'pageCount=3', { 'if-match': '*', 'content-type': 'text/plain' })
      t.equal(text.statusCode, 415)
      t.equal((await api.patch(url, { pageCount: 5 }, { 'if-match': '*' })).statusCode, 204, 'If-Match: * matches any')
      t.equal(json(await api.get(url)).pageCount, 5)
      const unknown = await api.patch('/v1/documents/nothing-here', { pageCount: 1 }, { 'if-match': '*' })
      t.equal(unknown.statusCode, 404)
      t.equal(json(unknown).instance, '/v1/documents/nothing-here')
      const authorPatch = await api.patch(`/v1/authors/${a.id as string}`, { active: false })
      t.equal(authorPatch.statusCode, 204, 'authors do not require If-Match')
      t.equal(json(await api.get(`/v1/authors/${a.id as string}`)).active, false)
    })

    t.test('DELETE: 204, also when gone; preconditions on documents', async t => {
      const a = await author()
      const url = `/v1/authors/${a.id as string}`
      t.equal((await api.delete(url)).statusCode, 204)
      t.equal((await api.get(url)).statusCode, 404)
      t.equal((await api.delete(url)).statusCode, 204, 'a repeated DELETE')
      const b = await author()
      const d = await document(b.id)
      const durl = `/v1/documents/${d.id as string}`
      t.equal((await api.delete(durl)).statusCode, 428)
      t.equal((await api.delete(durl, { 'if-match': '"stale"' })).statusCode, 412)
      t.equal((await api.delete(durl, { 'if-match': d.etag, 'if-none-match': '*' })).statusCode, 412, 'it exists')
      t.equal((await api.delete(durl, { 'if-match': d.etag, 'if-none-match': d.etag })).statusCode, 412)
      t.equal((await api.get(durl)).statusCode, 200, 'still there')
      t.equal((await api.delete(durl, { 'if-match': d.etag, 'if-none-match': '"x"' })).statusCode, 204)
      const deleted = await api.get(durl)
      t.equal(deleted.statusCode, 200, 'a document is soft-deleted')
      t.type(json(deleted).deletedDateTime, 'string')
      t.equal((await api.delete(durl, { 'if-match': d.etag })).statusCode, 204, 'deleted already: nothing changes, whatever the If-Match')
      t.equal(json(await api.get(durl)).etag, json(deleted).etag, 'nothing changed')
      t.equal((await api.delete(durl, { 'if-match': '*', 'if-none-match': '*' })).statusCode, 204, 'gone: If-None-Match: * holds')
    })

    t.test('query parameters on items and writes are refused, not ignored (filters apply to collection GETs only)', async t => {
      const a = await author(unique())
      const d = json(await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }))
      const table: Array<[string, () => Promise<{ statusCode: number, body: string }>, string[]]> = [
        ['POST action', async () => await api.post(`/v1/documents/${d.id as string}/publish?force=1`, {}), ['force']],
        ['DELETE', async () => await api.delete(`/v1/authors/${a.id as string}?name=zzz`), ['name']],
        ['GET', async () => await api.get(`/v1/authors/${a.id as string}?_=1&ordering=name`), ['_', 'ordering']],
        ['PUT', async () => await api.put(`/v1/authors/${a.id as string}?filter=x`, { name: a.name, email: 'ann@example.com' }), ['filter']],
        ['PATCH', async () => await api.patch(`/v1/authors/${a.id as string}?limit=1`, { email: 'x@example.com' }), ['limit']],
        ['POST', async () => await api.post('/v1/authors?ordering=name', { name: unique(), email: 'b@example.com' }), ['ordering']],
        ['POST child', async () => await api.post(`/v1/authors/${a.id as string}/documents?kind=INVOICE`, { name: unique(), kind: 'INVOICE' }), ['kind']]
      ]
      for (const [name, send, fields] of table) {
        const res = await send()
        t.equal(res.statusCode, 400, name)
        t.strictSame(json(res).context.map((c: { field: string, source: string }) => [c.field, c.source]), fields.map(f => [f, 'query']), `${name}: names each parameter`)
      }
      const still = await api.get(`/v1/authors/${a.id as string}`)
      t.equal(still.statusCode, 200, 'nothing was deleted')
      t.equal(json(still).email, 'ann@example.com', 'nor changed')
      t.equal(json(await api.get(`/v1/documents/${d.id as string}`)).status, 'DRAFT', 'nor published')
    })

    t.test('references: a missing author is 409, an author with documents cannot be deleted', async t => {
      const missing = await api.post('/v1/documents', { name: unique(), authorId: 'no-such-author', kind: 'INVOICE' })
      t.equal(missing.statusCode, 409)
      t.match(json(missing), { title: 'Conflict', context: [{ code: 'REFERENCE_NOT_FOUND', field: 'authorId', value: 'no-such-author', source: 'body' }] })
      t.match(json(missing).detail, 'no-such-author')
      const a = await author()
      const d = await document(a.id)
      const patch = await api.patch(`/v1/documents/${d.id as string}`, { authorId: 'gone' }, { 'if-match': d.etag })
      t.equal(patch.statusCode, 409)
      const del = await api.delete(`/v1/authors/${a.id as string}`)
      t.equal(del.statusCode, 409)
      t.match(json(del).detail, 'documents')
      t.equal(json(del).instance, `/v1/authors/${a.id as string}`)
      for (const res of [missing, patch, del]) t.ok(leaksNothing(res.body), res.body)
    })

    t.test('child collection: POST /v1/authors/{authorId}/documents', async t => {
      const a = await author()
      const res = await api.post(`/v1/authors/${a.id as string}/documents`, { name: unique(), kind: 'INVOICE' })
      t.equal(res.statusCode, 201, res.body)
      const d = json(res)
      t.equal(d.authorId, a.id)
      t.equal(res.headers.location, `/v1/documents/${d.id as string}`)
      t.equal((await api.post(`/v1/authors/${a.id as string}/documents`, { name: unique(), kind: 'INVOICE', authorId: a.id })).statusCode, 201)
      const other = await api.post(`/v1/authors/${a.id as string}/documents`, { name: unique(), kind: 'INVOICE', authorId: 'someone-else' })
      t.equal(other.statusCode, 400)
      t.equal(json(other).context[0].field, 'authorId')
      const orphan = await api.post('/v1/authors/nobody/documents', { name: unique(), kind: 'INVOICE' })
      t.equal(orphan.statusCode, 404)
      t.equal(json(orphan).instance, '/v1/authors/nobody')
      t.match(json(orphan).detail, '/v1/authors/nobody')
      const dup = await api.post(`/v1/authors/${a.id as string}/documents`, { name: d.name, kind: 'INVOICE' })
      t.equal(dup.statusCode, 409, 'other conflicts stay 409')
    })

    t.test('child collection: GET /v1/authors/{authorId}/documents lists the author\'s; none: 200; an unknown author, or another context\'s: 404', async t => {
      const a = await author()
      const b = await author()
      const d = await document(a.id)
      const listed = await api.get(`/v1/authors/${a.id as string}/documents`)
      t.equal(listed.statusCode, 200)
      t.strictSame(json(listed).results.map((r: { id: string }) => r.id), [d.id])
      const none = await api.get(`/v1/authors/${b.id as string}/documents`)
      t.equal(none.statusCode, 200, 'an author without documents')
      t.strictSame(json(none).results, [])
      const unknown = await api.get('/v1/authors/nobody/documents')
      t.equal(unknown.statusCode, 404)
      t.equal(json(unknown).instance, '/v1/authors/nobody')
      t.match(json(unknown).detail, 'No author exists at /v1/authors/nobody')
      const pre = client(app, { 'svc-execution-context': 'preprod' })
      t.equal((await pre.get(`/v1/authors/${a.id as string}/documents`)).statusCode, 404, 'not in another context, though it has documents here')
    })

    t.test('unique names: 409 naming the conflict on POST, PUT and PATCH', async t => {
      const a = await author()
      const d = await document(a.id)
      const e = await document(a.id)
      const post = await api.post('/v1/documents', { name: d.name, authorId: a.id, kind: 'INVOICE' })
      t.equal(post.statusCode, 409)
      t.strictSame(json(post).context, [{ code: 'UNIQUE_NAME_VIOLATION', message: 'must be unique among documents', field: 'name', source: 'body', value: d.name }])
      t.equal(json(post).detail, `A document named '${d.name as string}' already exists; choose another name.`)
      const put = await api.put(`/v1/documents/${e.id as string}`, { name: d.name, authorId: a.id, kind: 'INVOICE' }, { 'if-match': e.etag })
      t.equal(put.statusCode, 409)
      const patch = await api.patch(`/v1/documents/${e.id as string}`, { name: d.name }, { 'if-match': e.etag })
      t.equal(patch.statusCode, 409)
      t.equal(json(patch).context[0].value, d.name)
      for (const res of [post, put, patch]) t.ok(leaksNothing(res.body), res.body)
    })

    t.test('execution contexts partition the data', async t => {
      const pre = client(app, { 'svc-execution-context': 'preprod' })
      const res = await pre.post('/v1/authors', { name: 'Pre', email: 'pre@example.com' })
      t.equal(res.statusCode, 201)
      t.equal(res.headers['svc-execution-context'], 'preprod', 'echoed')
      const a = json(res)
      t.equal((await api.get(`/v1/authors/${a.id as string}`)).statusCode, 404, 'invisible in prod')
      t.equal((await pre.get(`/v1/authors/${a.id as string}`)).statusCode, 200)
      const prodAuthor = await author()
      t.equal((await pre.get(`/v1/authors/${prodAuthor.id as string}`)).statusCode, 404, 'and the other way round')
      const name = unique()
      t.equal((await pre.post('/v1/documents', { name, authorId: a.id, kind: 'INVOICE' })).statusCode, 201)
      t.equal((await api.post('/v1/documents', { name, authorId: prodAuthor.id, kind: 'INVOICE' })).statusCode, 201, 'names are unique per context')
      t.equal((await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' })).statusCode, 409, 'a preprod author is not a prod author')
      t.equal((await api.delete(`/v1/authors/${a.id as string}`)).statusCode, 204)
      t.equal((await pre.get(`/v1/authors/${a.id as string}`)).statusCode, 200, 'a prod DELETE leaves preprod alone')
      const put = await pre.put('/v1/authors/shared-id', { name: 'P', email: 'p@example.com' })
      t.equal(put.statusCode, 204)
      t.equal((await api.get('/v1/authors/shared-id')).statusCode, 404)
    })

    t.test('scopes: a token without the write scope is refused', async t => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/authors',
        headers: { 'user-agent': 'x/1', 'content-type': 'application/json', authorization: `Bearer ${(await import('./helper.js')).token('u', ['authors:read'])}` },
        payload: { name: 'A', email: 'a@example.com' }
      })
      t.equal(res.statusCode, 403)
    })
  })
}
