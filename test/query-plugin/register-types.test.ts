import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import query, { collectionQueryOf, registerCollection } from '../../plugins/query/index.js'
import { queryMemory } from '../../store/memory-query.js'
import { assertType, type Equal } from '../schemas/helper.js'
import { docs, fields, SECRET } from './helper.js'

// registerCollection is typed like Fastify's own routes: with a type provider, the handler's
// request is typed from the schema given (tsc checks the assertions; the run checks the values).

t.test('with a TypeBox type provider, the handler sees the params its schema declares', async t => {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  await app.register(problem)
  await app.register(validation)
  await app.register(query, { cursorSecret: SECRET })
  const seen: string[] = []
  registerCollection(app, {
    url: '/v1/shelves/:shelfId/documents',
    collection: { fields },
    schema: { params: Type.Object({ shelfId: Type.String({ maxLength: 10 }) }) },
    handler: async (request, reply) => {
      assertType<Equal<typeof request.params, { shelfId: string }>>()
      seen.push(request.params.shelfId)
      return reply.sendCollection(queryMemory(docs, collectionQueryOf(request), fields))
    }
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/v1/shelves/s1/documents?limit=1')).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/v1/shelves/s2/documents/search', payload: {} })).statusCode, 200)
  t.strictSame(seen, ['s1', 's2'], 'both forms reach the one handler')
})

t.test('without a type provider, the params stay unknown, as on any Fastify route', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: SECRET })
  registerCollection(app, {
    url: '/v1/documents',
    collection: { fields },
    search: false,
    handler: async (request, reply) => {
      assertType<Equal<typeof request.params, unknown>>()
      return reply.sendCollection(queryMemory(docs, collectionQueryOf(request), fields))
    }
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/v1/documents?limit=1')).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/v1/documents/search', payload: {} })).statusCode, 404, 'search: false')
})
