import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import openapi from '../../plugins/openapi/index.js'
import query, { registerCollection } from '../../plugins/query/index.js'
import { createFieldMap } from '../../plugins/query/fields.js'
import { fields, SECRET } from './helper.js'

interface Parameter { name: string, in: string, description?: string, schema: Record<string, unknown> }

t.test('the OpenAPI document lists the query parameters and the search body of a collection', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi)
  await app.register(query, { cursorSecret: SECRET })
  const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
  registerCollection(app, { url: '/v1/documents', collection: { fields, maxLimit: 50 }, handler: async (_r, reply) => reply.sendCollection(page) })
  registerCollection(app, { url: '/v1/cursors', collection: { fields, offset: false }, handler: async (_r, reply) => reply.sendCollection(page) })
  await app.ready()
  const doc = app.swagger() as { paths: Record<string, Record<string, { parameters?: Parameter[], requestBody?: { content: Record<string, { schema: any }> } }>> }

  const parameters = doc.paths['/v1/documents']?.get?.parameters ?? []
  const names = parameters.filter((p) => p.in === 'query').map((p) => p.name)
  for (const name of ['limit', 'cursor', 'offset', 'totalCount', 'ordering', 'filter', 'status', 'tags', 'metadata.source.system', 'statusFilter', 'metadataFilter', 'metadata.sourceFilter', 'metadata.source.systemFilter']) {
    t.ok(names.includes(name), `${name} is documented`)
  }
  const limit = parameters.find((p) => p.name === 'limit')
  t.match(limit?.schema, { type: 'integer', minimum: 1 })
  t.match(limit?.description, /default 20; above 50, 50 applies/)
  const ordering = parameters.find((p) => p.name === 'ordering')
  t.match(ordering?.schema, { type: 'array', items: { enum: ['id', '-id', 'name', '-name'] } })
  const cursorOnly = (doc.paths['/v1/cursors']?.get?.parameters ?? []).map((p) => p.name)
  t.notOk(cursorOnly.includes('offset'), 'no offset where offset paging is not offered')
  t.notOk(cursorOnly.includes('totalCount'))

  const body = doc.paths['/v1/documents/search']?.post?.requestBody?.content['application/json']?.schema
  t.equal(body.additionalProperties, false)
  t.match(body.properties.paging.anyOf[0], { additionalProperties: false, properties: { limit: { anyOf: [{ minimum: 1 }, { type: 'null' }] }, offset: { anyOf: [{ minimum: 0 }] }, cursor: {}, totalCount: {} } })
  t.match(body.properties.status, { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] }, { type: 'array' }] })
  t.match(body.properties.metadataFilter, { anyOf: [{ type: 'string' }, { type: 'array' }] })
  t.notOk('offset' in doc.paths['/v1/cursors/search']?.post?.requestBody?.content['application/json']?.schema.properties.paging.anyOf[0].properties)
  await app.close()
})

t.test('a route keeps its own querystring or body schema; nothing sortable gives an open sort key', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(openapi)
  await app.register(query, { cursorSecret: SECRET })
  const unsortable = createFieldMap([{ path: 'id', type: 'string', sql: 'id' }, { path: 'name', type: 'string', sql: 'name' }])
  const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
  const own = { type: 'object', properties: { mine: { type: 'string' } } }
  app.get('/own', { schema: { querystring: own }, config: { collection: { fields } } }, async (_r, reply) => reply.sendCollection(page))
  app.post('/own/search', { schema: { body: own }, config: { collection: { fields } } }, async (_r, reply) => reply.sendCollection(page))
  registerCollection(app, { url: '/plain', collection: { fields: unsortable }, handler: async (_r, reply) => reply.sendCollection(page) })
  await app.ready()
  const doc = app.swagger() as { paths: Record<string, Record<string, any>> }
  t.same(doc.paths['/own']?.get.parameters.filter((p: Parameter) => p.in === 'query').map((p: Parameter) => p.name), ['mine'])
  t.same(Object.keys(doc.paths['/own/search']?.post.requestBody.content['application/json'].schema.properties), ['mine'])
  const ordering = doc.paths['/plain']?.get.parameters.find((p: Parameter) => p.name === 'ordering')
  t.same(ordering.schema.items, { type: 'string' })
  t.same(doc.paths['/plain/search']?.post.requestBody.content['application/json'].schema.properties.ordering.anyOf[0], { type: 'string' })
  const res = await app.inject('/plain?ordering=name')
  t.equal(res.statusCode, 400, 'an attribute that is not sortable is refused by the hook')
  t.match(res.json().context[0].message, /not an attribute to sort by/)
  await app.close()
})
