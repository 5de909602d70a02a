import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import { documentValidator, referenceApp, type Doc } from './support.js'

// The reference service's OpenAPI document as a whole: valid OpenAPI 3.1, shared schemas as
// components, every operation with its conventional parameters, problems and headers.

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete']

t.test('the reference service document', async t => {
  const app = await referenceApp(t)
  const res = await app.inject({ url: '/openapi.json', headers: { 'user-agent': 'doc-tests/1' } })
  t.equal(res.statusCode, 200)
  const doc = JSON.parse(res.body) as Doc

  t.test('is valid OpenAPI 3.1', async t => {
    const parsed = await SwaggerParser.validate(structuredClone(doc) as never) as Doc
    t.equal(parsed.openapi, '3.1.0')
  })

  const ops: Array<{ path: string, method: string, op: Doc }> = []
  for (const [path, item] of Object.entries(doc.paths as Doc)) {
    for (const method of METHODS) if (item[method] !== undefined) ops.push({ path, method, op: item[method] })
  }
  const headerNames = (op: Doc): string[] => (op.parameters ?? []).filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)
  const api = ops.filter(o => o.path.startsWith('/v1/'))

  t.test('every route is described', async t => {
    const expected = [
      'post /v1/authors', 'get /v1/authors', 'head /v1/authors', 'patch /v1/authors', 'post /v1/authors/search',
      'get /v1/authors/{authorId}', 'head /v1/authors/{authorId}', 'put /v1/authors/{authorId}', 'patch /v1/authors/{authorId}', 'delete /v1/authors/{authorId}',
      'post /v1/documents', 'get /v1/documents', 'head /v1/documents', 'patch /v1/documents', 'post /v1/documents/search',
      'get /v1/documents/{documentId}', 'head /v1/documents/{documentId}', 'put /v1/documents/{documentId}', 'patch /v1/documents/{documentId}', 'delete /v1/documents/{documentId}',
      'post /v1/authors/{authorId}/documents', 'get /v1/authors/{authorId}/documents', 'head /v1/authors/{authorId}/documents', 'post /v1/authors/{authorId}/documents/search',
      'post /_webhooks/scanner/document-scanned'
    ]
    const listed = ops.map(o => `${o.method} ${o.path}`)
    for (const e of expected) t.ok(listed.includes(e), e)
    t.notOk(doc.paths['/openapi.json'], 'the document does not describe itself')
  })

  t.test('request headers and bearer security', async t => {
    t.same(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    for (const { path, method, op } of api) {
      const names = headerNames(op)
      for (const h of ['user-agent', 'x-request-id', 'svc-execution-context', 'svc-service']) t.ok(names.includes(h), `${method} ${path}: ${h}`)
      t.equal(names.includes('svc-idempotency-key'), method !== 'get' && method !== 'head', `${method} ${path}: idempotency key on writes only`)
      t.equal(op.security, undefined, `${method} ${path}: the document's bearer security applies`)
    }
    const conditional = (path: string, method: string): string[] => headerNames(doc.paths[path][method]).filter(n => n.startsWith('if-'))
    for (const path of ['/v1/documents/{documentId}', '/v1/authors/{authorId}']) {
      for (const method of ['get', 'head', 'put', 'patch', 'delete']) t.same(conditional(path, method), ['if-match', 'if-none-match'], `${method} ${path}`)
    }
    for (const path of ['/v1/documents', '/v1/authors', '/v1/authors/{authorId}/documents']) {
      t.same(conditional(path, 'get'), ['if-none-match'], `get ${path}`)
      t.same(conditional(path, 'post'), [], `post ${path}`)
    }
    const hook = doc.paths['/_webhooks/scanner/document-scanned'].post
    t.equal(hook['x-internal'], true)
    t.same(hook.security, [])
    t.same(headerNames(hook), ['x-request-id', 'svc-execution-context', 'svc-service'], 'on the webhook, only the convention headers whose rules apply to a producer')
  })

  t.test('responses: problems per status, bodies as components, headers', async t => {
    const problem = { $ref: '#/components/schemas/Problem' }
    for (const { path, method, op } of api) {
      for (const [status, r] of Object.entries(op.responses as Doc)) {
        if (Number(status) >= 400) t.same(r.content['application/problem+json'].schema, problem, `${method} ${path} ${status}`)
        t.ok(r.headers['x-request-id'], `${method} ${path} ${status}: X-Request-ID`)
        t.ok(r.headers['svc-execution-context'], `${method} ${path} ${status}: Svc-Execution-Context`)
      }
      for (const s of ['400', '401', '403', '406', '429', '500']) t.ok(op.responses[s], `${method} ${path}: ${s}`)
      // Conventions, Limits: every documented header value is bounded.
      const schemas = [
        ...(op.parameters as Doc[]).filter(p => p.in === 'header').map(p => [p.name, p.schema]),
        ...Object.values(op.responses as Doc).flatMap((r: Doc) => Object.entries(r.headers as Doc).map(([n, h]) => [n, h.schema]))
      ] as Array<[string, Doc]>
      const unbounded = schemas.filter(([, s]) => s.type === 'string' ? typeof s.maxLength !== 'number' : typeof s.maximum !== 'number' || typeof s.minimum !== 'number')
      t.same(unbounded.map(([n]) => n), [], `${method} ${path}: header values are bounded`)
      t.ok(op.responses['429'].headers['retry-after'] && op.responses['429'].headers['ratelimit-limit'], `${method} ${path}: rate-limit headers`)
    }
    const item = '/v1/documents/{documentId}'
    const statuses: Array<[string, string, string[]]> = [
      [item, 'get', ['200', '304', '404', '412']],
      [item, 'put', ['204', '404', '409', '412', '415', '428']],
      [item, 'patch', ['204', '404', '409', '412', '415', '428']],
      [item, 'delete', ['204', '409', '412', '428']],
      ['/v1/documents', 'post', ['201', '409', '415']],
      ['/v1/documents', 'patch', ['200', '409', '412', '415', '503']],
      ['/v1/authors/{authorId}/documents', 'get', ['200', '304', '404']],
      ['/v1/authors/{authorId}/documents', 'post', ['201', '404', '409', '415']]
    ]
    for (const [path, method, wanted] of statuses) {
      const listed = Object.keys(doc.paths[path][method].responses)
      t.same(wanted.filter(s => !listed.includes(s)), [], `${method} ${path}: ${wanted.join(', ')}`)
    }

    const json = (path: string, method: string, status: string): Doc => doc.paths[path][method].responses[status].content['application/json'].schema
    const ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` })
    t.same(json(item, 'get', '200'), ref('Document'))
    t.same(json('/v1/documents', 'post', '201'), ref('Document'))
    t.same(json('/v1/authors/{authorId}/documents', 'post', '201'), ref('Document'))
    t.same(json('/v1/authors/{authorId}', 'get', '200'), ref('Author'))
    t.same(json('/v1/documents', 'patch', '200'), ref('BulkResponse'))
    for (const path of ['/v1/documents', '/v1/authors/{authorId}/documents']) {
      const page = json(path, 'get', '200')
      t.same(page.properties.results.items, ref('DocumentSummary'), `${path}: items`)
      t.same(page.properties.paging.anyOf, [ref('CursorPaging'), ref('OffsetPaging')], `${path}: paging`)
      t.same(json(`${path}/search`, 'post', '200'), page, `${path}/search answers the same page`)
    }

    const post = doc.paths['/v1/documents'].post.responses['201']
    t.ok(post.headers.location && post.headers.etag, '201: Location and ETag')
    t.ok(doc.paths[item].get.responses['200'].headers.etag, 'item GET: ETag')
    t.ok(doc.paths['/v1/documents'].get.responses['200'].headers.etag, 'collection GET: ETag')
    t.ok(doc.paths[item].get.responses['304'].headers.etag, '304: ETag')
  })

  t.test('components: each shape once, with valid examples', async t => {
    const schemas = doc.components.schemas as Doc
    t.same(Object.keys(schemas).sort(), ['Author', 'BulkContextItem', 'BulkOperationResult', 'BulkResponse', 'ContextItem', 'CursorPaging', 'Document', 'DocumentSummary', 'OffsetPaging', 'Problem'])
    const responses = JSON.stringify(Object.values(doc.paths as Doc).flatMap(item => Object.values(item as Doc).map(op => op.responses)))
    t.notOk(responses.includes('Official name, unique among documents.'), 'no inline copy of the document entity in any response')
    t.ok(JSON.stringify(schemas.Document).includes('Official name, unique among documents.'))
    const validator = documentValidator(doc)
    for (const name of ['Author', 'Document', 'DocumentSummary', 'Problem', 'BulkResponse']) {
      const examples = schemas[name].examples as unknown[]
      t.ok(Array.isArray(examples) && examples.length > 0, `${name} has an example`)
      const validate = validator(schemas[name])
      for (const e of examples) t.ok(validate(e), `${name} example is valid: ${JSON.stringify(validate.errors)}`)
    }
  })
})
