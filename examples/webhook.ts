// A webhook consumer: Standard Webhooks signatures checked over the raw body, HTTPS only, and
// each delivery applied exactly once, because its id is recorded in the transaction that
// applies it. Behind a TLS-terminating proxy, set Fastify's trustProxy so that
// X-Forwarded-Proto: https is believed.
//
//   WEBHOOK_SECRET=whsec_$(openssl rand -base64 32) node --conditions=svc-conventions-source \
//     --import tsx examples/webhook.ts
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-webhook
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  problem, validation, conventions, lint, webhooks, createStore, Decimal, Id, type Store
} from 'svc-conventions'
import { registerWebhook, standardWebhooks } from 'svc-conventions/webhooks'
import { migrate } from 'svc-conventions/store'

const PaymentSettled = Type.Object({
  invoiceId: Id(),
  amount: Decimal({ maxIntegerDigits: 15, maxFractionDigits: 2 })
})

export async function build (store: Store, fastify: FastifyServerOptions = {}, secret = process.env.WEBHOOK_SECRET ?? ''): Promise<FastifyInstance> {
  await migrate(store, [{ id: 'example-payments-1', sql: 'CREATE TABLE payments (invoice_id text PRIMARY KEY, amount numeric NOT NULL)' }])
  const app = Fastify(fastify)
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(lint) // the webhook route is checked against the convention as it registers
  await app.register(webhooks, { store })

  registerWebhook(app, {
    producer: 'billing', // POST /_webhooks/billing/payment-settled
    event: 'payment-settled',
    verifier: standardWebhooks({ secrets: [secret] }), // 401 unsigned, forged or older than 5 minutes
    schema: PaymentSettled, // 400 Invalid Data after the signature is checked
    handler: async (event, tx) => {
      // Commits with the delivery id, or not at all: a replayed delivery gets 204, never a second row.
      await tx.query('INSERT INTO payments (invoice_id, amount) VALUES ($1, $2)', [event.invoiceId, event.amount])
    }
  })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const store = createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  const app = await build(store, { logger: true, trustProxy: true })
  app.addHook('onClose', async () => { await store.close() })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
