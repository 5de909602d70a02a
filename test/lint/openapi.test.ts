import t from 'tap'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { cleanDocument, documentCases } from './fixtures/openapi.js'

t.test('the clean document passes, webhook payload and producer headers included', async t => {
  t.same(lintOpenApi(cleanDocument()), [])
})

t.test('document rules: each case breaks its rule at its path', async t => {
  for (const c of documentCases) {
    const doc = cleanDocument()
    c.change(doc)
    const violations = lintOpenApi(doc)
    t.ok(violations.some(v => v.rule === c.rule && v.path === c.path), `${c.name}: ${c.rule} at ${c.path}`, { violations })
  }
})

t.test('rules can be switched off and operations skipped', async t => {
  const doc = cleanDocument()
  doc.paths['/v1/authors'].get.parameters[0].schema = { type: 'integer' }
  t.same(lintOpenApi(doc).map(v => v.rule), ['integer-range'])
  t.same(lintOpenApi(doc, { rules: { 'integer-range': false } }), [])
  t.same(lintOpenApi(doc, { skip: (path, method) => path === '/v1/authors' && method === 'get' }), [])
})

t.test('anything that is not a document has nothing to lint', async t => {
  t.same(lintOpenApi(null), [])
  t.same(lintOpenApi({ paths: [] }), [])
  t.same(lintOpenApi({ paths: { '/a': { $ref: 'https://example.com/a.json' } } }), [])
})

t.test('a HEAD answer has no content, its problems included (RFC 9110 §9.3.2)', async t => {
  const doc = cleanDocument()
  const get = doc.paths['/v1/authors'].get
  const bodiless = Object.fromEntries(Object.entries(get.responses as Record<string, { description: string }>).map(([s, r]) => [s, { description: r.description }]))
  doc.paths['/v1/authors'].head = { ...get, responses: bodiless }
  t.same(lintOpenApi(doc), [], 'HEAD: no body asked for')
  doc.paths['/v1/authors'].get = { ...get, responses: bodiless }
  t.ok(lintOpenApi(doc).some(v => v.rule === 'problem-response' && v.path.startsWith('#/paths/~1v1~1authors/get/')), 'GET: a problem needs its body')
})
