import { request as httpRequest } from 'node:http'
import { createHash } from 'node:crypto'
import t from 'tap'
import { parse as parseDisposition } from 'content-disposition'
import { databases } from '../support/databases.js'
import { headers, leaksNothing, token, unique } from '../resource/helper.js'
import { serviceClient, startService } from './service.js'

// Black-box over real HTTP: the reference contract's "Document content"
// (/v1/documents/{documentId}/content), on both stores.

interface Raw { status: number, headers: Headers, bytes: Buffer, body: any }

const MiB = 1024 * 1024

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call, bodies } = serviceClient(base)
    const author = (await call('POST', '/v1/authors', { name: unique('Files Author'), email: 'files@example.com' })).body

    /** One request whose body and answer are bytes. */
    async function raw (method: string, path: string, body?: Buffer | FormData | string, extra: Record<string, string> = {}): Promise<Raw> {
      const res = await fetch(base + path, { method, headers: headers(extra), body })
      const bytes = Buffer.from(await res.arrayBuffer())
      const type = res.headers.get('content-type') ?? ''
      if (type.startsWith('application/problem+json')) bodies.push(bytes.toString('utf8'))
      return { status: res.status, headers: res.headers, bytes, body: type.includes('json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : null }
    }
    async function newDocument (): Promise<{ id: string, url: string, etag: string }> {
      const res = await call('POST', '/v1/documents', { name: unique('file'), authorId: author.id, kind: 'CONTRACT' })
      t.equal(res.status, 201)
      return { id: res.body.id, url: `/v1/documents/${res.body.id as string}`, etag: res.body.etag }
    }
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 7)])
    const sha = (b: Buffer): string => `"${createHash('sha256').update(b).digest('base64url')}"`

    t.test('PUT the raw body, then GET it back with its type, length, disposition and a strong ETag of the bytes', async t => {
      const doc = await newDocument()
      const put = await raw('PUT', `${doc.url}/content`, pdf, { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="report.pdf"', 'if-match': doc.etag })
      t.equal(put.status, 204)
      const entity = (await call('GET', doc.url)).body
      t.equal(put.headers.get('etag'), entity.etag, 'the document\'s new ETag')
      t.not(entity.etag, doc.etag)
      t.match(entity.content, { mediaType: 'application/pdf', filename: 'report.pdf', byteCount: String(pdf.length) })
      t.ok(Date.parse(entity.content.modifiedDateTime) >= Date.parse(entity.createdDateTime))
      t.equal(entity.modifiedBy, 'user-1')

      const got = await raw('GET', `${doc.url}/content`)
      t.equal(got.status, 200)
      t.ok(got.bytes.equals(pdf), 'the same bytes')
      t.equal(got.headers.get('content-type'), 'application/pdf')
      t.equal(got.headers.get('content-length'), String(pdf.length))
      // The parser's parameters are an object without a prototype: copied to compare the values.
      const disposition = parseDisposition(got.headers.get('content-disposition') as string)
      t.strictSame({ type: disposition.type, parameters: { ...disposition.parameters } }, { type: 'attachment', parameters: { filename: 'report.pdf' } })
      t.equal(got.headers.get('etag'), sha(pdf), 'strong, of the bytes')

      const head = await raw('HEAD', `${doc.url}/content`)
      t.equal(head.status, 200)
      t.equal(head.bytes.length, 0)
      t.equal(head.headers.get('content-length'), String(pdf.length))
      t.equal(head.headers.get('content-type'), 'application/pdf')
      t.equal(head.headers.get('etag'), sha(pdf))

      const cached = await raw('GET', `${doc.url}/content`, undefined, { 'if-none-match': sha(pdf) })
      t.equal(cached.status, 304)
      t.equal(cached.bytes.length, 0)
      t.equal(cached.headers.get('etag'), sha(pdf))
      t.equal((await raw('GET', `${doc.url}/content`, undefined, { 'if-none-match': '"other"' })).status, 200)

      const summary = (await call('GET', `/v1/documents?name=${encodeURIComponent(entity.name as string)}`)).body.results[0]
      t.strictSame(summary.content, entity.content, 'in the collection\'s summaries too')
    })

    t.test('Accept must admit the stored type; a wildcard does', async t => {
      const doc = await newDocument()
      t.equal((await raw('PUT', `${doc.url}/content`, pdf, { 'content-type': 'application/pdf', 'if-match': doc.etag })).status, 204)
      const cases: Array<[string, number]> = [
        ['image/png', 406], ['application/json', 406], ['text/*', 406], ['application/pdf;q=0, */*', 406],
        ['*/*', 200], ['application/*', 200], ['application/pdf', 200], ['image/png, application/pdf;q=0.1', 200]
      ]
      for (const [accept, status] of cases) {
        const res = await raw('GET', `${doc.url}/content`, undefined, { accept })
        t.equal(res.status, status, `Accept: ${accept}`)
        if (status === 406) t.match(res.body, { status: 406, detail: /application\/pdf/ })
      }
    })

    t.test('non-ASCII filenames round-trip: filename fallback in ASCII, filename* in UTF-8', async t => {
      const names = ['報告書 2024.pdf', 'rocket 🚀.pdf', 'say "hi"; now.pdf', 'naïve café.pdf', 'plain.pdf']
      for (const name of names) {
        const doc = await newDocument()
        const sent = `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&')}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`
        t.equal((await raw('PUT', `${doc.url}/content`, Buffer.from('x'), { 'content-type': 'application/octet-stream', 'content-disposition': sent, 'if-match': doc.etag })).status, 204, name)
        t.equal((await call('GET', doc.url)).body.content.filename, name, `${name}: the name as sent`)
        const header = (await raw('GET', `${doc.url}/content`)).headers.get('content-disposition') as string
        t.ok(/^[\x20-\x7e]*$/.test(header), `${name}: the header is ASCII`)
        const parsed = parseDisposition(header)
        t.equal(parsed.type, 'attachment')
        t.equal(parsed.parameters.filename, name, `${name}: read back by a client`)
        t.match(parseDisposition(header, { extended: false }).parameters.filename, /^[\x20-\x7e]+$/, `${name}: an ASCII fallback`)
        if (/[^\x20-\x7e]/.test(name)) t.match(header, /filename\*=UTF-8''/, `${name}: filename*`)
      }
    })

    t.test('multipart/form-data: one part named file, its own type and name; another part is a 400', async t => {
      const doc = await newDocument()
      const form = new FormData()
      form.append('file', new Blob(['hello, 世界'], { type: 'text/plain' }), 'grüße.txt')
      t.equal((await raw('PUT', `${doc.url}/content`, form, { 'if-match': doc.etag })).status, 204)
      const entity = (await call('GET', doc.url)).body
      t.match(entity.content, { mediaType: 'text/plain; charset=UTF-8', filename: 'grüße.txt', byteCount: String(Buffer.byteLength('hello, 世界')) })
      const got = await raw('GET', `${doc.url}/content`)
      t.equal(got.bytes.toString('utf8'), 'hello, 世界')
      t.equal(got.headers.get('content-type'), 'text/plain; charset=UTF-8')

      const two = new FormData()
      two.append('file', new Blob(['a'], { type: 'application/pdf' }), 'a.pdf')
      two.append('comment', 'unexpected')
      const second = await raw('PUT', `${doc.url}/content`, two, { 'if-match': entity.etag })
      t.equal(second.status, 400, 'a second part')
      t.match(second.body, { context: [{ field: 'file', source: 'body' }] })
      const other = new FormData()
      other.append('attachment', new Blob(['a'], { type: 'application/pdf' }), 'a.pdf')
      t.equal((await raw('PUT', `${doc.url}/content`, other, { 'if-match': entity.etag })).status, 400, 'a part with another name')
      const none = new FormData()
      none.append('note', 'no file')
      t.equal((await raw('PUT', `${doc.url}/content`, none, { 'if-match': entity.etag })).status, 400, 'no file part')
      const badType = new FormData()
      badType.append('file', new Blob(['{}'], { type: 'application/json' }), 'a.json')
      t.equal((await raw('PUT', `${doc.url}/content`, badType, { 'if-match': entity.etag })).status, 415, 'a file part of another type')
      const after = (await call('GET', doc.url)).body
      t.strictSame(after.content, entity.content, 'nothing changed by the refusals')
      t.equal(after.etag, entity.etag)
    })

    t.test('413 above 10 MiB, 415 for other types, 428 without If-Match, 412 on a stale one, 404 for an unknown document', async t => {
      const doc = await newDocument()
      const big = await raw('PUT', `${doc.url}/content`, Buffer.alloc(10 * MiB + 1), { 'content-type': 'application/pdf', 'if-match': doc.etag })
      t.equal(big.status, 413)
      t.match(big.body, { status: 413, detail: /10485760/ })
      const exact = await raw('PUT', `${doc.url}/content`, Buffer.alloc(10 * MiB, 1), { 'content-type': 'application/pdf', 'if-match': doc.etag })
      t.equal(exact.status, 204, 'exactly 10 MiB')
      const etag = exact.headers.get('etag') as string
      const bigForm = new FormData()
      bigForm.append('file', new Blob([Buffer.alloc(10 * MiB + 1)], { type: 'application/pdf' }), 'big.pdf')
      t.equal((await raw('PUT', `${doc.url}/content`, bigForm, { 'if-match': etag })).status, 413, 'multipart too')
      for (const type of ['application/json', 'image/gif', 'text/plain; charset=ISO-8859-1']) {
        t.equal((await raw('PUT', `${doc.url}/content`, Buffer.from('x'), { 'content-type': type, 'if-match': etag })).status, 415, type)
      }
      t.equal((await raw('PUT', `${doc.url}/content`, Buffer.from('x'), { 'content-type': 'image/png' })).status, 428)
      t.equal((await raw('PUT', `${doc.url}/content`, Buffer.from('x'), { 'content-type': 'image/png', 'if-match': doc.etag })).status, 412)
      t.equal((await raw('DELETE', `${doc.url}/content`)).status, 428)
      t.equal((await raw('DELETE', `${doc.url}/content`, undefined, { 'if-match': doc.etag })).status, 412)
      t.equal((await raw('PUT', '/v1/documents/unknown-doc/content', Buffer.from('x'), { 'content-type': 'image/png', 'if-match': '"x"' })).status, 404)
      t.equal((await raw('GET', '/v1/documents/unknown-doc/content')).status, 404)
      t.equal((await call('GET', doc.url)).body.content.byteCount, String(10 * MiB), 'the refusals stored nothing')
    })

    t.test('no content: 404; DELETE removes it and clears the field', async t => {
      const doc = await newDocument()
      const none = await raw('GET', `${doc.url}/content`)
      t.equal(none.status, 404)
      t.match(none.body, { status: 404, instance: `${doc.url}/content` })
      t.equal((await raw('HEAD', `${doc.url}/content`)).status, 404)
      const put = await raw('PUT', `${doc.url}/content`, Buffer.from([0x89, 0x50, 0x4e, 0x47]), { 'content-type': 'image/png', 'if-match': doc.etag })
      const del = await raw('DELETE', `${doc.url}/content`, undefined, { 'if-match': put.headers.get('etag') as string })
      t.equal(del.status, 204)
      const entity = (await call('GET', doc.url)).body
      t.equal(entity.content, null)
      t.equal(entity.etag, del.headers.get('etag'))
      t.equal((await raw('GET', `${doc.url}/content`)).status, 404)
    })

    t.test('a deleted document: PUT and DELETE of its content 409, reads still answer', async t => {
      const doc = await newDocument()
      const put = await raw('PUT', `${doc.url}/content`, pdf, { 'content-type': 'application/pdf', 'if-match': doc.etag })
      const etag = put.headers.get('etag') as string
      t.equal((await call('DELETE', doc.url, undefined, { 'if-match': etag })).status, 204)
      const deleted = (await call('GET', doc.url)).body
      const again = await raw('PUT', `${doc.url}/content`, pdf, { 'content-type': 'application/pdf', 'if-match': deleted.etag })
      t.equal(again.status, 409)
      t.match(again.body.detail, /restore/)
      t.equal((await raw('DELETE', `${doc.url}/content`, undefined, { 'if-match': deleted.etag })).status, 409)
      const got = await raw('GET', `${doc.url}/content`)
      t.equal(got.status, 200)
      t.ok(got.bytes.equals(pdf))
      t.equal((await raw('HEAD', `${doc.url}/content`)).status, 200)
    })

    t.test('an upload cut off in the middle stores nothing', async t => {
      const doc = await newDocument()
      const url = new URL(`${doc.url}/content`, base)
      await new Promise<void>((resolve) => {
        const req = httpRequest(url, { method: 'PUT', headers: headers({ 'content-type': 'application/pdf', 'content-length': String(2 * MiB), 'if-match': doc.etag }) })
        req.on('error', () => resolve())
        req.on('response', () => resolve())
        // Half the body, then the connection closes.
        req.write(Buffer.alloc(MiB), () => { setImmediate(() => { req.destroy(); resolve() }) })
      })
      // A write happens only once the whole body is in: the document stays as it was.
      const entity = (await call('GET', doc.url)).body
      t.equal(entity.content, null, 'no content')
      t.equal(entity.etag, doc.etag, 'not changed')
      t.equal((await raw('GET', `${doc.url}/content`)).status, 404)
      // Then a whole one is taken.
      t.equal((await raw('PUT', `${doc.url}/content`, pdf, { 'content-type': 'application/pdf', 'if-match': doc.etag })).status, 204)
    })

    t.test('scopes: documents:read for GET and HEAD, documents:write for PUT and DELETE', async t => {
      const doc = await newDocument()
      const read = { authorization: `Bearer ${token('user-1', ['documents:read'])}` }
      const write = { authorization: `Bearer ${token('user-1', ['documents:write'])}` }
      t.equal((await raw('PUT', `${doc.url}/content`, pdf, { ...read, 'content-type': 'application/pdf', 'if-match': doc.etag })).status, 403)
      const put = await raw('PUT', `${doc.url}/content`, pdf, { ...write, 'content-type': 'application/pdf', 'if-match': doc.etag })
      t.equal(put.status, 204)
      t.equal((await raw('GET', `${doc.url}/content`, undefined, write)).status, 403)
      t.equal((await raw('GET', `${doc.url}/content`, undefined, read)).status, 200)
      t.equal((await raw('DELETE', `${doc.url}/content`, undefined, { ...read, 'if-match': put.headers.get('etag') as string })).status, 403)
    })

    t.test('no problem body leaks internals', async t => {
      t.ok(bodies.every(leaksNothing))
    })
  })
}
