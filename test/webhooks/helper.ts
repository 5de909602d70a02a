import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Test } from 'tap'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import auth from '../../plugins/auth/index.js'
import methods from '../../plugins/methods/index.js'
import webhooks, { signStandardWebhook, type WebhooksPluginOptions } from '../../plugins/webhooks/index.js'
import type { Queryable, Store } from '../../store/types.js'

// 32 random-looking bytes in base64, and a second one for rotations.
export const SECRET = 'whsec_' + Buffer.from('0123456789abcdef0123456789ABCDEF').toString('base64')
export const OTHER_SECRET = 'whsec_' + Buffer.from('fedcba9876543210FEDCBA9876543210').toString('base64')
export const TOKEN = 'a-shared-token-of-the-producer-0001'

export interface BuildOptions {
  store: Store
  plugin?: Partial<WebhooksPluginOptions>
  fastify?: FastifyServerOptions
  /** Registers more plugins before the webhooks plugin (e.g. openapi). */
  before?: (app: FastifyInstance) => Promise<void>
  /** Registered after the plugins, before ready(). */
  routes?: (app: FastifyInstance) => void
}

/**
 * An app with the suite's plugins that a webhook route must get past (conventions and
 * auth on by default), the webhooks plugin, and the routes given.
 */
export async function build (t: Test, opts: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: true, ...opts.fastify })
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(methods)
  await app.register(auth, { verifier: { secret: 'a-test-secret-that-is-long-enough-for-hs256' } })
  await opts.before?.(app)
  await app.register(webhooks, { store: opts.store, ...opts.plugin })
  opts.routes?.(app)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

export interface Signed {
  id?: string
  timestamp?: number
  secret?: string
}

/** The Standard Webhooks headers of a delivery, over TLS as a trusted proxy says. */
export function signed (body: string | Buffer, opts: Signed = {}): Record<string, string> {
  const id = opts.id ?? `msg_${randomUUID()}`
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000)
  return {
    'content-type': 'application/json',
    'x-forwarded-proto': 'https',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(opts.secret ?? SECRET, id, timestamp, body)
  }
}

export function bodyOf (res: { body: string }): Record<string, any> {
  return JSON.parse(res.body)
}

/** A table of named counters, for handlers whose effect must happen once. */
export async function counters (db: Queryable): Promise<void> {
  await db.exec('CREATE TABLE IF NOT EXISTS counters (name text PRIMARY KEY, n integer NOT NULL DEFAULT 0)')
}

export async function countOf (db: Queryable, name: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT n FROM counters WHERE name = $1', [name])
  return rows[0]?.n ?? 0
}

/** A handler effect: bump the counter `name` in the delivery's transaction. */
export async function bump (tx: Queryable, name: string): Promise<void> {
  await tx.query('INSERT INTO counters (name, n) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET n = counters.n + 1', [name])
}
