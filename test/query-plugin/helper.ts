import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse, type RouteHandlerMethod } from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import query, { collectionQueryOf, registerCollection, type CollectionConfig, type QueryPluginOptions } from '../../plugins/query/index.js'
import { queryMemory } from '../../store/memory-query.js'
import { fields, STATUSES } from '../query/fixtures.js'
import type { Doc } from '../query/pglite-helper.js'

export { fields }

export const SECRET = 'a test secret of at least 16 bytes'
export const URL_BASE = 'http://localhost:80'
export const PATH = '/v1/documents'

export type { Doc }

const pad = (n: number): string => String(n).padStart(2, '0')

/** `n` documents covering nulls, repeats and every field type of the fixtures' field map. */
export function makeDocs (n: number): Doc[] {
  const docs: Doc[] = []
  for (let i = 0; i < n; i++) {
    docs.push({
      id: `d${pad(i)}`,
      name: `Doc ${String.fromCharCode(65 + (i * 7) % 26)}`,
      description: i % 3 === 0 ? null : `about ${i}`,
      status: STATUSES[i % 3] as string,
      pageCount: i % 4 === 0 ? null : (i * 5) % 17,
      byteCount: String(i * 1000),
      amount: i % 5 === 0 ? null : `${i}.50`,
      effectiveDate: `2024-01-${pad(i % 28 + 1)}`,
      publishedDateTime: i % 2 === 1 ? `2024-02-01T00:00:${pad(i % 60)}.000Z` : null,
      active: i % 2 === 0,
      flagged: i % 3 === 0 ? null : i % 2 === 1,
      tags: i % 2 === 1 ? ['a', 'b'] : ['c'],
      metadata: i % 6 === 0 ? null : { source: i % 5 === 0 ? null : { system: i % 2 === 1 ? 'erp' : 'crm', region: i % 4 === 0 ? null : 'eu' }, score: i }
    })
  }
  return docs
}

export const docs = makeDocs(25)

export interface BuildOptions {
  server?: FastifyServerOptions
  plugin?: Partial<QueryPluginOptions>
  collection?: Partial<CollectionConfig>
  items?: readonly Doc[]
  /** Register the validation plugin (default true). */
  validation?: boolean
  /** Also register routes or hooks before ready. */
  setup?: (app: FastifyInstance) => void | Promise<void>
  url?: string
  /** The collection handler (default: queryMemory over `items`). */
  handler?: RouteHandlerMethod
}

/** An app with the problem, validation and query plugins and one collection over `items`. */
export async function build (t: { teardown: (fn: () => unknown) => void }, o: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(o.server)
  await app.register(problem)
  if (o.validation !== false) await app.register(validation)
  await app.register(query, { cursorSecret: SECRET, ...o.plugin })
  const items = o.items ?? docs
  if (o.setup !== undefined) await o.setup(app)
  registerCollection(app, {
    url: o.url ?? PATH,
    collection: { fields, ...o.collection },
    handler: o.handler ?? (async (request, reply) => reply.sendCollection(queryMemory(items, collectionQueryOf(request), fields)))
  })
  t.teardown(() => app.close())
  return app
}

export interface Reply {
  status: number
  headers: LightMyRequestResponse['headers']
  body: any
}

function parse (res: LightMyRequestResponse): Reply {
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : JSON.parse(res.body) }
}

export async function get (app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return parse(await app.inject({ method: 'GET', url, headers }))
}

export async function search (app: FastifyInstance, body: unknown, url = `${PATH}/search`): Promise<Reply> {
  return parse(await app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }))
}

/** The path and query of a link, to inject it. */
export function local (url: string): string {
  if (!url.startsWith(URL_BASE)) throw new Error(`unexpected link ${url}`)
  return url.slice(URL_BASE.length)
}

/** The context items of a 400, as [field, code, source] rows. */
export function faults (reply: Reply): Array<[string | undefined, string | undefined, string | undefined]> {
  return (reply.body.context as Array<{ field?: string, code?: string, source?: string }>).map((c) => [c.field, c.code, c.source])
}

/** Follows `next` (or `previous`) links from `url`; the ids of each page. */
export async function walk (app: FastifyInstance, url: string, direction: 'next' | 'previous' = 'next'): Promise<string[][]> {
  const pages: string[][] = []
  let at: string | null = url
  while (at !== null) {
    const res = await get(app, at)
    if (res.status !== 200) throw new Error(`${at}: ${res.status} ${JSON.stringify(res.body)}`)
    pages.push(res.body.results.map((d: Doc) => d.id))
    const link = res.body.paging[direction] as { url: string } | null
    at = link === null ? null : local(link.url)
    if (pages.length > 100) throw new Error('walk does not end')
  }
  return pages
}
