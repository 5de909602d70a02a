import t from 'tap'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { cleanDocument, documentCases } from './fixtures/openapi.js'

t.test('the clean document passes, webhook payload and producer headers included', async t => {
  t.strictSame(lintOpenApi(cleanDocument()), [])
})

t.test('document rules: each case breaks its rule at its path', async t => {
  for (const c of documentCases) {
    const doc = cleanDocument()
    c.change(doc)
    const violations = lintOpenApi(doc)
    t.ok(violations.some(v => v.rule === c.rule && v.path === c.path), `${c.name}: ${c.rule} at ${c.path}`, { violations })
  }
})

t.test('a default problem response stands for the 4xx and the 500; the document-wide headers are linted', async t => {
  const doc = cleanDocument()
  const responses = doc.paths['/v1/authors'].get.responses
  delete responses[400]
  delete responses[500]
  responses.default = { $ref: '#/components/responses/ServerError' }
  doc['x-request-headers'] = [{ in: 'header', name: 'User-Agent', required: true, schema: { type: 'string', maxLength: 100 } }]
  doc['x-response-headers'] = { 'Svc-Execution-Context': { schema: { type: 'string', maxLength: 100 } } }
  t.strictSame(lintOpenApi(doc), [])
  responses.default = { description: 'Anything else' }
  t.strictSame(lintOpenApi(doc).map(v => v.path).sort(), ['#/paths/~1v1~1authors/get/responses', '#/paths/~1v1~1authors/get/responses', '#/paths/~1v1~1authors/get/responses/default'], 'a default without a problem body is no problem response')
})

t.test('rules can be switched off and operations skipped', async t => {
  const doc = cleanDocument()
  doc.paths['/v1/authors'].get.parameters[0].schema = { type: 'integer' }
  t.strictSame(lintOpenApi(doc).map(v => v.rule), ['integer-range'])
  t.strictSame(lintOpenApi(doc, { rules: { 'integer-range': false } }), [])
  t.strictSame(lintOpenApi(doc, { skip: (path, method) => path === '/v1/authors' && method === 'get' }), [])
  // A path's own parameters are its operations': linted unless every operation is skipped.
  doc.components.parameters.RequestId.name = 'Tenant'
  const skipGet = { skip: (path: string, method: string) => path === '/v1/authors' && method === 'get' }
  t.strictSame(lintOpenApi(doc, skipGet).filter(v => v.rule === 'header-name'), [])
  doc.paths['/v1/authors'].post = { responses: { 201: { description: 'Created' }, default: { $ref: '#/components/responses/ServerError' } } }
  t.strictSame(lintOpenApi(doc, skipGet).filter(v => v.rule === 'header-name').map(v => v.path), ['#/paths/~1v1~1authors/parameters/0'])
})

t.test('anything that is not a document has nothing to lint', async t => {
  t.strictSame(lintOpenApi(null), [])
  t.strictSame(lintOpenApi({ paths: [] }), [])
  t.strictSame(lintOpenApi({ paths: { '/a': { $ref: 'https://example.com/a.json' } } }), [])
})

t.test('a HEAD answer has no content, its problems included (RFC 9110 §9.3.2)', async t => {
  const doc = cleanDocument()
  const get = doc.paths['/v1/authors'].get
  const bodiless = Object.fromEntries(Object.entries(get.responses as Record<string, { description: string }>).map(([s, r]) => [s, { description: r.description }]))
  doc.paths['/v1/authors'].head = { ...get, responses: bodiless }
  t.strictSame(lintOpenApi(doc), [], 'HEAD: no body asked for')
  doc.paths['/v1/authors'].get = { ...get, responses: bodiless }
  t.ok(lintOpenApi(doc).some(v => v.rule === 'problem-response' && v.path.startsWith('#/paths/~1v1~1authors/get/')), 'GET: a problem needs its body')
})
