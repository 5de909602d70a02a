import type { FastifyInstance } from 'fastify'
import { SECRET, headers, listen } from '../resource/helper.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import type { Store } from '../../index.js'

/**
 * The reference service (app.ts) listening on a loopback port, over the test's store (or
 * its own in-memory one), configured by environment variables like `npm start`.
 */
export async function startService (t: { teardown: (fn: () => unknown) => void }, store?: Store, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, base: string }> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', ...env })
  const app = await buildApp(config, store === undefined ? {} : { store })
  t.teardown(() => app.close())
  return { app, base: await listen(app) }
}

export interface Answer { status: number, headers: Headers, text: string, body: any }

export interface ServiceClient {
  /** One request with the test user's token; `extra` headers win over the defaults. */
  call: (method: string, path: string, body?: unknown, extra?: Record<string, string>, sub?: string) => Promise<Answer>
  /** Every body the service answered, for a last check that none leaks internals. */
  bodies: string[]
}

/**
 * A client of the service at `base`. A body is JSON (a string is sent as it is), typed
 * `application/json`, or `patchType` on PATCH (item PATCHes are merge patches, bulk bodies
 * JSON), unless `extra` types it.
 */
export function serviceClient (base: string, { patchType = 'application/merge-patch+json' } = {}): ServiceClient {
  const bodies: string[] = []
  async function call (method: string, path: string, body?: unknown, extra: Record<string, string> = {}, sub = 'user-1'): Promise<Answer> {
    const h = headers(extra, sub)
    if (body !== undefined) h['content-type'] ??= method === 'PATCH' ? patchType : 'application/json'
    const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) })
    const text = await res.text()
    bodies.push(text)
    return { status: res.status, headers: res.headers, text, body: text === '' ? null : JSON.parse(text) }
  }
  return { call, bodies }
}
