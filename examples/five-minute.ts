// The five-minute guide of the README: an existing Fastify server with two hand-written
// routes gains the conventions by registering the suite's plugins in front of them.
// In this repository: AUTH_JWT_SECRET=$(openssl rand -hex 32) node --conditions=svc-conventions-source \
//   --import tsx examples/five-minute.ts
// #region readme-five-minute
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { problem, problemServerOptions, validation, conventions, cors, methods, auth, openapi, problems, Id } from 'svc-conventions'

const Order = Type.Object({
  id: Id(),
  item: Type.String({ minLength: 1, maxLength: 100 }),
  quantity: Type.Integer({ minimum: 1, maximum: 1000 })
}, { additionalProperties: false })
type Order = Static<typeof Order>
const NewOrder = Type.Omit(Order, ['id'], { additionalProperties: false })

export async function build (options: FastifyServerOptions = {}, jwtSecret = process.env.AUTH_JWT_SECRET): Promise<FastifyInstance> {
  // Refusals made before any plugin runs (Node's HTTP parser, the router) are problems too.
  const app = Fastify({ ...problemServerOptions, ...options }).withTypeProvider<TypeBoxTypeProvider>()

  // The conventions, in the order a request travels. Each refuses bad options at boot.
  await app.register(problem) // every error → a 4xx/5xx application/problem+json with requestId
  await app.register(validation) // strict Ajv: all errors, no body coercion, unknown properties → 400
  await app.register(conventions) // HTTP/1.1, User-Agent, Accept, Content-Type, Svc-* headers
  await app.register(cors, { origins: ['https://app.example.com'] }) // preflights before auth
  await app.register(methods) // 405 + Allow, OPTIONS 204 + Allow
  await app.register(auth, { verifier: { secret: jwtSecret ?? '' } }) // Bearer JWT, HS256 here
  await app.register(openapi, { info: { title: 'Orders', version: '1.0.0' } }) // GET /openapi.json

  // The routes you had, plus a schema and the scopes they need.
  const orders = new Map<string, Order>()
  app.get('/v1/orders/:orderId', {
    schema: { params: Type.Object({ orderId: Id() }), response: { 200: Order } },
    config: { auth: { scopes: ['orders:read'] } }
  }, async (request) => {
    const order = orders.get(request.params.orderId)
    if (order === undefined) throw problems.notFound(`There is no order ${request.params.orderId}; create it with POST /v1/orders.`)
    return order
  })
  app.post('/v1/orders', {
    schema: { body: NewOrder, response: { 201: Order } },
    config: { auth: { scopes: ['orders:write'] } }
  }, async (request, reply) => {
    const order = { id: String(orders.size + 1), ...request.body }
    orders.set(order.id, order)
    return reply.code(201).header('location', `/v1/orders/${order.id}`).send(order)
  })
  return app
}

// Run as a program (tests import build instead): listen on PORT, 3000 by default.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await build({ logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
// #endregion
