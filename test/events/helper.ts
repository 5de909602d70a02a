import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { buildApp, type AppOptions } from '../../app.js'
import { loadConfig } from '../../config.js'
import type { Store } from '../../index.js'
import { SECRET, SCOPES, listen } from '../resource/helper.js'
import { signToken } from '../../plugins/auth/sign.js'
import type { Answer } from '../service/service.js'

export const ALL_SCOPES = [...SCOPES, 'webhooks:read', 'webhooks:write']

/** One delivery as the receiver got it. */
export interface Received {
  /** The request's path and query. */
  path: string
  headers: IncomingHttpHeaders
  body: string
  json: any
}

/**
 * A subscriber over plain HTTP on 127.0.0.1: records every request, answers with `respond`
 * (default 204 at once).
 */
export async function receiver (t: { teardown: (fn: () => unknown) => void }): Promise<{
  url: string
  got: Received[]
  respond: (r: Received, res: ServerResponse) => void
  setRespond: (fn: (r: Received, res: ServerResponse) => void) => void
  waitFor: (n: number, millis?: number) => Promise<Received[]>
}> {
  const got: Received[] = []
  let respond = (_r: Received, res: ServerResponse): void => { res.statusCode = 204; res.end() }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const r = { path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body) }
      got.push(r)
      respond(r, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return {
    url,
    got,
    get respond () { return respond },
    setRespond: (fn) => { respond = fn },
    async waitFor (n, millis = 30_000) {
      const deadline = Date.now() + millis
      while (got.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver: ${got.length} of ${n} deliveries after ${millis} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return got
    }
  }
}

/**
 * The reference service over `store`, listening, with insecure targets allowed and quick delivery
 * settings. The attempts' timeout is long: the receiver runs in this process, and a stall of it
 * must not time out an attempt it answers (then retried, and counted twice). A test of the
 * timeout sets its own.
 */
export async function startEvents (t: { teardown: (fn: () => unknown) => void }, store: Store, env: Record<string, string> = {}, events: AppOptions['events'] = {}): Promise<{ app: FastifyInstance, base: string }> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', ...env })
  const app = await buildApp(config, { store, events: { pollMillis: 50, timeoutMillis: 60_000, ...events } })
  t.teardown(() => app.close())
  return { app, base: await listen(app) }
}

/** A client with a token of `scopes`. */
export function client (base: string, scopes: string[] = ALL_SCOPES, sub = 'user-1'): (method: string, path: string, body?: unknown, extra?: Record<string, string>) => Promise<Answer> {
  const auth = `Bearer ${signToken({ secret: SECRET, sub, scope: scopes })}`
  return async (method, path, body, extra = {}) => {
    const h: Record<string, string> = { 'user-agent': 'events-tests/1 (tap)', authorization: auth, ...extra }
    if (body !== undefined) h['content-type'] ??= method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
    const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, headers: res.headers, text, body: text === '' ? null : JSON.parse(text) }
  }
}

/** Verifies a delivery's signature with the standardwebhooks library; throws when it does not hold. */
export function verify (secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'] as string,
    'webhook-timestamp': r.headers['webhook-timestamp'] as string,
    'webhook-signature': r.headers['webhook-signature'] as string
  })
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
