import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** One request as the service received it. */
export interface Received { method: string, url: string, headers: IncomingMessage['headers'], body: string }

export interface Item { id: string, name: string, version: number }

export interface ItemsService {
  base: string
  /** What the service holds, by id. */
  items: Map<string, Item>
  /** Every request, in order. */
  received: Received[]
}

/**
 * Answers a request before the service does, or returns false to let it. `items` is what the
 * service holds.
 */
export type Hook = (request: Received, res: ServerResponse, items: Map<string, Item>) => boolean

const ITEM = { type: 'object', properties: { id: { type: 'string', readOnly: true }, name: { type: 'string', minLength: 1, maxLength: 50 } }, required: ['name'] }
const asJson = (schema: unknown, type = 'application/json'): unknown => ({ content: { [type]: { schema } } })

/**
 * The document of a collection of named items at /items that takes POST, and PUT, PATCH and
 * DELETE on an item; `patchTypes` are the media types its PATCH lists, `more` more paths.
 */
export function itemsDocument ({ patchTypes = ['application/merge-patch+json'], bulk = false, more = {} }: { patchTypes?: string[], bulk?: boolean, more?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'items', version: '1' },
    paths: {
      '/items': {
        get: { responses: { 200: asJson({ type: 'object', properties: { results: { type: 'array', items: ITEM }, paging: { type: 'object' } } }) } },
        post: { requestBody: asJson(ITEM), responses: { 201: asJson(ITEM) } },
        ...(bulk ? { patch: { requestBody: asJson({ type: 'object', properties: { operations: { type: 'array', maxItems: 2 } } }), responses: { 200: {} } } } : {})
      },
      '/items/{id}': {
        get: { responses: { 200: asJson(ITEM) } },
        put: { requestBody: asJson(ITEM), responses: { 204: {} } },
        patch: { requestBody: { content: Object.fromEntries(patchTypes.map(type => [type, { schema: { type: 'object' } }])) }, responses: { 204: {} } },
        delete: { responses: { 204: {} } }
      },
      ...more
    }
  }
}

const problem = (res: ServerResponse, status: number, title: string): void => {
  res.writeHead(status, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ title, status, requestId: 'r' }))
}

/** The name a JSON body gives, undefined when it gives none; null when the body is no JSON. */
function nameOf (body: string): string | undefined | null {
  try {
    const name = (JSON.parse(body === '' ? '{}' : body) as { name?: unknown }).name
    return typeof name === 'string' ? name : undefined
  } catch {
    return null
  }
}

/** The service's own answer: the collection, its items with ETags, If-Match, JSON bodies. */
function answer (request: Received, res: ServerResponse, items: Map<string, Item>, document: Record<string, unknown>): void {
  const { method, url } = request
  const id = /^\/items\/([^/?]+)$/.exec(url)?.[1]
  const item = id === undefined ? undefined : items.get(decodeURIComponent(id))
  const name = nameOf(request.body)
  if (['POST', 'PUT', 'PATCH'].includes(method) && !/^application\/(merge-patch\+)?json\b/.test(request.headers['content-type'] ?? '')) {
    problem(res, 415, 'Unsupported Media Type')
  } else if (name === null) {
    problem(res, 400, 'Invalid Data')
  } else if (method === 'GET' && url === '/openapi.json') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
  } else if (method === 'GET' && url.split('?')[0] === '/items') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [...items.values()].map(({ id, name }) => ({ id, name })), paging: { limit: 20, next: null, previous: null } }))
  } else if (method === 'POST' && url === '/items') {
    if (name === undefined) return problem(res, 400, 'Invalid Data')
    const made = { id: `i${items.size + 1}-${Math.random().toString(36).slice(2, 6)}`, name, version: 1 }
    items.set(made.id, made)
    res.writeHead(201, { 'content-type': 'application/json', location: `/items/${made.id}` }).end(JSON.stringify({ id: made.id, name }))
  } else if (item === undefined) {
    problem(res, 404, 'Not Found')
  } else if (request.headers['if-match'] !== undefined && request.headers['if-match'] !== `"v${item.version}"`) {
    problem(res, 412, 'Precondition Failed')
  } else if (method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json', etag: `"v${item.version}"` }).end(JSON.stringify({ id: item.id, name: item.name }))
  } else if (method === 'PUT' || method === 'PATCH') {
    if (name !== undefined) item.name = name
    item.version++
    res.writeHead(204).end()
  } else if (method === 'DELETE') {
    items.delete(item.id)
    res.writeHead(204).end()
  } else {
    problem(res, 405, 'Method Not Allowed')
  }
}

/**
 * A collection of items at /items written with node:http, enough for the write probes; `hook`
 * answers first, to break a rule.
 */
export async function startItems (t: { teardown: (fn: () => unknown) => void }, { document = itemsDocument(), hook = () => false, items = [] }: { document?: Record<string, unknown>, hook?: Hook, items?: Item[] } = {}): Promise<ItemsService> {
  const held = new Map(items.map(i => [i.id, i]))
  const received: Received[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(request)
      if (!hook(request, res, held)) answer(request, res, held, document)
    })
  })
  server.on('connection', socket => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise(resolve => { server.close(resolve) })
  })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, items: held, received }
}
