import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'

/**
 * A service written by hand with plain Fastify, without the suite: a collection answered as a
 * bare array, Fastify's default error JSON, no User-Agent rule, no CORS, no ETags. Its items
 * break the naming and serialization rules on purpose (a numeric id, `isActive`, a date-time
 * with an offset, a percentage as a number, an array named `tag`), and every answer says
 * `Content-Language: english`. `/private` wants `Bearer fixture-token`, and
 * `/moved.json` redirects to `redirectTo` (another host).
 */
export async function startFixture (t: { teardown: (fn: () => unknown) => void }, redirectTo = 'http://127.0.0.1:9/openapi.json'): Promise<{ app: FastifyInstance, base: string }> {
  const app = Fastify()
  const items = [
    { id: 1, name: 'pen', isActive: true, discountPercentage: 12.5, createdDateTime: '2024-05-01T12:00:00+02:00', tag: ['office'] },
    { id: 2, name: 'ink', isActive: false, discountPercentage: 0, createdDateTime: '2024-05-02T12:00:00+02:00', tag: [] }
  ]
  app.addHook('onSend', async (_request, reply) => { reply.header('content-language', 'english') })
  app.get('/items', async () => items)
  app.get<{ Params: { id: string } }>('/items/:id', async (request, reply) => {
    const item = items.find(i => String(i.id) === request.params.id)
    if (item === undefined) return reply.callNotFound()
    return item
  })
  app.post('/items', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async (request, reply) => {
    const item = { ...items[0], ...(request.body as { name: string }), id: items.length + 1 }
    items.push(item as typeof items[number])
    return await reply.code(201).send(item)
  })
  app.get('/private', async (request, reply) => {
    if (request.headers.authorization !== 'Bearer fixture-token') return await reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'no' })
    return []
  })
  app.get('/moved.json', async (_request, reply) => await reply.redirect(redirectTo))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}
