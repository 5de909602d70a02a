import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'

t.test('bodies are strict, query and headers are coerced, shared schemas resolve', async t => {
  const app = Fastify()
  await app.register(problem)
  app.addSchema({ $id: 'Name', type: 'string', minLength: 1, maxLength: 3 })
  await app.register(validation)
  app.post('/x', {
    schema: {
      body: Type.Object({ n: Type.Integer(), name: Type.Ref('Name') }, { additionalProperties: false }),
      querystring: Type.Object({ limit: Type.Integer({ default: 20 }), tag: Type.Optional(Type.Array(Type.String())) })
    }
  }, async (request) => ({ body: request.body, query: request.query }))
  const ok = await app.inject({ method: 'POST', url: '/x?tag=a', payload: { n: 1, name: 'abc' } })
  t.equal(ok.statusCode, 200)
  t.same(JSON.parse(ok.body), { body: { n: 1, name: 'abc' }, query: { limit: 20, tag: ['a'] } }, 'defaults applied, single value → array')
  const coerced = await app.inject({ method: 'POST', url: '/x?limit=5&tag=a&tag=b', payload: { n: 1, name: 'a' } })
  t.same(JSON.parse(coerced.body).query, { limit: 5, tag: ['a', 'b'] }, 'query integers coerced')
  const strict = await app.inject({ method: 'POST', url: '/x', payload: { n: '1', name: 'abcd', extra: 1 } })
  t.equal(strict.statusCode, 400)
  const fields = JSON.parse(strict.body).context.map((c: { field: string }) => c.field).sort()
  t.same(fields, ['extra', 'n', 'name'], 'no body coercion, unknown property rejected, shared $ref applied')
  await app.close()
})

t.test('custom Ajv options are passed through; bad options are refused', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation, { ajv: { removeAdditional: 'all' } })
  app.post('/x', { schema: { body: Type.Object({ a: Type.String() }, { additionalProperties: false }) } }, async (request) => request.body)
  const res = await app.inject({ method: 'POST', url: '/x', payload: { a: 'x', b: 'y' } })
  t.same(JSON.parse(res.body), { a: 'x' }, 'the override is honoured')
  await app.close()
  await t.rejects(async () => { await Fastify().register(validation, { ajv: 'strict' } as never).ready() }, TypeError)
  await t.rejects(async () => { await Fastify().register(validation, { ajv: null } as never).ready() }, TypeError)
})
