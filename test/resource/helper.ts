import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import auth from '../../plugins/auth/index.js'
import methods from '../../plugins/methods/index.js'
import openapi from '../../plugins/openapi/index.js'
import query from '../../plugins/query/index.js'
import { signToken } from '../../plugins/auth/sign.js'
import resource, { type ResourcePluginOptions } from '../../plugins/resource/index.js'
import idempotency from '../../plugins/idempotency/index.js'
import type { ResourceDefinition } from '../../plugins/resource/define.js'
import type { Store } from '../../store/types.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

export const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'
export const CURSOR_SECRET = 'a-cursor-secret-of-enough-bytes'
export const SCOPES = ['authors:read', 'authors:write', 'documents:read', 'documents:write']

export function token (sub = 'user-1', scope: string[] = SCOPES): string {
  return signToken({ secret: SECRET, sub, scope })
}

/** The headers every request of the convention carries. */
export function headers (extra: Record<string, string> = {}, sub = 'user-1'): Record<string, string> {
  return { 'user-agent': 'resource-tests/1 (tap)', authorization: `Bearer ${token(sub)}`, ...extra }
}

export interface Teardown { teardown: (fn: () => unknown) => void }

export interface BuildOptions extends Partial<Omit<ResourcePluginOptions, 'store'>> {
  /** Extra execution contexts besides prod and preprod. */
  contexts?: string[]
  /** The clock idempotency keys expire by (the idempotency plugin's `now`); default the database's. */
  idempotencyNow?: () => Date
}

/**
 * The plugins the resource plugin declares as its dependencies, without auth: no User-Agent
 * rule (inject sends none of the convention's form), everything else as configured by default.
 */
export async function prerequisites (app: FastifyInstance): Promise<FastifyInstance> {
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  return app
}

/** The suite's plugins in the order the reference service registers them, over `store`. */
export async function build (t: Teardown, store: Store, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { executionContext: { extra: opts.contexts ?? [] } })
  await app.register(methods)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(openapi)
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  const resources: ResourceDefinition[] = [...(opts.resources ?? [authors, documents])]
  const migrations = opts.migrations === undefined ? {} : { migrations: opts.migrations }
  if (opts.idempotencyNow !== undefined) {
    await app.register(idempotency, { store, now: opts.idempotencyNow, purgeInterval: 0, ...(opts.idempotencyTtl === undefined ? {} : { ttl: opts.idempotencyTtl }) })
    await app.register(resource, { store, resources, ...migrations })
  } else {
    await app.register(resource, { store, resources, ...(opts.idempotencyTtl === undefined ? {} : { idempotencyTtl: opts.idempotencyTtl }), ...migrations })
  }
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** Listens on an ephemeral loopback port; returns the base URL. */
export async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

export type Json = Record<string, any>

export function json (res: { body: string }): Json {
  return JSON.parse(res.body)
}

/** A client over inject with the convention's headers. */
export function client (app: FastifyInstance, base: Record<string, string> = {}) {
  const send = async (method: InjectOptions['method'], url: string, body?: unknown, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> => {
    const h = headers({ ...base, ...extra })
    const opts: InjectOptions = { method, url, headers: h }
    if (body !== undefined) {
      opts.payload = typeof body === 'string' ? body : JSON.stringify(body)
      h['content-type'] ??= 'application/json'
    }
    return await app.inject(opts)
  }
  return {
    post: async (url: string, body: unknown, extra?: Record<string, string>) => await send('POST', url, body, extra),
    get: async (url: string, extra?: Record<string, string>) => await send('GET', url, undefined, extra),
    head: async (url: string, extra?: Record<string, string>) => await send('HEAD', url, undefined, extra),
    put: async (url: string, body: unknown, extra?: Record<string, string>) => await send('PUT', url, body, extra),
    patch: async (url: string, body: unknown, extra?: Record<string, string>) => await send('PATCH', url, body, { 'content-type': 'application/merge-patch+json', ...extra }),
    delete: async (url: string, extra?: Record<string, string>) => await send('DELETE', url, undefined, extra)
  }
}

let counter = 0
/** A name no other test of this process uses (names are unique among documents). */
export function unique (prefix = 'doc'): string {
  return `${prefix}-${process.pid}-${++counter}`
}

/** An idempotency key of the convention's form. */
export function idemKey (): string {
  return `key-${crypto.randomUUID()}`
}

/**
 * A problem body never shows SQL, constraint names, stack frames or driver words. Constraint
 * names are PostgreSQL's, in lower case (`documents_pkey`): matched case-sensitively, as the end
 * of a word, so that a random cursor or ETag in a page (base64url) is not taken for one.
 */
export function leaksNothing (body: string): boolean {
  return !/\bSELECT\b[^]*\bFROM\b|INSERT INTO|\bUPDATE\s+"?\w+"?\s+SET\b|DELETE FROM|constraint|SQLSTATE|\n\s+at |node_modules|violates/i.test(body) &&
    !/[a-z0-9]_(?:pkey|fkey|key)\b/.test(body)
}
