// An adopter's resources emitting events: `notes` (a defineResource resource) emits
// note.created / note.updated / note.deleted from its write path without a line of code, and
// a route of its own (`POST /v1/orders/{orderId}/ship`) declares `order.shipped` in the
// transaction of its change. Subscribers register at /v1/webhook-subscriptions and receive
// each event signed with Standard Webhooks, once the change has committed.
//
//   node --conditions=svc-conventions-source --import tsx examples/events.ts
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-events
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  problem, validation, conventions, auth, query, resource, events, defineResource, createStore, problems, Id, type Store, type EventsPluginOptions
} from 'svc-conventions'
import { migrate } from 'svc-conventions/store'

export const notes = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: { text: Type.String({ minLength: 1, maxLength: 2000 }) },
  scopes: { read: ['notes:read'], write: ['notes:write'] }
})

export async function build (store: Store, secret: string, extra: Partial<EventsPluginOptions> = {}): Promise<FastifyInstance> {
  await migrate(store, [{ id: 'example-orders-1', sql: 'CREATE TABLE orders (id text PRIMARY KEY, shipped boolean NOT NULL DEFAULT false)' }])
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(auth, { verifier: { secret } })
  await app.register(query, { cursorSecret: 'an example cursor secret' })
  await app.register(resource, { store, resources: [notes], migrations: false })
  // After the resources: their writes emit. `order.shipped` is this application's own event.
  await app.register(events, {
    store,
    service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'notes-service' },
    path: '/v1/webhook-subscriptions',
    extraEventTypes: ['order.shipped'],
    ...extra
  })

  app.post('/v1/orders/:orderId/ship', {
    schema: { params: Type.Object({ orderId: Id() }) },
    config: { auth: { scopes: ['orders:write'] } }
  }, async (request) => {
    const { orderId } = request.params as { orderId: string }
    return await store.transaction(async (tx) => {
      const { rows } = await tx.query('UPDATE orders SET shipped = true WHERE id = $1 RETURNING id, shipped', [orderId])
      if (rows.length === 0) throw problems.notFound(`No order has the id ${orderId}.`)
      // In the change's own transaction: delivered exactly when the change commits.
      await app.events.emit(tx, { ctx: request.executionContext, type: 'order.shipped', data: rows[0], requestId: request.requestId })
      return rows[0]
    })
  })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const store = createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  const app = await build(store, process.env.AUTH_JWT_SECRET ?? 'an example secret of at least 32 bytes!!')
  app.addHook('onClose', async () => { await store.close() })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
