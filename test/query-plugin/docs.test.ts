import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import openapi from '../../plugins/openapi/index.js'
import query, { registerCollection } from '../../plugins/query/index.js'
import { createFieldMap } from '../../model/fields.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { build, fields, get, PATH, search, SECRET } from './helper.js'
import { resolveRefs } from '../openapi/refs.js'

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
  // Read through the document's references (shared parameters and bodies are components).
  const raw = app.swagger() as unknown as Record<string, unknown>
  const doc = resolveRefs(raw, raw) as { paths: Record<string, Record<string, { parameters?: Parameter[], requestBody?: { content: Record<string, { schema: any }> } }>> }

  const parameters = doc.paths['/v1/documents']?.get?.parameters ?? []
  const names = parameters.filter((p) => p.in === 'query').map((p) => p.name)
  for (const name of ['limit', 'cursor', 'offset', 'totalCount', 'ordering', 'filter', 'status', 'tags', 'metadata.source.system', 'statusFilter', 'metadataFilter', 'metadata.sourceFilter', 'metadata.source.systemFilter']) {
    t.ok(names.includes(name), `${name} is documented`)
  }
  const schemaOf = (name: string): Record<string, unknown> | undefined => parameters.find((p) => p.name === name)?.schema
  const limit = parameters.find((p) => p.name === 'limit')
  // Above maxLimit the maximum applies, so the schema's maximum is the 32-bit one (conventions: "Limits").
  t.strictSame(limit?.schema, { type: 'integer', minimum: 1, maximum: 2147483647 })
  t.match(limit?.description, /default 20; above 50, 50 applies/)
  t.strictSame(schemaOf('offset'), { type: 'integer', minimum: 0, maximum: 2147483647 })
  t.strictSame(schemaOf('cursor'), { type: 'string', maxLength: 4096 })
  t.strictSame(schemaOf('filter'), { type: 'string', maxLength: 2000 })
  const ordering = parameters.find((p) => p.name === 'ordering')
  t.match(ordering?.schema, { type: 'array', maxItems: 100, items: { enum: ['id', '-id', 'name', '-name'] } })
  // Each attribute's values in its own type, with its bounds; the empty value is "null or empty".
  const empty = { type: 'string', maxLength: 0 }
  const table: Array<[string, unknown]> = [
    ['name', { type: 'string', maxLength: 2000 }],
    ['tags', { type: 'string', maxLength: 2000 }],
    ['status', { anyOf: [{ type: 'string', enum: ['DRAFT', 'PUBLISHED', 'ARCHIVED'] }, empty] }],
    ['pageCount', { anyOf: [{ type: 'integer', minimum: -2147483648, maximum: 2147483647 }, empty] }],
    ['byteCount', { anyOf: [{ type: 'string', format: 'int64', maxLength: 40 }, empty] }],
    ['amount', { anyOf: [{ type: 'string', format: 'decimal', maxLength: 2000 }, empty] }],
    ['effectiveDate', { anyOf: [{ type: 'string', format: 'date' }, empty] }],
    ['publishedDateTime', { anyOf: [{ type: 'string', format: 'date-time' }, empty] }],
    ['active', { anyOf: [{ type: 'boolean' }, empty] }],
    ['statusFilter', { type: 'string', maxLength: 2000 }]
  ]
  for (const [name, items] of table) t.match(schemaOf(name), { type: 'array', maxItems: 100, items }, name)
  const cursorOnly = (doc.paths['/v1/cursors']?.get?.parameters ?? []).map((p) => p.name)
  t.notOk(cursorOnly.includes('offset'), 'no offset where offset paging is not offered')
  t.notOk(cursorOnly.includes('totalCount'))

  const body = doc.paths['/v1/documents/search']?.post?.requestBody?.content['application/json']?.schema
  t.equal(body.additionalProperties, false)
  t.match(body.properties.paging.anyOf[0], {
    additionalProperties: false,
    properties: {
      limit: { anyOf: [{ minimum: 1, maximum: 2147483647 }, { type: 'null' }] },
      offset: { anyOf: [{ minimum: 0, maximum: 2147483647 }] },
      cursor: { anyOf: [{ type: 'string', maxLength: 4096 }] },
      totalCount: {}
    }
  })
  t.match(body.properties.status, { anyOf: [{ anyOf: [{ anyOf: [{ enum: ['DRAFT', 'PUBLISHED', 'ARCHIVED'] }] }, { type: 'null' }] }, { type: 'array', maxItems: 100 }] })
  t.match(body.properties.pageCount.anyOf[0].anyOf, [{ anyOf: [{ type: 'integer' }] }, { type: 'null' }, { type: 'string', maxLength: 12 }])
  t.match(body.properties.metadataFilter, { anyOf: [{ type: 'string', maxLength: 2000 }, { type: 'array' }] })
  t.notOk('offset' in doc.paths['/v1/cursors/search']?.post?.requestBody?.content['application/json']?.schema.properties.paging.anyOf[0].properties)
  await app.close()
})

t.test('a route keeps its own querystring or body schema; nothing sortable gives an open sort key', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(openapi)
  await app.register(query, { cursorSecret: SECRET })
  const unsortable = createFieldMap([{ path: 'id', type: 'string' }, { path: 'name', type: 'string' }])
  const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
  const own = { type: 'object', properties: { mine: { type: 'string' } } }
  app.get('/own', { schema: { querystring: own }, config: { collection: { fields } } }, async (_r, reply) => reply.sendCollection(page))
  app.post('/own/search', { schema: { body: own }, config: { collection: { fields } } }, async (_r, reply) => reply.sendCollection(page))
  registerCollection(app, { url: '/plain', collection: { fields: unsortable }, handler: async (_r, reply) => reply.sendCollection(page) })
  await app.ready()
  // Read through the document's references (shared parameters and bodies are components).
  const raw = app.swagger() as unknown as Record<string, unknown>
  const doc = resolveRefs(raw, raw) as { paths: Record<string, Record<string, any>> }
  t.strictSame(doc.paths['/own']?.get.parameters.filter((p: Parameter) => p.in === 'query').map((p: Parameter) => p.name), ['mine'])
  t.strictSame(Object.keys(doc.paths['/own/search']?.post.requestBody.content['application/json'].schema.properties), ['mine'])
  const ordering = doc.paths['/plain']?.get.parameters.find((p: Parameter) => p.name === 'ordering')
  t.strictSame(ordering.schema.items, { type: 'string', maxLength: 2000 })
  t.strictSame(doc.paths['/plain/search']?.post.requestBody.content['application/json'].schema.properties.ordering.anyOf[0], { type: 'string', maxLength: 2000 })
  const res = await app.inject('/plain?ordering=name')
  t.equal(res.statusCode, 400, 'an attribute that is not sortable is refused by the hook')
  t.match(res.json().context[0].message, /not an attribute to sort by/)
  await app.close()
})

t.test('without the validation plugin, decimals and 64-bit integers are patterns Fastify\'s own Ajv compiles, and still bounded', async (t) => {
  const app = Fastify()
  await app.register(problem)
  await app.register(openapi)
  await app.register(query, { cursorSecret: SECRET, fiql: { maxLength: 300, maxListSize: 5 } })
  const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
  registerCollection(app, { url: '/v1/documents', collection: { fields }, handler: async (_r, reply) => reply.sendCollection(page) })
  await app.ready()
  // Read through the document's references (shared parameters and bodies are components).
  const raw = app.swagger() as unknown as Record<string, unknown>
  const doc = resolveRefs(raw, raw) as { paths: Record<string, Record<string, any>> }
  const schemaOf = (name: string): unknown => doc.paths['/v1/documents']?.get.parameters.find((p: Parameter) => p.name === name)?.schema
  t.match(schemaOf('amount'), { maxItems: 5, items: { type: 'string', pattern: '^(?:-?[0-9]+(?:\\.[0-9]+)?)?$', maxLength: 300 } })
  t.match(schemaOf('byteCount'), { items: { type: 'string', pattern: '^(?:-?[0-9]+)?$', maxLength: 40 } })
  t.strictSame(schemaOf('filter'), { type: 'string', maxLength: 300 }, 'the route\'s own FIQL limit')
  t.equal((await app.inject('/v1/documents?amount=10.5&byteCount=12&amount=')).statusCode, 200)
  const long = await app.inject(`/v1/documents?name=${'a'.repeat(301)}`)
  t.equal(long.statusCode, 400, 'a filter value longer than the FIQL limit')
  await app.close()
})

t.test('the generated schemas follow the conventions, with and without the validation plugin', async (t) => {
  for (const withValidation of [true, false]) {
    const app = Fastify()
    await app.register(problem)
    if (withValidation) await app.register(validation)
    await app.register(openapi)
    await app.register(query, { cursorSecret: SECRET })
    const page = { items: [], hasNext: false, hasPrevious: false, next: null, previous: null }
    registerCollection(app, { url: '/v1/documents', collection: { fields }, handler: async (_r, reply) => reply.sendCollection(page) })
    await app.ready()
    t.strictSame(lintOpenApi(app.swagger()), [], withValidation ? 'with the validation plugin' : 'without it')
    await app.close()
  }
})

t.test('the search body and the query string take each attribute in its own type', async (t) => {
  const app = await build(t)
  const table: Array<[unknown, number]> = [
    [{ pageCount: [7, '2', null, ''] }, 200],
    [{ active: true, flagged: null, amount: '10.50', byteCount: '1000', effectiveDate: '2024-01-02', publishedDateTime: '2024-02-01T00:00:01.000Z' }, 200],
    [{ active: 'true' }, 400],
    [{ amount: 10.5 }, 400],
    [{ name: 5 }, 400],
    [{ pageCount: 2147483648 }, 400],
    [{ name: 'a'.repeat(2001) }, 400]
  ]
  for (const [body, status] of table) t.equal((await search(app, body)).status, status, JSON.stringify(body).slice(0, 80))
  t.equal((await get(app, `${PATH}?amount=10.50&effectiveDate=&active=true&status=DRAFT&pageCount=`)).status, 200)
  const res = await get(app, `${PATH}?name=${'a'.repeat(2001)}`)
  t.equal(res.status, 400)
  t.match(res.body.context, [{ source: 'query', field: 'name' }])
})
