import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { check, CheckError, formatJunit, formatText } from '../../check/index.js'
import { checkCommand } from '../../check/cli.js'
import { startFixture } from './fixture.js'

// What a user meets on services that answer badly: slowly, with stack traces, or refusing a
// POST the collection does not take. The check gives verdicts, not a crash.

async function serve (t: { teardown: (fn: () => unknown) => void }, routes: (app: FastifyInstance) => void): Promise<string> {
  const app = Fastify()
  routes(app)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

t.test('a collection that answers too late fails collections.envelope; the check does not crash', async t => {
  const timers = new Set<NodeJS.Timeout>()
  const base = await serve(t, app => {
    app.get('/slow', async () => { await new Promise(resolve => { timers.add(setTimeout(resolve, 2000)) }); return { results: [], paging: { limit: 10, next: null, previous: null } } })
  })
  t.teardown(() => { for (const timer of timers) clearTimeout(timer) })
  const result = await check({ baseUrl: base, collections: ['/slow'], timeoutMillis: 300, only: ['collections.envelope', 'headers.accept', 'auth.missing'] })
  t.match(result.verdicts, [
    { id: 'headers.accept', verdict: 'not checked', reason: 'no collection answered a plain GET (no answer in time)' },
    { id: 'auth.missing', verdict: 'not checked', reason: 'GET /slow got no answer in time' },
    { id: 'collections.envelope', verdict: 'fail', reason: 'GET /slow: expected 200, got no answer in time', exchange: { request: { method: 'GET', path: '/slow' }, response: { status: 0 } } }
  ])
  await t.rejects(check({ baseUrl: base, openapi: `${base}/slow`, timeoutMillis: 300 }), new CheckError('unreachable', `GET ${base}/slow: no answer within 300 ms`), 'a document without an answer: the check cannot run')
})

t.test('errors.no-internals finds a stack trace inside a JSON body, of any language', async t => {
  const stacks: Record<string, string> = {
    node: 'Error: boom\n    at Object.<anonymous> (file:///app/server.mjs:18:44)\n    at async Promise.all (index 0)',
    java: 'java.lang.NullPointerException\n\tat com.example.OrderService.find(OrderService.java:42)',
    dotnet: 'System.Exception: boom\r\n   at Shop.Orders.Get(Int32 id) in /src/Orders.cs:line 12',
    go: 'panic: runtime error\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d'
  }
  let stack = ''
  const base = await serve(t, app => {
    app.get('/items', async () => ({ results: [], paging: { limit: 10, next: null, previous: null } }))
    app.setNotFoundHandler(async (_request, reply) => await reply.code(404).send({ error: 'Not Found', stack }))
  })
  for (const [language, frames] of Object.entries(stacks)) {
    stack = frames
    const result = await check({ baseUrl: base, collections: ['/items'], only: ['methods.not-found', 'errors.no-internals'] })
    t.match(result.verdicts.find(v => v.id === 'errors.no-internals'), { id: 'errors.no-internals', verdict: 'fail', reason: 'the body shows implementation details', exchange: { response: { status: 404 } } }, language)
  }
  stack = 'the path /svc-check names no resource'
  const clean = await check({ baseUrl: base, collections: ['/items'], only: ['methods.not-found', 'errors.no-internals'] })
  t.match(clean.verdicts.find(v => v.id === 'errors.no-internals'), { id: 'errors.no-internals', verdict: 'pass' }, 'a plain message passes')
})

t.test('without a document, a collection that takes no POST answers the POST probes with 405: not applicable', async t => {
  const base = await serve(t, app => {
    app.get('/items', async () => ({ results: [], paging: { limit: 10, next: null, previous: null } }))
    app.post('/items', async (_request, reply) => await reply.code(405).header('allow', 'GET, HEAD').type('application/problem+json').send({ title: 'Method Not Allowed', status: 405, requestId: 'r' }))
  })
  const result = await check({ baseUrl: base, collections: ['/items'], only: ['headers.content-type', 'headers.idempotency-key'] })
  t.match(result.verdicts, [
    { id: 'headers.content-type', verdict: 'not applicable', reason: 'POST /items answers 405: the collection takes no POST' },
    { id: 'headers.idempotency-key', verdict: 'not applicable', reason: 'POST /items answers 405: the collection takes no POST' }
  ])
})

t.test('the exchange under a failure shows the header the rule judged', async t => {
  const { base } = await startFixture(t)
  const language = formatText(await check({ baseUrl: base, collections: ['/items'], only: ['headers.content-language'] }))
  t.match(language, /Content-Language "english" is not a list of language tags\n(.*\n)*? {8}< content-language: english\n/)
  const custom = await serve(t, app => {
    app.get('/items', async (_request, reply) => await reply.header('x-trace-token', 'abc').send({ results: [], paging: { limit: 10, next: null, previous: null } }))
  })
  const names = formatText(await check({ baseUrl: custom, collections: ['/items'], only: ['headers.custom-names'] }))
  t.match(names, /the response header x-trace-token is not of the convention's form\n(.*\n)*? {8}< x-trace-token: abc\n/)
})

t.test('a collection that answers a bare array of items: the paging and ETag rules say the envelope is missing, not the items', async t => {
  const { base } = await startFixture(t)
  const result = await check({ baseUrl: base, collections: ['/items'], only: ['collections.cursor-paging', 'collections.offset-paging', 'etags.item'] })
  t.strictSame(result.verdicts.map(v => [v.id, v.verdict, v.reason]), [
    ['collections.cursor-paging', 'not applicable', 'no collection answered the envelope'],
    ['collections.offset-paging', 'not applicable', 'no collection answered the envelope'],
    ['etags.item', 'not applicable', 'no collection answered the envelope']
  ])
})

// A collection of items the write rules can create in: its document, with `more` operations on an item.
const ITEM = { type: 'object', properties: { id: { type: 'string', readOnly: true }, name: { type: 'string', minLength: 1, maxLength: 50 } }, required: ['name'] }
const asJson = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } })
function itemsDocument (more: Record<string, unknown> = {}): unknown {
  return {
    openapi: '3.1.0',
    info: { title: 'items', version: '1' },
    paths: {
      '/items': {
        get: { responses: { 200: asJson({ type: 'object', properties: { results: { type: 'array', items: ITEM }, paging: { type: 'object' } } }) } },
        post: { requestBody: asJson(ITEM), responses: { 201: asJson(ITEM) } }
      },
      '/items/{id}': { get: { responses: { 200: asJson(ITEM) } }, delete: { responses: { 204: {} } }, ...more }
    }
  }
}

t.test('methods.create: the reference of a 201 is Location or the id in the body, either one', async t => {
  const openapi = itemsDocument()
  for (const reference of ['body', 'location'] as const) {
    const items: Items = new Map()
    const base = await serve(t, app => {
      app.get('/openapi.json', async () => openapi)
      app.get('/items', async () => ({ results: [...items.values()], paging: { limit: 10, next: null, previous: null } }))
      app.post('/items', async (request, reply) => {
        const entity = { id: `i${items.size + 1}`, name: (request.body as { name: string }).name }
        items.set(entity.id, entity)
        reply.code(201)
        return reference === 'body' ? entity : await reply.header('location', `/items/${entity.id}`).send()
      })
      app.get('/items/:id', async (request, reply) => items.get((request.params as { id: string }).id) ?? await reply.code(404).send({}))
      app.delete('/items/:id', async (request, reply) => { items.delete((request.params as { id: string }).id); return await reply.code(204).send() })
    })
    const result = await check({ baseUrl: base, writes: true, only: ['methods.create'] })
    t.match(result.verdicts, [{ id: 'methods.create', verdict: 'pass' }], `the reference in the ${reference}`)
    t.equal(items.size, 0, `${reference}: what the check created is deleted`)
  }
})

t.test('--openapi <url>: a YAML document is read as one; JSON is asked for first', async t => {
  const { stringify } = await import('yaml')
  const accepts: string[] = []
  const base = await serve(t, app => {
    app.get('/spec.yaml', async (request, reply) => {
      accepts.push(String(request.headers.accept))
      return await reply.type('application/yaml').send(stringify(itemsDocument()))
    })
    app.get('/not-a-document', async (_request, reply) => await reply.type('text/plain').send('- just\n- a list\n'))
    app.get('/items', async () => ({ results: [], paging: { limit: 10, next: null, previous: null } }))
  })
  const result = await check({ baseUrl: base, openapi: `${base}/spec.yaml`, only: ['collections.envelope'] })
  t.match(result.verdicts, [{ id: 'collections.envelope', verdict: 'pass' }], 'the collection named by the YAML document is checked')
  t.strictSame(accepts, ['application/json, application/yaml;q=0.9, */*;q=0.1'])
  await t.rejects(check({ baseUrl: base, openapi: `${base}/not-a-document` }), new CheckError('document', `${base}/not-a-document answered 200, not an OpenAPI document`), 'YAML that is no OpenAPI document is still refused')
})

type Items = Map<string, { id: string, name: string }>

/** A collection of named items at /items, described by `openapi`, that takes merge patches: what the write probes start from. */
function itemsCollection (app: FastifyInstance, openapi: unknown, items: Items): void {
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_request, body, done) => { done(null, JSON.parse(body as string)) })
  app.get('/openapi.json', async () => openapi)
  app.get('/items', async () => ({ results: [...items.values()], paging: { limit: 10, next: null, previous: null } }))
  app.post('/items', async (request, reply) => {
    const entity = { id: `i${items.size + 1}`, name: (request.body as { name: string }).name }
    items.set(entity.id, entity)
    return await reply.code(201).send(entity)
  })
}

t.test('methods.put and methods.merge-patch: the 204 need not carry the ETag; the entity\'s must change', async t => {
  const openapi = itemsDocument({ put: { requestBody: asJson(ITEM), responses: { 204: {} } }, patch: { requestBody: asJson(ITEM), responses: { 204: {} } } })
  for (const changes of [true, false]) {
    const items: Items = new Map()
    const base = await serve(t, app => {
      itemsCollection(app, openapi, items)
      // The ETag is the name when it changes with it, else always the same.
      app.get('/items/:id', async (request, reply) => {
        const entity = items.get((request.params as { id: string }).id)
        return entity === undefined ? await reply.code(404).send({}) : await reply.header('etag', `"${changes ? entity.name : 'same'}"`).send(entity)
      })
      for (const method of ['PUT', 'PATCH'] as const) {
        app.route({
          method,
          url: '/items/:id',
          handler: async (request, reply) => {
            const entity = items.get((request.params as { id: string }).id)
            if (entity !== undefined) entity.name = (request.body as { name?: string }).name ?? entity.name
            return await reply.code(204).send()
          }
        })
      }
      app.delete('/items/:id', async (request, reply) => { items.delete((request.params as { id: string }).id); return await reply.code(204).send() })
    })
    const result = await check({ baseUrl: base, writes: true, only: ['methods.put', 'methods.merge-patch'] })
    t.match(result.verdicts, changes
      ? [{ id: 'methods.put', verdict: 'pass' }, { id: 'methods.merge-patch', verdict: 'pass' }]
      : [{ id: 'methods.put', verdict: 'fail', reason: 'the ETag did not change with the entity' }, { id: 'methods.merge-patch', verdict: 'fail', reason: 'the ETag did not change with the entity' }],
    changes ? 'a 204 without ETag, the entity\'s ETag new' : 'an ETag that does not change fails')
  }
})

t.test('methods.unmodified-since: a 412 passes, a write that goes on fails, a 428 everywhere is not applicable', async t => {
  const openapi = itemsDocument({ patch: { requestBody: asJson(ITEM), responses: { 204: {} } } })
  const cases: Array<[number, string]> = [[412, 'pass'], [204, 'fail'], [428, 'not applicable']]
  for (const [status, verdict] of cases) {
    const items: Items = new Map()
    const seen: Array<string | undefined> = []
    const base = await serve(t, app => {
      itemsCollection(app, openapi, items)
      app.get('/items/:id', async (request, reply) => await reply.send(items.get((request.params as { id: string }).id)))
      app.patch('/items/:id', async (request, reply) => {
        seen.push(request.headers['if-unmodified-since'])
        return await reply.code(status).send(status === 204 ? undefined : { title: 'refused', status })
      })
      app.delete('/items/:id', async (request, reply) => { items.delete((request.params as { id: string }).id); return await reply.code(204).send() })
    })
    const result = await check({ baseUrl: base, writes: true, only: ['methods.unmodified-since'] })
    t.match(result.verdicts, [{ id: 'methods.unmodified-since', verdict }], `a PATCH answered ${status}`)
    t.ok(seen.includes('Sun, 06 Nov 1994 08:49:37 GMT'), `${status}: the date sent is before anything the check made`)
    if (verdict === 'fail') t.match(result.verdicts[0]?.reason, /PATCH with If-Unmodified-Since of 1994: expected 412, got 204/)
  }
})

t.test('a base URL with a path prefix, and a document whose paths carry it (a Fastify app under a prefix)', async t => {
  const item = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } }
  const json = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } })
  const base = await serve(t, app => {
    app.register(async api => {
      api.get('/openapi.json', async () => ({
        openapi: '3.1.0',
        info: { title: 'items', version: '1' },
        paths: {
          '/api/items': { get: { responses: { 200: json({ type: 'object', properties: { results: { type: 'array', items: item }, paging: { type: 'object' } } }) } } },
          '/api/items/{id}': { get: { responses: { 200: json(item) } } }
        }
      }))
      api.get('/items', async () => ({ results: [{ id: 'a', name: 'pen' }], paging: { limit: 10, next: null, previous: null } }))
      api.get('/items/:id', async (request, reply) => (request.params as { id: string }).id === 'a' ? { id: 'a', name: 'pen' } : await reply.code(404).send({}))
    }, { prefix: '/api' })
  })
  const result = await check({ baseUrl: `${base}/api`, only: ['collections.envelope', 'methods.head'] })
  t.match(result.verdicts, [{ id: 'methods.head', verdict: 'pass' }, { id: 'collections.envelope', verdict: 'pass' }])
  const named = await check({ baseUrl: `${base}/api`, collections: ['/items'], only: ['collections.envelope'] })
  t.match(named.verdicts, [{ id: 'collections.envelope', verdict: 'pass' }], '--collection is relative to the base URL, as the probes are')
})

t.test('a document whose schemas refer to themselves, many times over, is read in linear time', async t => {
  const json = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } })
  const openapi = {
    openapi: '3.1.0',
    info: { title: 'nodes', version: '1' },
    paths: {
      '/nodes': {
        get: { responses: { 200: json({ type: 'object', properties: { results: { type: 'array', items: { $ref: '#/components/schemas/Node' } }, paging: { type: 'object' } } }) } },
        post: { requestBody: json({ $ref: '#/components/schemas/Node' }) }
      }
    },
    components: {
      schemas: {
        // Each Node is all of 30 Nodes: followed without a memory, 30^20 expansions.
        Node: { allOf: Array.from({ length: 30 }, () => ({ $ref: '#/components/schemas/Node' })), properties: { id: { type: 'string' }, parent: { $ref: '#/components/schemas/Node' }, kind: { enum: ['LEAF', 'BRANCH'] } } }
      }
    }
  }
  const base = await serve(t, app => {
    app.get('/openapi.json', async () => openapi)
    app.get('/nodes', async () => ({ results: [{ id: 'n1', kind: 'LEAF' }], paging: { limit: 10, next: null, previous: null } }))
  })
  const started = performance.now()
  const result = await check({ baseUrl: base, only: ['collections.envelope', 'naming.enums', 'serialization.decimals'] })
  t.match(result.verdicts, [{ id: 'collections.envelope', verdict: 'pass' }, { id: 'naming.enums', verdict: 'pass' }, { id: 'serialization.decimals', verdict: 'not applicable' }])
  t.ok(performance.now() - started < 5000, 'in moments')
})

t.test('an --openapi file is read as a document, never as a URL: one that holds none is exit code 2, and no request', async t => {
  let requests = 0
  const base = await serve(t, app => {
    app.addHook('onRequest', async () => { requests++ })
    app.get('/items', async () => ({ results: [], paging: { limit: 10, next: null, previous: null } }))
  })
  const { stringify } = await import('yaml')
  const notOne = 'svc-conventions check: spec.yaml is not an OpenAPI document (it has no "openapi" version field)'
  const files: Array<[string, string, number, RegExp | string | null]> = [
    ['a word', 'hello world', 2, notOne],
    ['a list', '[1, 2]', 2, notOne],
    ['a number', '42', 2, notOne],
    ['null', 'null', 2, notOne],
    ['a Swagger 2.0 document', '{"swagger": "2.0", "paths": {}}', 2, notOne],
    ['JSON that does not parse', '{"openapi": "3.1.0",', 2, /^svc-conventions check: cannot parse spec\.yaml: /],
    ['a JSON document', JSON.stringify(itemsDocument()), 0, null],
    ['a YAML document', stringify(itemsDocument()), 0, null]
  ]
  for (const [name, text, code, message] of files) {
    const err: string[] = []
    const io = { out: () => {}, err: (line: string) => { err.push(line) }, readFile: async () => text, env: {} }
    const before = requests
    t.equal(await checkCommand([base, '--openapi', 'spec.yaml', '--token', 'secret-token', '--only', 'collections.envelope'], io), code, name)
    if (message === null) {
      t.ok(requests > before, `${name}: the service is checked`)
    } else {
      t.match(err, [message], name)
      t.equal(requests, before, `${name}: nothing was sent`)
    }
  }
})

t.test('reports of what a service sent: JUnit keeps only the characters XML allows, text shows control characters as escapes', async t => {
  // A property named by half a surrogate pair, with a lower-case enum: the reason quotes its pointer.
  const item = { properties: { '\ud800': { enum: ['lower'] } } }
  const openapi = {
    openapi: '3.1.0',
    info: { title: 'items', version: '1' },
    paths: { '/items': { get: { responses: { 200: asJson({ properties: { results: { type: 'array', items: item } } }) } } } }
  }
  const base = await serve(t, app => {
    app.get('/openapi.json', async () => openapi)
    app.get('/items', async () => ({ results: [], paging: { limit: 10, next: null, previous: null } }))
    app.setNotFoundHandler(async (_request, reply) => await reply.code(404).type('text/plain').send('gone \u0000\u0007\u001b[31mred\r over \ufffe\uffff \u{1F600} & <ok>'))
  })
  const result = await check({ baseUrl: base, only: ['naming.enums', 'headers.request-id'] })
  t.match(result.verdicts, [{ id: 'headers.request-id', verdict: 'fail' }, { id: 'naming.enums', verdict: 'fail', reason: /"lower" at #\/paths\/.*\ud800/u }])
  const xml = formatJunit(result)
  t.notMatch(xml, /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u, 'every character is one XML 1.0 allows')
  t.match(xml, 'gone \\u0000\\u0007\\u001b[31mred\\u000d over  \u{1F600} &amp; &lt;ok&gt;', 'the body with its control characters escaped, U+FFFE and U+FFFF left out, the rest kept')
  const text = formatText(result)
  t.match(text, '< gone \\u0000\\u0007\\u001b[31mred\\u000d over \ufffe\uffff \u{1F600} & <ok>')
  // eslint-disable-next-line no-control-regex
  t.notMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, 'no control character reaches the terminal')
})
