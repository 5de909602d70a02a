import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import auth from '../../plugins/auth/index.js'
import methods from '../../plugins/methods/index.js'
import openapi from '../../plugins/openapi/index.js'
import query from '../../plugins/query/index.js'
import resource from '../../plugins/resource/index.js'
import bulk, { type BulkPluginOptions } from '../../plugins/bulk/index.js'
import type { ResourceDefinition } from '../../plugins/resource/define.js'
import type { Store } from '../../store/types.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { CURSOR_SECRET, SECRET, headers, type Json, type Teardown } from '../resource/helper.js'

export { SECRET, headers, json, unique, idemKey, leaksNothing, listen, token, type Json } from '../resource/helper.js'

export interface BuildOptions extends Partial<Omit<BulkPluginOptions, 'store'>> {
  /** The resource plugin's definitions. Default authors and documents. */
  definitions?: ResourceDefinition[]
}

/** The reference service's plugins, the resource plugin, then the bulk plugin, over `store`. */
export async function build (t: Teardown, store: Store, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { executionContext: { extra: ['team-a'] } })
  await app.register(methods)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(openapi)
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: opts.definitions ?? [authors, documents] })
  const { definitions: _d, ...bulkOptions } = opts
  await app.register(bulk, bulkOptions)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

export interface Api {
  bulk: (collection: string, body: unknown, extra?: Record<string, string>, sub?: string) => Promise<LightMyRequestResponse>
  post: (url: string, body: unknown, extra?: Record<string, string>) => Promise<Json>
  get: (url: string, extra?: Record<string, string>) => Promise<LightMyRequestResponse>
}

/** Requests with the convention's headers; `post` insists on 201. */
export function api (app: FastifyInstance): Api {
  return {
    async bulk (collection, body, extra = {}, sub = 'user-1') {
      return await app.inject({
        method: 'PATCH',
        url: `/v1/${collection}`,
        headers: { ...headers({ 'content-type': 'application/json', ...extra }, sub) },
        payload: typeof body === 'string' ? body : JSON.stringify(body)
      })
    },
    async post (url, body, extra = {}) {
      const res = await app.inject({ method: 'POST', url, headers: headers({ 'content-type': 'application/json', ...extra }), payload: JSON.stringify(body) })
      if (res.statusCode !== 201) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`)
      return JSON.parse(res.body)
    },
    async get (url, extra = {}) {
      return await app.inject({ method: 'GET', url, headers: headers(extra) })
    }
  }
}

/** Rows of a table in one execution context, straight from the database. */
export async function count (store: Store, table: string, ctx = 'prod'): Promise<number> {
  const { rows } = await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ctx = $1`, [ctx])
  return (rows[0] as { n: number }).n
}

/** The operations' `result.status`, in order. */
export function statuses (body: Json): string[] {
  return (body.operations as Json[]).map(o => o.result.status)
}

/** `list` in an order of its own for each `seed` (a fixed shuffle, so that a failure replays). */
export function shuffled<T> (list: readonly T[], seed: number): T[] {
  const out = [...list]
  for (let i = out.length - 1; i > 0; i--) {
    const j = (seed * 31 + i * 17) % (i + 1)
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}
