import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import conventions from '../../plugins/conventions/index.js'
import downstream from '../../plugins/downstream/index.js'
import { client, downstreamServer, json, SERVICE, USER_AGENT } from './helper.js'

const UA = { 'user-agent': 'headers-test/1' }

t.test('every call sends the convention\'s headers, and the call\'s own', async t => {
  const server = await downstreamServer(t, (_req, res) => json(res, 200, { ok: true }))
  const { client: c } = client(t, { baseUrl: `${server.url}/api/`, userAgent: { ...USER_AGENT, comment: 'orders-team' } })
  const cases: Array<[string, () => Promise<unknown>, Record<string, string | undefined>]> = [
    ['a GET', async () => await c.get('v1/authors', { query: { limit: 5, kind: ['A', 'B'], active: true } }), {
      'user-agent': 'orders-service/2 (orders-team)',
      accept: 'application/json',
      'svc-service': `id=${SERVICE.id}; name=orders`,
      'x-request-id': undefined,
      'svc-execution-context': undefined,
      'svc-idempotency-key': undefined,
      'content-type': undefined
    }],
    ['a POST with JSON and a key', async () => await c.post('v1/authors', { json: { name: 'Ann' }, idempotencyKey: '0b1e5c1a-7d7e-4a51-9f0e-4d3b0b8b6a11' }), {
      'content-type': 'application/json',
      'svc-idempotency-key': '0b1e5c1a-7d7e-4a51-9f0e-4d3b0b8b6a11'
    }],
    ['a PUT with a body of its own type', async () => await c.put('v1/files/1', { body: 'a,b', headers: { 'Content-Type': 'text/csv', Accept: 'text/csv' } }), {
      'content-type': 'text/csv',
      accept: 'text/csv'
    }],
    ['a call with a context', async () => await c.with({ requestId: 'req-7', executionContext: 'preprod' }).delete('v1/authors/1'), {
      'x-request-id': 'req-7',
      'svc-execution-context': 'preprod'
    }],
    ['the production context is not sent', async () => await c.with(() => ({ requestId: '', executionContext: 'prod' })).patch('v1/authors/1', { json: {}, idempotencyKey: true }), {
      'x-request-id': undefined,
      'svc-execution-context': undefined
    }],
    ['a key given as a header', async () => await c.request({ method: 'post', url: 'v1/authors', headers: { 'svc-idempotency-key': 'k'.repeat(20) } }), {
      'svc-idempotency-key': 'k'.repeat(20)
    }]
  ]
  for (const [name, call, expected] of cases) {
    await call()
    const got = server.received.at(-1)
    for (const [header, value] of Object.entries(expected)) t.equal(got?.headers[header], value, `${name}: ${header}`)
  }
  t.strictSame(server.received.map((r) => `${r.method} ${r.url}`), [
    'GET /api/v1/authors?limit=5&kind=A&kind=B&active=true',
    'POST /api/v1/authors',
    'PUT /api/v1/files/1',
    'DELETE /api/v1/authors/1',
    'PATCH /api/v1/authors/1',
    'POST /api/v1/authors'
  ])
  t.equal(server.received[1]?.body, '{"name":"Ann"}')
  t.equal(server.received[2]?.body, 'a,b')
  t.match(server.received[4]?.headers['svc-idempotency-key'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a generated key is a UUID')
  await t.rejects(c.post('v1/authors', { idempotencyKey: 'Not A Key' }), { name: 'TypeError', message: /idempotencyKey must be 20 to 255 characters/ })
})

t.test('inside a request: its X-Request-ID and execution context travel with no code at the call site', async t => {
  const server = await downstreamServer(t, (_req, res) => json(res, 200, { ok: true }))
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(conventions, { executionContext: { extra: ['load-test'] } })
  await app.register(downstream, { service: SERVICE, userAgent: USER_AGENT })
  app.get('/call', async (request) => {
    t.equal(request.downstream, request.downstream, 'one view per request')
    const res = await request.downstream.get(`${server.url}/v1/x`)
    return res.body
  })
  const cases: Array<[string, Record<string, string>, Record<string, string | undefined>]> = [
    ['a sent request id and a non-default context', { 'x-request-id': 'req-1', 'svc-execution-context': 'load-test' }, { 'x-request-id': 'req-1', 'svc-execution-context': 'load-test' }],
    ['preprod', { 'x-request-id': 'req-2', 'svc-execution-context': 'preprod' }, { 'x-request-id': 'req-2', 'svc-execution-context': 'preprod' }],
    ['production, said', { 'x-request-id': 'req-3', 'svc-execution-context': 'prod' }, { 'x-request-id': 'req-3', 'svc-execution-context': undefined }],
    ['production, by absence', {}, { 'svc-execution-context': undefined }]
  ]
  for (const [name, headers, expected] of cases) {
    const res = await app.inject({ url: '/call', headers: { ...UA, ...headers } })
    t.equal(res.statusCode, 200, name)
    const got = server.received.at(-1)
    for (const [header, value] of Object.entries(expected)) t.equal(got?.headers[header], value, `${name}: ${header}`)
    t.equal(got?.headers['svc-service'], `id=${SERVICE.id}; name=orders`, `${name}: the service`)
  }
  const generated = server.received.at(-1)?.headers['x-request-id']
  t.match(generated, /^[0-9a-f-]{36}$/, 'without X-Request-ID, the requestId the problem plugin generated')

  // Outside a request: the service's headers only.
  await app.downstream.get(`${server.url}/v1/job`)
  t.equal(server.received.at(-1)?.headers['x-request-id'], undefined)
  t.equal(server.received.at(-1)?.headers['svc-service'], `id=${SERVICE.id}; name=orders`)
})

t.test('alone in a server: the request\'s own headers, a context only when well-formed', async t => {
  const server = await downstreamServer(t, (_req, res) => json(res, 200, {}))
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(downstream, { service: SERVICE, userAgent: USER_AGENT })
  app.get('/call', async (request) => { await request.downstream.get(`${server.url}/x`); return {} })
  const cases: Array<[Record<string, string>, Record<string, string | undefined>]> = [
    [{ 'x-request-id': 'r-9', 'svc-execution-context': 'qa' }, { 'x-request-id': 'r-9', 'svc-execution-context': 'qa' }],
    [{ 'svc-execution-context': 'Not Valid!' }, { 'x-request-id': undefined, 'svc-execution-context': undefined }],
    [{}, { 'x-request-id': undefined, 'svc-execution-context': undefined }]
  ]
  for (const [headers, expected] of cases) {
    t.equal((await app.inject({ url: '/call', headers })).statusCode, 200)
    const got = server.received.at(-1)
    for (const [header, value] of Object.entries(expected)) t.equal(got?.headers[header], value, `${JSON.stringify(headers)}: ${header}`)
  }
})

t.test('the plugin refuses bad options at boot, naming them', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(downstream, { service: { id: 'nope', name: 'x' }, userAgent: USER_AGENT }) }, /downstream plugin: service\.id must be a UUID, got "nope"/)
})

t.test('registered again in a child context, the child\'s routes use the child\'s client', async t => {
  const server = await downstreamServer(t, (_req, res) => json(res, 200, {}))
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(downstream, { service: SERVICE, userAgent: USER_AGENT, baseUrl: `${server.url}/parent/` })
  app.get('/call', async (request) => { await request.downstream.get('x'); return {} })
  await app.register(async (child) => {
    await child.register(downstream, { service: { ...SERVICE, name: 'orders-eu' }, userAgent: USER_AGENT, baseUrl: `${server.url}/child/` })
    child.get('/call', async (request) => { await request.downstream.get('x'); return {} })
  }, { prefix: '/eu' })
  await app.inject({ url: '/call' })
  await app.inject({ url: '/eu/call' })
  t.strictSame(server.received.map((r) => [r.url, r.headers['svc-service']]), [
    ['/parent/x', `id=${SERVICE.id}; name=orders`],
    ['/child/x', `id=${SERVICE.id}; name=orders-eu`]
  ])
})

t.test('a DownstreamError left uncaught in a route is a 500 of this service: never the other service\'s status, nor its headers', async t => {
  const answers: Array<[number, string, Record<string, string>]> = [
    [404, '{"title":"Not Found","status":404,"detail":"No author has the id 7."}', { 'content-type': 'application/problem+json' }],
    [409, '<p>taken</p>', { 'content-type': 'text/html' }],
    [401, '', {}],
    [429, '', { 'retry-after': '1' }]
  ]
  const server = await downstreamServer(t, (_req, res, n) => {
    const [status, body, headers] = answers[n - 1] as (typeof answers)[number]
    res.writeHead(status, { ...headers, 'x-request-id': 'theirs', 'set-cookie': 'session=theirs', etag: '"theirs"', 'www-authenticate': 'Basic' }).end(body)
  })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(downstream, { service: SERVICE, userAgent: USER_AGENT, retry: false })
  app.get('/call', async (request) => (await request.downstream.get(`${server.url}/v1/authors/7`)).body)
  for (const [status] of answers) {
    const res = await app.inject({ url: '/call', headers: { ...UA, 'x-request-id': 'ours' } })
    t.equal(res.statusCode, 500, `the other service's ${status}`)
    t.match(res.json(), { status: 500, title: 'Internal Server Error', requestId: 'ours' }, `${status}: this service's problem`)
    t.equal(res.headers['x-request-id'], 'ours', `${status}: this request's id`)
    for (const header of ['set-cookie', 'etag', 'www-authenticate', 'retry-after']) t.notOk(header in res.headers, `${status}: no ${header} of the other service's answer`)
  }
})
