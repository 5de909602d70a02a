import t from 'tap'
import { connect } from 'node:net'
import { databases } from '../support/databases.js'
import { headers, leaksNothing, token, unique } from '../resource/helper.js'
import { serviceClient, startService } from './service.js'

// Black-box over real HTTP: the reference service's authors and documents as a client sees
// them (reference-service.md, "Behaviour per method"), headers and bodies as sent on the wire.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call, bodies } = serviceClient(base)

    t.test('an author and a document through their whole life', async t => {
      const created = await call('POST', '/v1/authors', { name: 'Ann Author', email: 'ann@example.com' }, { 'x-request-id': 'trace-1' })
      t.equal(created.status, 201)
      t.equal(created.headers.get('location'), `/v1/authors/${created.body.id as string}`)
      t.equal(created.headers.get('content-type'), 'application/json; charset=utf-8')
      t.equal(created.headers.get('cache-control'), 'no-store', 'authenticated responses are not stored')
      t.equal(created.headers.get('x-request-id'), 'trace-1')
      t.equal(created.headers.get('etag'), created.body.etag)
      const author = created.body

      const path = `/v1/authors/${author.id as string}/documents`
      const doc = await call('POST', path, { name: unique('life'), kind: 'PURCHASE_ORDER', tags: ['x'], amount: '10.2' })
      t.equal(doc.status, 201)
      t.equal(doc.body.authorRef, `svc:author::${author.id as string}`)
      const url = doc.headers.get('location') as string
      t.equal(url, `/v1/documents/${doc.body.id as string}`)

      const got = await call('GET', url)
      t.equal(got.status, 200)
      t.equal(got.headers.get('etag'), doc.body.etag)
      t.strictSame(got.body, doc.body)
      t.ok(got.text.includes('"description":null'), 'nulls are written, not left out')

      const head = await call('HEAD', url)
      t.equal(head.status, 200)
      t.equal(head.text, '')
      t.equal(head.headers.get('etag'), doc.body.etag)

      const notModified = await call('GET', url, undefined, { 'if-none-match': doc.body.etag })
      t.equal(notModified.status, 304)
      t.equal(notModified.text, '')

      const noMatch = await call('PATCH', url, { status: 'PUBLISHED' })
      t.equal(noMatch.status, 428)
      t.match(noMatch.headers.get('content-type'), /^application\/problem\+json/)
      const patched = await call('PATCH', url, { status: 'PUBLISHED', tags: ['y', 'z'] }, { 'if-match': doc.body.etag })
      t.equal(patched.status, 204)
      t.equal(patched.text, '')
      const afterPatch = (await call('GET', url)).body
      t.match(afterPatch, { status: 'PUBLISHED', tags: ['y', 'z'], amount: '10.2', kind: 'PURCHASE_ORDER' })
      t.equal((await call('PATCH', url, { pageCount: 1 }, { 'if-match': doc.body.etag })).status, 412, 'the old ETag is stale')

      const put = await call('PUT', url, { name: afterPatch.name, authorId: author.id, kind: 'INVOICE' }, { 'if-match': afterPatch.etag })
      t.equal(put.status, 204)
      const afterPut = (await call('GET', url)).body
      t.match(afterPut, { kind: 'INVOICE', status: 'DRAFT', tags: [], amount: null })

      t.equal((await call('DELETE', `/v1/authors/${author.id as string}`)).status, 409, 'the author still has a document')
      t.equal((await call('DELETE', url, undefined, { 'if-match': afterPut.etag })).status, 204)
      t.match((await call('GET', url)).body, { deletedDateTime: String }, 'soft-deleted')
      t.equal((await call('DELETE', `/v1/authors/${author.id as string}`)).status, 409, 'an author with documents, deleted or not')
      const other = (await call('POST', '/v1/authors', { name: `${author.name as string} 2`, email: 'other@example.com' })).body
      t.equal((await call('DELETE', `/v1/authors/${other.id as string}`)).status, 204)
      t.equal((await call('DELETE', `/v1/authors/${other.id as string}`)).status, 204, 'again: still 204')
    })

    t.test('OPTIONS and unsupported methods', async t => {
      const options = await fetch(`${base}/v1/documents/x`, { method: 'OPTIONS', headers: { 'user-agent': 'svc-tests/1' } })
      t.equal(options.status, 204)
      t.equal(options.headers.get('allow'), 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
      const collection = await fetch(`${base}/v1/authors/a/documents`, { method: 'OPTIONS', headers: { 'user-agent': 'svc-tests/1' } })
      t.equal(collection.headers.get('allow'), 'GET, HEAD, POST, OPTIONS')
      const post = await call('POST', '/v1/documents/x', { a: 1 })
      t.equal(post.status, 405)
      t.match(post.headers.get('allow'), 'PATCH')
      const unknown = await fetch(`${base}/nowhere`, { method: 'OPTIONS', headers: { 'user-agent': 'svc-tests/1', accept: 'text/html' } })
      t.equal(unknown.status, 404, 'an unknown path: 404 without a token, nothing negotiated')
      // Conventions, Search by POST: `<collection>/search` is the search route, not an item whose id is `search`.
      for (const path of ['/v1/authors/search', '/v1/documents/search', '/v1/authors/a/documents/search']) {
        const search = await fetch(`${base}${path}`, { method: 'OPTIONS', headers: { 'user-agent': 'svc-tests/1' } })
        t.equal(search.headers.get('allow'), 'POST, OPTIONS', `OPTIONS ${path}`)
        for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
          const refused = await call(method, path, method === 'GET' || method === 'DELETE' ? undefined : {})
          t.equal(refused.status, 405, `${method} ${path}`)
          t.equal(refused.headers.get('allow'), 'POST, OPTIONS', `${method} ${path}`)
          t.match(refused.body, { status: 405, detail: `The method ${method} is not supported at ${path}; use one of POST, OPTIONS.` })
        }
      }
    })

    t.test('raw HTTP/1.1 edge cases: no Host is a 400 problem; an unknown Expect is ignored', async t => {
      const { port } = new URL(base)
      const send = async (bytes: string): Promise<string> => await new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes))
        let data = ''
        socket.setEncoding('utf8')
        socket.on('data', (chunk: string) => { data += chunk })
        socket.on('error', reject)
        socket.on('close', () => { resolve(data) })
      })
      const noHost = await send('GET /v1/authors HTTP/1.1\r\nUser-Agent: svc-tests/1\r\nConnection: close\r\n\r\n')
      t.match(noHost, /^HTTP\/1\.1 400 /)
      t.match(noHost, /content-type: application\/problem\+json/i)
      t.match(JSON.parse(noHost.split('\r\n\r\n')[1] as string), { status: 400, detail: /Host header/ })
      const expect = await send('GET /health HTTP/1.1\r\nHost: x\r\nExpect: something\r\nConnection: close\r\n\r\n')
      t.match(expect, /^HTTP\/1\.1 200 /, 'served, not an empty 417')
      const latin1 = await fetch(`${base}/v1/authors`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: Buffer.concat([Buffer.from('{"name":"Ren'), Buffer.from([0xe9]), Buffer.from('","email":"r@example.com"}')]) })
      t.equal(latin1.status, 400, 'a body that is not UTF-8 is refused, not stored with U+FFFD')
      t.match(await latin1.json(), { detail: /not valid UTF-8/ })
    })

    t.test('authentication and scopes', async t => {
      const none = await fetch(`${base}/v1/authors/x`, { headers: { 'user-agent': 'svc-tests/1' } })
      t.equal(none.status, 401)
      const readOnly = await fetch(`${base}/v1/documents`, {
        method: 'POST',
        headers: { 'user-agent': 'svc-tests/1', authorization: `Bearer ${token('reader', ['documents:read'])}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x', authorId: 'a', kind: 'INVOICE' })
      })
      t.equal(readOnly.status, 403)
      t.match((await readOnly.json() as { detail: string }).detail, 'documents:write')
    })

    t.test('execution context and idempotency key on the wire', async t => {
      const key = crypto.randomUUID()
      const first = await call('POST', '/v1/authors', { name: 'Pre', email: 'pre@example.com' }, { 'svc-execution-context': 'preprod', 'svc-idempotency-key': key })
      t.equal(first.status, 201)
      t.equal(first.headers.get('svc-execution-context'), 'preprod')
      const again = await call('POST', '/v1/authors', { name: 'Pre', email: 'pre@example.com' }, { 'svc-execution-context': 'preprod', 'svc-idempotency-key': key })
      t.equal(again.status, 409)
      t.equal(again.body.instance, first.headers.get('location'))
      t.equal((await call('GET', first.headers.get('location') as string)).status, 404, 'not in prod')
      const bad = await call('POST', '/v1/authors', { name: 'X', email: 'x@example.com' }, { 'svc-execution-context': 'Prod!' })
      t.equal(bad.status, 400)
      t.equal(bad.body.context[0].field, 'Svc-Execution-Context')
    })

    t.test('the OpenAPI document describes the resource routes', async t => {
      const res = await fetch(`${base}/openapi.json`, { headers: { 'user-agent': 'svc-tests/1' } })
      t.equal(res.status, 200)
      const doc = await res.json() as { paths: Record<string, Record<string, { responses: Record<string, unknown>, requestBody?: { content: Record<string, unknown> } }>> }
      const item = doc.paths['/v1/documents/{documentId}']
      t.ok(item?.get?.responses['200'])
      t.ok(item?.put?.responses['428'] && item.put.responses['412'] && item.put.responses['409'])
      t.ok(item?.patch?.requestBody?.content['application/merge-patch+json'] ?? item?.patch?.requestBody?.content['application/json'])
      // A missing author is one of the problems the operation's default response stands for.
      t.ok(doc.paths['/v1/authors/{authorId}/documents']?.post?.responses['409'] && doc.paths['/v1/authors/{authorId}/documents']?.post?.responses.default)
      t.ok(doc.paths['/v1/documents']?.post?.responses['201'])
    })

    t.test('no body ever shows SQL, constraint names or stack frames', async t => {
      await call('POST', '/v1/documents', { name: unique(), authorId: 'nobody', kind: 'INVOICE' })
      t.ok(bodies.length > 10)
      for (const body of bodies) t.ok(leaksNothing(body), body.slice(0, 200))
    })
  })
}
