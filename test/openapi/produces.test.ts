import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import SwaggerParser from '@apidevtools/swagger-parser'
import { problem, validation, conventions, openapi, query, csv, Collection } from '../../index.js'
import { registerCollection, queryMemory, collectionQueryOf, createFieldMap } from '../../plugins/query/index.js'
import { inlineHeaders, referenceApp, responseFor, type Doc } from './support.js'

// The document lists every media type a route produces, per success status (conventions:
// Media types): JSON types with the body schema, other types as text.

const contentTypes = (response: Doc | undefined): string[] => Object.keys(response?.content ?? {})

t.test('routes producing custom and text types besides JSON', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(openapi)
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await app.register(csv)
  const Report = Type.Object({ id: Type.String({ maxLength: 10 }) })
  const produces = ['application/json', 'application/vnd.svc-report.v2+json', 'application/vnd.svc-report+xml']
  app.get('/v1/reports/:reportId', { schema: { response: { 200: { ...Report, description: 'The report.' } } }, config: { conventions: { produces } } }, async () => ({ id: '1' }))
  app.get('/v1/plain', { schema: { response: { 200: Report } } }, async () => ({ id: '1' }))
  const fields = createFieldMap([{ path: 'id', type: 'string', sortable: true }])
  registerCollection(app, {
    url: '/v1/reports',
    collection: { fields },
    schema: { response: { 200: Collection(Report) } },
    config: { csv: true },
    handler: async (request, reply) => await reply.sendCollection(queryMemory([{ id: '1' }], collectionQueryOf(request), fields))
  })
  await app.ready()
  const raw = app.swagger() as Doc
  await SwaggerParser.validate(structuredClone(raw) as never)
  const doc = inlineHeaders(raw)

  const item = doc.paths['/v1/reports/{reportId}'].get.responses
  t.strictSame(contentTypes(item['200']), produces, 'every produced type, in the route\'s order')
  t.strictSame(item['200'].content['application/vnd.svc-report.v2+json'].schema, item['200'].content['application/json'].schema, '+json types carry the JSON schema')
  t.strictSame(item['200'].content['application/vnd.svc-report+xml'].schema, {}, 'other types have no JSON schema')
  t.equal(item['200'].description, 'The report.', 'the description stays the response\'s')
  t.strictSame(contentTypes(responseFor(doc, doc.paths['/v1/reports/{reportId}'].get, 406)), ['application/problem+json'], 'problems stay problems')
  t.strictSame(contentTypes(doc.paths['/v1/plain'].get.responses['200']), ['application/json'], 'a JSON route lists JSON alone')

  const list = doc.paths['/v1/reports'].get.responses
  t.strictSame(contentTypes(list['200']), ['application/json', 'text/csv'])
  t.strictSame(contentTypes(doc.paths['/v1/reports/search'].post.responses['200']), ['application/json'], 'POST search answers JSON only')
})

t.test('the reference service: collection GETs list JSON and CSV for their 200', async t => {
  const app = await referenceApp(t)
  const doc = inlineHeaders(app.swagger() as Doc)
  for (const path of ['/v1/authors', '/v1/documents', '/v1/authors/{authorId}/documents', '/v1/documents/{documentId}/pages']) {
    t.strictSame(contentTypes(doc.paths[path].get.responses['200']), ['application/json', 'text/csv'], path)
  }
  t.strictSame(contentTypes(doc.paths['/v1/documents/{documentId}'].get.responses['200']), ['application/json'], 'items are JSON')
  t.strictSame(contentTypes(doc.paths['/v1/documents/search'].post.responses['200']), ['application/json'])
})
