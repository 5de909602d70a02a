import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import { atPointer, documentValidator, inlineHeaders, referenceApp, resolveRefs, responseFor, type Doc } from './support.js'

// The reference service's OpenAPI document as a whole: valid OpenAPI 3.1, shared schemas as
// components, every operation with its own parameters, problems and headers, and what every
// operation shares (the common problems, the convention's headers) stated once.

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete']

t.test('the reference service document', async t => {
  const app = await referenceApp(t)
  const res = await app.inject({ url: '/openapi.json', headers: { 'user-agent': 'doc-tests/1' } })
  t.equal(res.statusCode, 200)
  const raw = JSON.parse(res.body) as Doc
  // Shared header objects written in place, to read them per operation.
  const doc = inlineHeaders(raw)

  t.test('is valid OpenAPI 3.1', async t => {
    const parsed = await SwaggerParser.validate(structuredClone(raw) as never) as Doc
    t.equal(parsed.openapi, '3.1.0')
  })

  t.test('is lean: shared shapes as components, the size bounded (issue 23)', async t => {
    // The bound follows what the convention requires the document to say (a search's ETag, a
    // filter on every scalar of the summary, the 304 and 412 of a file download, a CSV page's
    // Link, a PATCH's Accept-Patch, the scopes a job is read with, If-Unmodified-Since where a
    // 412 can come, the job summary a list of jobs shows).
    t.ok(Buffer.byteLength(res.body) <= 128_000, `${Buffer.byteLength(res.body)} bytes, at most 128 KB`)
    t.ok(raw.components.schemas.Job && raw.components.schemas.JobSummary && raw.components.schemas.DocumentBulkRequest && raw.components.schemas.DateTime, 'titled shapes and formats are components')
  })

  const ops: Array<{ path: string, method: string, op: Doc }> = []
  for (const [path, item] of Object.entries(doc.paths as Doc)) {
    for (const method of METHODS) if (item[method] !== undefined) ops.push({ path, method, op: item[method] })
  }
  const headerNames = (op: Doc): string[] => (op.parameters ?? []).filter((p: Doc) => p.in === 'header').map((p: Doc) => p.name)
  const api = ops.filter(o => o.path.startsWith('/v1/'))

  t.test('every route is described', async t => {
    const expected = [
      'post /v1/authors', 'get /v1/authors', 'patch /v1/authors', 'post /v1/authors/search',
      'get /v1/authors/{authorId}', 'put /v1/authors/{authorId}', 'patch /v1/authors/{authorId}', 'delete /v1/authors/{authorId}',
      'post /v1/documents', 'get /v1/documents', 'patch /v1/documents', 'post /v1/documents/search',
      'get /v1/documents/{documentId}', 'put /v1/documents/{documentId}', 'patch /v1/documents/{documentId}', 'delete /v1/documents/{documentId}',
      'post /v1/authors/{authorId}/documents', 'get /v1/authors/{authorId}/documents', 'post /v1/authors/{authorId}/documents/search',
      'post /_webhooks/scanner/document-scanned',
      'get /health', 'get /openapi.json'
    ]
    const listed = ops.map(o => `${o.method} ${o.path}`)
    for (const e of expected) t.ok(listed.includes(e), e)
    // reference-service.md, Running it: "the OpenAPI 3.1 document of every route"; neither needs a token.
    for (const path of ['/health', '/openapi.json']) {
      t.strictSame(doc.paths[path].get.security, [], `${path}: no token`)
      t.notOk(doc.paths[path].get['x-internal'], `${path}: not internal`)
    }
    t.ok(doc.paths['/health'].get.responses['200'].content['application/json'].schema.properties.status)
    t.strictSame(headerNames(doc.paths['/health'].get), [], 'no header of its own on /health')
  })

  t.test('operationIds: stable, from the method and the resource names, unique', async t => {
    const ids = Object.entries(doc.paths as Doc).flatMap(([path, item]) => Object.entries(item as Doc).map(([method, op]) => [`${method} ${path}`, (op as Doc).operationId]))
    const byOp = Object.fromEntries(ids)
    t.strictSame(new Set(ids.map(([, id]) => id)).size, ids.length, 'each operationId once')
    t.ok(ids.every(([, id]) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)), 'camelCase identifiers')
    const wanted: Record<string, string> = {
      'get /v1/authors': 'listAuthors',
      'post /v1/authors': 'createAuthor',
      'patch /v1/authors': 'bulkAuthors',
      'post /v1/authors/search': 'searchAuthors',
      'get /v1/authors/{authorId}': 'getAuthor',
      'put /v1/authors/{authorId}': 'replaceAuthor',
      'patch /v1/authors/{authorId}': 'updateAuthor',
      'delete /v1/authors/{authorId}': 'deleteAuthor',
      'options /v1/authors/{authorId}': 'optionsAuthor',
      'get /v1/authors/{authorId}/documents': 'listAuthorDocuments',
      'post /v1/authors/{authorId}/documents': 'createAuthorDocument',
      'post /v1/authors/{authorId}/documents/search': 'searchAuthorDocuments',
      'post /v1/documents': 'createDocument',
      'post /_webhooks/scanner/document-scanned': 'receiveScannerDocumentScanned',
      'options /_webhooks/scanner/document-scanned': 'optionsScannerDocumentScanned',
      'get /health': 'getHealth',
      'get /openapi.json': 'getOpenapiJson'
    }
    for (const [op, id] of Object.entries(wanted)) t.equal(byOp[op], id, op)
  })

  t.test('hybrid filters name the selectors they take (reference-service.md, Collections)', async t => {
    const query = (name: string): string => doc.paths['/v1/documents'].get.parameters.find((p: Doc) => p.name === name).description
    t.match(query('metadataFilter'), /Selectors: paths inside metadata, source\.system, source\.region \(metadataFilter=source\.system==…\)/)
    t.match(query('metadata.sourceFilter'), /paths inside metadata\.source, system, region/)
    t.equal(query('pageCountFilter'), undefined, 'a scalar attribute\'s: told once, on filter')
    t.match(query('filter'), /<attribute>Filter: FIQL\/RSQL as in filter, not with it, whose one selector is the attribute itself/)
    t.match(doc.paths['/v1/documents/search'].post.requestBody.description, /as its filter parameter tells/, 'the search body refers to it')
  })

  t.test('descriptions and summaries say what each answer is', async t => {
    const described = (path: string, method: string, status: string): string => doc.paths[path][method].responses[status].description
    t.equal(described('/v1/authors/{authorId}', 'get', '200'), 'The author.')
    t.equal(described('/v1/authors', 'get', '200'), 'A page of the authors.')
    t.equal(described('/v1/authors/{authorId}/documents', 'get', '200'), 'A page of the documents of the author.')
    t.equal(described('/v1/documents/search', 'post', '200'), 'A page of the documents that match the search.')
    t.equal(described('/v1/documents', 'post', '201'), 'The created document, at the path in Location.')
    t.equal(described('/v1/documents', 'patch', '200'), 'One result per operation, in the order of the request.')
    const defaults = ops.flatMap(({ path, method, op }) => Object.entries(op.responses as Doc).filter(([, r]) => r.description === 'Default Response').map(([s]) => `${method} ${path} ${s}`))
    t.strictSame(defaults, [], 'no "Default Response"')
  })

  t.test('request headers and bearer security', async t => {
    t.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: /npm run token/ })
    // The convention's request headers, once for the document; the User-Agent required.
    const every = raw['x-request-headers'] as Doc[]
    t.strictSame(every.map(p => p.name), ['User-Agent', 'X-Request-ID', 'Svc-Execution-Context', 'Svc-Service'])
    t.strictSame(every.map(p => p.required === true), [true, false, false, false])
    t.match(raw.info.description, /requests send those of `x-request-headers` \(User-Agent, X-Request-ID, Svc-Execution-Context, Svc-Service\)/)
    for (const { path, method, op } of api) {
      const names = headerNames(op)
      t.strictSame(names.filter(h => every.some(p => p.name === h)), [], `${method} ${path}: none repeated`)
      t.equal(names.includes('Svc-Idempotency-Key'), method !== 'get' && method !== 'head', `${method} ${path}: idempotency key on writes only`)
      // reference-service.md, Authentication and scopes.
      const resource = path.startsWith('/v1/webhook-subscriptions') ? 'webhooks' : path.includes('documents') ? 'documents' : 'authors'
      const read = method === 'get' || method === 'head' || path.endsWith('/search')
      // Jobs: a bearer token with the read scope of any collection, checked per job: one requirement per collection.
      if (path.startsWith('/v1/jobs')) t.strictSame(op.security, [{ bearerAuth: ['authors:read'] }, { bearerAuth: ['documents:read'] }], `${method} ${path}: any collection's read scope`)
      else t.strictSame(op.security, [{ bearerAuth: [`${resource}:${read ? 'read' : 'write'}`] }], `${method} ${path}: the bearer token with its scope`)
    }
    const requestId = every.find(p => p.name === 'X-Request-ID') as Doc
    t.match(requestId.description, /1 to 200 visible ASCII characters .*; another value is refused with 400/)
    t.equal(requestId.schema.maxLength, 200, 'a longer one is refused')
    const conditional = (path: string, method: string): string[] => headerNames(doc.paths[path][method]).filter(n => n.startsWith('If-'))
    // HEAD is no operation of its own (the document's description says it answers as GET).
    for (const path of ['/v1/documents/{documentId}', '/v1/authors/{authorId}']) {
      for (const method of ['get', 'put', 'patch', 'delete']) {
        // Documents require If-Match on their writes (428), so the date is never weighed there.
        const dated = method === 'get' || path.startsWith('/v1/authors')
        t.strictSame(conditional(path, method), ['If-Match', 'If-None-Match', ...dated ? ['If-Unmodified-Since'] : []], `${method} ${path}`)
      }
    }
    t.strictSame(conditional('/v1/documents/{documentId}/content', 'get'), ['If-Match', 'If-None-Match'], 'a file\'s bytes have no modification date')
    t.strictSame(conditional('/v1/documents/{documentId}/publish', 'post'), ['If-Match', 'If-None-Match', 'If-Unmodified-Since'], 'an action weighs the date')
    t.strictSame(conditional('/v1/webhook-subscriptions/{subscriptionId}', 'patch'), ['If-Match', 'If-None-Match', 'If-Unmodified-Since'], 'so does a subscription')
    for (const path of ['/v1/documents', '/v1/authors', '/v1/authors/{authorId}/documents']) {
      t.strictSame(conditional(path, 'get'), ['If-None-Match'], `get ${path}`)
      t.strictSame(conditional(path, 'post'), [], `post ${path}`)
      t.strictSame(conditional(`${path}/search`, 'post'), [], `post ${path}/search: a search takes no If-None-Match`)
    }
    const hook = doc.paths['/_webhooks/scanner/document-scanned'].post
    t.equal(hook['x-internal'], true)
    t.strictSame(hook.security, [])
    t.strictSame(headerNames(hook), ['webhook-id', 'webhook-timestamp', 'webhook-signature'], 'on the webhook, its signature')
    t.ok(hook.parameters.filter((p: Doc) => p.name.startsWith('webhook-')).every((p: Doc) => p.required === true), 'the signature headers are required')
    t.match(hook.description, /Standard Webhooks/)
    t.match(hook.description, /HTTPS only/)
    t.match(hook.description, /X-Forwarded-Proto: https/)
    for (const path of ['/v1/documents', '/v1/authors']) t.strictSame(conditional(path, 'patch'), [], `patch ${path}: a collection has no entity tag, so no conditions`)
  })

  t.test('responses: the common problems as default, the operation\'s own per status, bodies as components, headers', async t => {
    const problem = { $ref: '#/components/schemas/Problem' }
    const common = ['400', '401', '403', '404', '406', '413', '415', '429', '500']
    for (const { path, method, op } of api) {
      for (const [status, r] of Object.entries(op.responses as Doc)) {
        if (status === 'default' || Number(status) >= 400) t.strictSame(r.content['application/problem+json'].schema, problem, `${method} ${path} ${status}`)
        t.notOk(common.includes(status), `${method} ${path} ${status}: a common problem is not listed on its own`)
      }
      t.match(op.responses.default.description, /^A problem \(RFC 9457\): 400, 401, 403, 404, 406, 413, 415, 429 or 500, as the operation allows/, `${method} ${path}: default`)
      for (const s of common) t.ok(responseFor(doc, op, s), `${method} ${path}: ${s}`)
      // Conventions, Limits: every documented header value is bounded.
      const schemas = [
        ...(op.parameters as Doc[] ?? []).filter(p => p.in === 'header').map(p => [p.name, p.schema]),
        ...Object.values(op.responses as Doc).flatMap((r: Doc) => Object.entries(r.headers as Doc ?? {}).map(([n, h]) => [n, h.schema]))
      ] as Array<[string, Doc]>
      const unbounded = schemas.filter(([, s]) => s.type === 'string' ? typeof s.maxLength !== 'number' : typeof s.maximum !== 'number' || typeof s.minimum !== 'number')
      t.strictSame(unbounded.map(([n]) => n), [], `${method} ${path}: header values are bounded`)
      // The jobs' 403 is of no scope of the route's; their 401 still challenges.
      t.ok(op.responses.default.headers['Retry-After'] && op.responses.default.headers['WWW-Authenticate'], `${method} ${path}: Retry-After (429) and the Bearer challenge (401, 403 of a scope)`)
      t.notOk(op.responses.default.headers['RateLimit-Limit'], `${method} ${path}: the rate limit's own headers are stated once`)
    }
    const everyAnswer = raw['x-response-headers'] as Doc
    t.strictSame(Object.keys(everyAnswer), ['X-Request-ID', 'Svc-Execution-Context', 'Content-Language', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Cache-Control'], 'the headers every answer carries where their rule applies, once')
    const bounded = Object.values(everyAnswer).filter((h: Doc) => h.schema.type === 'string' ? typeof h.schema.maxLength === 'number' : typeof h.schema.maximum === 'number')
    t.equal(bounded.length, Object.keys(everyAnswer).length, 'bounded too')
    t.match(everyAnswer['Content-Language'].description, /^`en-US`/)
    t.match(everyAnswer['Cache-Control'].description, /once the token is accepted/, 'when it is sent')
    t.match(everyAnswer['RateLimit-Limit'].description, /on every answer the rate limit counted, not on a refusal before it/)
    t.match(raw.info.description, /answers carry those of `x-response-headers` \(X-Request-ID, Svc-Execution-Context, Content-Language, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Cache-Control\), wherever their rule applies/)

    const item = '/v1/documents/{documentId}'
    const statuses: Array<[string, string, string[]]> = [
      [item, 'get', ['200', '304', '412']],
      [item, 'put', ['204', '409', '412', '428']],
      [item, 'patch', ['204', '409', '412', '428']],
      [item, 'delete', ['204', '409', '412', '428']],
      ['/v1/documents', 'post', ['201', '409']],
      ['/v1/documents', 'patch', ['200', '202', '409', '503']],
      ['/v1/authors/{authorId}/documents', 'get', ['200', '304']],
      ['/v1/authors/{authorId}/documents', 'post', ['201', '409']],
      // Authors take If-Match without requiring it: no 428.
      ['/v1/authors/{authorId}', 'put', ['204', '409', '412']],
      ['/v1/authors/{authorId}', 'patch', ['204', '409', '412']],
      ['/v1/authors/{authorId}', 'delete', ['204', '409', '412']],
      // A Svc-Idempotency-Key used before is a 409 on a subscription too.
      ['/v1/webhook-subscriptions', 'post', ['201', '409']],
      ['/v1/webhook-subscriptions/{subscriptionId}', 'patch', ['204', '409', '412']],
      ['/v1/webhook-subscriptions/{subscriptionId}', 'delete', ['204', '409', '412']]
    ]
    for (const [path, method, wanted] of statuses) {
      t.strictSame(Object.keys(doc.paths[path][method].responses).sort(), [...wanted, 'default'].sort(), `${method} ${path}: ${wanted.join(', ')}`)
    }

    // A CSV page's links, and the media types a PATCH takes on its 415.
    t.ok(doc.paths['/v1/documents'].get.responses['200'].headers.Link !== undefined, 'GET /v1/documents: Link, for text/csv pages')
    t.equal(doc.paths['/v1/documents/{documentId}'].get.responses['200'].headers.Link, undefined, 'not on an item')
    t.ok(doc.paths['/v1/authors/{authorId}'].patch.responses.default.headers['Accept-Patch'] !== undefined, 'PATCH: Accept-Patch on its 415')
    t.equal(doc.paths['/v1/authors/{authorId}'].put.responses.default.headers['Accept-Patch'], undefined, 'not on a PUT')
    const json = (path: string, method: string, status: string): Doc => doc.paths[path][method].responses[status].content['application/json'].schema
    const ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` })
    t.strictSame(json(item, 'get', '200'), ref('Document'))
    t.strictSame(json('/v1/documents', 'post', '201'), ref('Document'))
    t.strictSame(json('/v1/authors/{authorId}/documents', 'post', '201'), ref('Document'))
    t.strictSame(json('/v1/authors/{authorId}', 'get', '200'), ref('Author'))
    t.strictSame(json('/v1/documents', 'patch', '200'), ref('BulkResponse'))
    for (const path of ['/v1/documents', '/v1/authors/{authorId}/documents']) {
      t.strictSame(json(path, 'get', '200'), ref('DocumentPage'), `${path}: the page of the collection`)
      t.strictSame(json(`${path}/search`, 'post', '200'), ref('DocumentPage'), `${path}/search answers the same page`)
    }
    const page = raw.components.schemas.DocumentPage
    t.strictSame(page.properties.results.items, ref('DocumentSummary'), 'items')
    // The same paging as the authors' page: a reference to it.
    const paging = page.properties.paging.$ref === undefined ? page.properties.paging : atPointer(raw, page.properties.paging.$ref)
    t.strictSame(paging.anyOf, [ref('CursorPaging'), ref('OffsetPaging')], 'paging')

    const post = doc.paths['/v1/documents'].post.responses['201']
    t.ok(post.headers.Location && post.headers.ETag, '201: Location and ETag')
    t.ok(doc.paths[item].get.responses['200'].headers.ETag, 'item GET: ETag')
    t.ok(doc.paths['/v1/documents'].get.responses['200'].headers.ETag, 'collection GET: ETag')
    t.ok(doc.paths['/v1/documents/search'].post.responses['200'].headers.ETag, 'collection search: ETag')
    t.ok(doc.paths[item].get.responses['304'].headers.ETag, '304: ETag')
    t.ok(doc.paths[item].get.responses['412'].headers.ETag, 'a GET whose If-Match fails still sends the ETag')
    t.notOk(doc.paths[item].put.responses['412'].headers?.ETag, 'a write that fails its condition does not')
    t.strictSame(Object.keys(doc.paths[item].patch.requestBody.content), ['application/merge-patch+json', 'application/json'], 'a merge patch in either media type')
    t.strictSame(Object.keys(doc.paths['/v1/documents'].post.requestBody.content), ['application/json'])
    t.strictSame(raw.paths[item].parameters, [{ $ref: '#/components/parameters/DocumentId' }], 'the path parameter once, for every operation of the path')
  })

  t.test('each listed problem status shows a valid example of its own status (issue 42)', async t => {
    const validate = documentValidator(doc)({ $ref: '#/components/schemas/Problem' })
    let seen = 0
    for (const { path, method, op } of api) {
      for (const [status, r] of Object.entries(op.responses as Doc)) {
        if (status === 'default' || Number(status) < 400) continue
        const example = r.content['application/problem+json'].example
        t.match(example, { status: Number(status), title: r.description }, `${method} ${path} ${status}`)
        t.ok(validate(example), `${method} ${path} ${status}: valid ${JSON.stringify(validate.errors)}`)
        seen++
      }
    }
    t.ok(seen > 20, `${seen} problem responses listed per status`)
    t.strictSame(Object.keys(raw.components.responses).filter(n => /^(Conflict|PreconditionFailed|PreconditionRequired|ServiceUnavailable)/.test(n)).length > 3, true, 'a shared response per status')
  })

  t.test('a body is required unless the route reads none as its default: an action\'s (issue 42)', async t => {
    for (const { path, method, op } of api) {
      if (op.requestBody === undefined) continue
      const action = /\/(publish|archive|restore)$/.test(path)
      t.equal(op.requestBody.required, !action, `${method} ${path}: ${action ? 'optional' : 'required'}`)
    }
    t.strictSame(raw.paths['/v1/documents/{documentId}/restore'].post['x-optional-body'], undefined, 'the marker is not in the document')
  })

  t.test('components: each shape once, with valid examples', async t => {
    const schemas = doc.components.schemas as Doc
    t.strictSame(schemas.Problem.properties.context.items, { $ref: '#/components/schemas/ContextItem' }, 'Problem refers to ContextItem')
    t.strictSame(Object.keys(raw.components.headers).sort(), ['AcceptPatch', 'Allow', 'ETag', 'Link', 'Location', 'PreferenceApplied', 'RetryAfter', 'SvcCorsError', 'WWWAuthenticate'].sort(), 'each response header of the operations once')
    const requestHeaders = Object.entries(raw.components.parameters as Doc).filter(([, p]) => p.in === 'header').map(([k]) => k)
    t.strictSame(requestHeaders.sort(), ['IfMatch', 'IfNoneMatch', 'IfUnmodifiedSince', 'Prefer', 'SvcIdempotencyKey'], 'each request header of the operations once')
    // The convention's formats with a pattern a standard validator checks (schemas/patterns.ts), through the components they refer to.
    const props = resolveRefs(raw, schemas.Document).properties as Doc
    for (const f of ['publishedDateTime', 'effectiveDate', 'amount', 'discountPercentage', 'byteCount', 'retentionDuration', 'reviewSchedule', 'validityInterval', 'createdDateTime']) {
      t.type(props[f].pattern, 'string', `Document.${f}: a pattern beside its format`)
    }
    t.equal(props.amount.pattern, '^(?!-0(?:\\.0+)?$)-?(?:0|[1-9]\\d{0,14})(?:\\.\\d{1,4})?$', 'from the builder\'s digits')
    t.match(props.reviewSchedule.description, /The pattern does not check that each range runs upward/)
    t.match(props.validityInterval.description, /The pattern does not check that the start comes before the end/)
    // reference-service.md, Resources: the read-only fields.
    for (const name of ['Author', 'Document', 'DocumentSummary']) {
      const readOnly = Object.entries(resolveRefs(raw, schemas[name]).properties as Doc).filter(([, p]) => p.readOnly === true).map(([k]) => k)
      const wanted = ['ref', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', 'etag', ...(name === 'Author' ? [] : ['fingerprint', 'content', 'authorRef', 'deletedDateTime', 'deletedBy'])]
      t.strictSame(readOnly.sort(), wanted.sort(), `${name}: read-only fields`)
    }
    const shapes = ['Author', 'BulkContextItem', 'BulkOperationResult', 'BulkResponse', 'ContextItem', 'CursorPaging', 'Document', 'DocumentSummary', 'OffsetPaging', 'Problem', 'DateTime', 'Date', 'Int64', 'Job', 'DocumentBulkRequest', 'AuthorBulkRequest']
    t.strictSame(shapes.filter(n => schemas[n] === undefined), [], 'the convention\'s shapes, the resources\' entities, titled shapes and formats')
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
