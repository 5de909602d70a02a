import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { headers } from '../resource/helper.js'
import { documentValidator, documentedHeaders, inlineHeaders, referenceApp, responseFor, type Doc } from './support.js'

// Real answers of the reference service, each checked against what its document says for
// that operation and status: the status is documented, the body matches the documented
// schema (components resolved), and the documented Location / ETag headers are sent.

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

t.test('sampled responses match the documented schemas', async t => {
  const app = await referenceApp(t)
  const doc = inlineHeaders(app.swagger() as Doc)
  const compile = documentValidator(doc)
  // The test the checks report to (a subtest while one runs).
  let at: Pick<typeof t, 'ok' | 'notOk' | 'equal' | 'match'> = t

  async function call (method: Method, url: string, body?: unknown, extra: Record<string, string> = {}, base = headers()): Promise<LightMyRequestResponse> {
    const h: Record<string, string> = { ...base, ...extra }
    if (body !== undefined && h['content-type'] === undefined) h['content-type'] = method === 'PATCH' && !url.endsWith('documents') && !url.endsWith('authors') ? 'application/merge-patch+json' : 'application/json'
    return await app.inject({ method, url, headers: h, payload: body === undefined ? undefined : JSON.stringify(body) })
  }

  /** Checks one answer against the operation `method path` of the document; returns its body. */
  function conforms (res: LightMyRequestResponse, method: Method, path: string, status: number): any {
    const label = `${method} ${path} ${status}`
    at.equal(res.statusCode, status, `${label}: status`)
    const documented = responseFor(doc, doc.paths[path]?.[method.toLowerCase()], status)
    at.ok(documented, `${label}: documented`)
    if (documented === undefined) return null
    for (const name of Object.keys(documented.headers ?? {})) {
      if (name === 'Location' || name === 'ETag') at.ok(res.headers[name.toLowerCase()], `${label}: sends ${name}`)
    }
    if (res.body === '') {
      at.notOk(documented.content, `${label}: documented without a body`)
      return null
    }
    const type = String(res.headers['content-type']).split(';')[0] as string
    const schema = documented.content?.[type]?.schema
    at.ok(schema, `${label}: ${type} documented`)
    if (schema === undefined) return null
    const body = JSON.parse(res.body)
    const validate = compile(schema)
    at.ok(validate(body), `${label}: body matches the documented schema ${JSON.stringify(validate.errors)}`)
    return body
  }

  /** A problem of no operation (unknown path, method not allowed) against the Problem component. */
  function isProblem (res: LightMyRequestResponse, status: number): void {
    at.equal(res.statusCode, status)
    at.match(res.headers['content-type'], /^application\/problem\+json/)
    const validate = compile({ $ref: '#/components/schemas/Problem' })
    at.ok(validate(JSON.parse(res.body)), `${status}: a Problem ${JSON.stringify(validate.errors)}`)
  }

  const author = conforms(await call('POST', '/v1/authors', { name: 'Ann Author', email: 'ann@example.com' }), 'POST', '/v1/authors', 201)
  const authorId = author.id as string
  const created = conforms(await call('POST', `/v1/authors/${authorId}/documents`, { name: 'Doc 1', kind: 'INVOICE', tags: ['a'], amount: '10.5' }), 'POST', '/v1/authors/{authorId}/documents', 201)
  conforms(await call('POST', '/v1/documents', { name: 'Doc 2', kind: 'CONTRACT', authorId, metadata: { source: { system: 'erp', region: null } } }), 'POST', '/v1/documents', 201)
  const item = `/v1/documents/${created.id as string}`
  const got = conforms(await call('GET', item), 'GET', '/v1/documents/{documentId}', 200)
  t.strictSame(got, created)
  conforms(await call('GET', `/v1/authors/${authorId}`), 'GET', '/v1/authors/{authorId}', 200)
  conforms(await call('GET', item, undefined, { 'if-none-match': created.etag }), 'GET', '/v1/documents/{documentId}', 304)

  const cursor = conforms(await call('GET', '/v1/documents?limit=1'), 'GET', '/v1/documents', 200)
  t.ok(cursor.paging.next.cursor, 'a cursor page')
  const next = conforms(await call('GET', `/v1/documents?limit=1&cursor=${encodeURIComponent(cursor.paging.next.cursor as string)}`), 'GET', '/v1/documents', 200)
  t.equal(next.results.length, 1)
  const offset = conforms(await call('GET', '/v1/documents?offset=0&limit=1&totalCount=true'), 'GET', '/v1/documents', 200)
  t.equal(offset.paging.totalCount, 2, 'an offset page')
  conforms(await call('GET', `/v1/authors/${authorId}/documents`), 'GET', '/v1/authors/{authorId}/documents', 200)
  conforms(await call('POST', '/v1/documents/search', { kind: ['INVOICE'], ordering: ['-pageCount'], paging: { limit: 1 } }), 'POST', '/v1/documents/search', 200)

  conforms(await call('PATCH', item, { pageCount: 3 }, { 'if-match': created.etag }), 'PATCH', '/v1/documents/{documentId}', 204)
  conforms(await call('PATCH', item, { pageCount: 4 }, { 'if-match': created.etag }), 'PATCH', '/v1/documents/{documentId}', 412)
  conforms(await call('PATCH', item, { pageCount: 4 }), 'PATCH', '/v1/documents/{documentId}', 428)
  conforms(await call('DELETE', `/v1/authors/${authorId}`), 'DELETE', '/v1/authors/{authorId}', 409)
  conforms(await call('POST', '/v1/documents', { name: 'Doc 1', kind: 'INVOICE', authorId }), 'POST', '/v1/documents', 409)

  const invalid = conforms(await call('POST', '/v1/authors', { name: '', email: 'nope', extra: 1 }), 'POST', '/v1/authors', 400)
  t.ok(invalid.context.length >= 2, 'context items for each invalid value')
  const { authorization: _a, ...anonymous } = headers()
  conforms(await call('GET', '/v1/documents', undefined, {}, anonymous), 'GET', '/v1/documents', 401)
  const { 'user-agent': _u, ...noAgent } = headers()
  conforms(await call('GET', '/v1/documents', undefined, {}, noAgent), 'GET', '/v1/documents', 403)
  conforms(await call('GET', '/v1/documents/no-such-id'), 'GET', '/v1/documents/{documentId}', 404)
  conforms(await call('GET', '/v1/documents', undefined, { accept: 'text/html' }), 'GET', '/v1/documents', 406)
  conforms(await call('POST', '/v1/authors', 'name=Bob', { 'content-type': 'text/plain' }), 'POST', '/v1/authors', 415)
  isProblem(await call('PUT', '/v1/documents', {}), 405)
  isProblem(await call('GET', '/v1/nothing'), 404)

  const bulk = conforms(await call('PATCH', '/v1/documents', {
    operations: [
      { operationId: 'new', action: 'CREATE', entity: { name: 'Doc 3', kind: 'INVOICE', authorId } },
      { action: 'DELETE', entity: { id: created.id }, ifMatch: '"stale"' }
    ]
  }), 'PATCH', '/v1/documents', 200)
  t.equal(bulk.status, 'PARTIAL', 'one operation failed, with its detail')

  // Over plain HTTP the webhook refuses with 403 (HTTPS only), unsigned with 401: both its own checks.
  t.test('webhook problems', async (st) => {
    at = st
    const webhook = await app.inject({ method: 'POST', url: '/_webhooks/scanner/document-scanned', headers: { 'content-type': 'application/json' }, payload: '{}' })
    conforms(webhook, 'POST', '/_webhooks/scanner/document-scanned', 403)
  })
})

t.test('a 429 carries the documented rate-limit headers', async t => {
  const app = await referenceApp(t, { RATE_LIMIT_MAX: '1' })
  const doc = inlineHeaders(app.swagger() as Doc)
  await app.inject({ url: '/v1/documents', headers: headers() })
  const res = await app.inject({ url: '/v1/documents', headers: headers() })
  t.equal(res.statusCode, 429)
  const documented = responseFor(doc, doc.paths['/v1/documents'].get, 429) as Doc
  for (const name of ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
    t.ok(documentedHeaders(doc, documented).includes(name), `${name} documented`)
    t.ok(res.headers[name.toLowerCase()] !== undefined, `${name} sent`)
  }
  const validate = documentValidator(doc)(documented.content['application/problem+json'].schema)
  t.ok(validate(JSON.parse(res.body)), JSON.stringify(validate.errors))
})
