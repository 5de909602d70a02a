import t from 'tap'
import {
  DownstreamError, DownstreamProblemError, DownstreamResponseError
} from '../../plugins/downstream/index.js'
import { client, downstreamServer, json } from './helper.js'

const PROBLEM = {
  title: 'Invalid Data',
  status: 400,
  detail: 'The request body has 1 invalid field; correct it and retry.',
  type: 'https://example.com/problems/invalid-data',
  instance: '/v1/authors',
  requestId: 'req-42',
  context: [{ code: 'INPUT_BLANK', message: 'must not be blank', field: 'name', source: 'body', value: '' }, 'not an item', { code: 'NO_MESSAGE' }]
}

t.test('a problem answer is a DownstreamProblemError carrying its members', async t => {
  const server = await downstreamServer(t, (_req, res) => {
    res.writeHead(400, { 'content-type': 'application/problem+json; charset=utf-8', 'x-request-id': 'req-42' }).end(JSON.stringify(PROBLEM))
  })
  const { client: c } = client(t)
  const err = await c.post(`${server.url}/v1/authors?secret=1`, { json: {} }).catch((e: unknown) => e)
  t.ok(err instanceof DownstreamProblemError)
  t.ok(err instanceof DownstreamResponseError && err instanceof DownstreamError, 'and the kinds above it')
  const p = err as DownstreamProblemError
  t.match(p, {
    name: 'DownstreamProblemError',
    code: 'SVC_ERR_DOWNSTREAM_PROBLEM',
    status: 400,
    title: 'Invalid Data',
    detail: PROBLEM.detail,
    type: PROBLEM.type,
    instance: '/v1/authors',
    requestId: 'req-42',
    context: [PROBLEM.context[0]],
    method: 'POST',
    url: `${server.url}/v1/authors`,
    attempts: 1
  })
  t.equal(p.context.length, 1, 'items without a message are left out')
  t.equal(p.message, `POST ${server.url}/v1/authors answered 400 Invalid Data: ${PROBLEM.detail}`, 'the query, which may hold secrets, is not repeated')
  t.equal(p.headers['x-request-id'], 'req-42')
  t.strictSame(JSON.parse(p.bytes.toString()), PROBLEM)
  t.equal(p.statusCode, 500, 'uncaught in a route it is a 500 of this service, not the other\'s status')
})

t.test('other error answers are DownstreamResponseErrors with the status\'s title', async t => {
  const answers: Array<[number, Record<string, string | string[]>, string, Record<string, unknown>]> = [
    [502, { 'content-type': 'text/html' }, '<h1>Bad gateway</h1>', { title: 'Bad Gateway', requestId: undefined, detail: undefined, context: [] }],
    [599, { 'x-request-id': ['r-5', 'r-6'] }, '', { title: 'Error', requestId: 'r-5' }],
    [404, { 'content-type': 'application/problem+json' }, '{ not json', { title: 'Not Found' }],
    [409, { 'content-type': 'application/problem+json' }, '[1, 2]', { title: 'Conflict' }],
    [500, { 'content-type': 'application/problem+json' }, 'null', { title: 'Internal Server Error' }]
  ]
  const server = await downstreamServer(t, (_req, res, n) => {
    const [status, headers, body] = answers[n - 1] as (typeof answers)[number]
    res.writeHead(status, headers).end(body)
  })
  const { client: c } = client(t)
  for (const [status, , body, fields] of answers) {
    const err = await c.post(`${server.url}/x`).catch((e: unknown) => e)
    t.ok(err instanceof DownstreamResponseError && !(err instanceof DownstreamProblemError), `${status}: not a problem`)
    t.match(err, { code: 'SVC_ERR_DOWNSTREAM_STATUS', status, ...fields }, String(status))
    t.equal((err as DownstreamResponseError).bytes.toString(), body, `${status}: the body kept`)
  }
})

t.test('a problem without members gets the status\'s title, and its requestId from the header', async t => {
  const server = await downstreamServer(t, (_req, res) => {
    res.writeHead(429, { 'content-type': 'application/problem+json', 'x-request-id': 'from-header' }).end(JSON.stringify({ title: '', status: 429, context: 'none' }))
  })
  const { client: c } = client(t, { retry: false })
  await t.rejects(c.get(`${server.url}/x`), { name: 'DownstreamProblemError', title: 'Too Many Requests', requestId: 'from-header', detail: undefined, context: [] })
})

t.test('success answers: JSON parsed, other bodies as bytes and text, redirects not followed', async t => {
  const answers: Array<(res: import('node:http').ServerResponse) => void> = [
    (res) => json(res, 200, { id: '1', name: 'Ann' }),
    (res) => res.writeHead(200, { 'content-type': 'application/vnd.svc-author+json' }).end('{"id":"2"}'),
    (res) => res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end('id\n1\n'),
    (res) => res.writeHead(204).end(),
    (res) => res.writeHead(201, { 'content-type': 'application/json' }).end(),
    (res) => res.writeHead(302, { location: '/elsewhere' }).end(),
    (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"truncated": '),
    (res) => res.writeHead(304, { etag: '"v2"' }).end()
  ]
  const server = await downstreamServer(t, (_req, res, n) => { (answers[n - 1] as (r: typeof res) => void)(res) })
  const { client: c } = client(t)
  const a = await c.request<{ id: string, name: string }>({ url: `${server.url}/a` })
  t.equal(server.received[0]?.method, 'GET', 'GET unless told')
  t.strictSame(a.body, { id: '1', name: 'Ann' })
  t.equal(a.status, 200)
  t.strictSame((await c.get(`${server.url}/b`)).body, { id: '2' }, 'a +json type is JSON')
  const csv = await c.get(`${server.url}/c`)
  t.equal(csv.body, undefined)
  t.equal(csv.text(), 'id\n1\n')
  t.strictSame(csv.bytes, Buffer.from('id\n1\n'))
  const deleted = await c.delete(`${server.url}/d`)
  t.match(deleted, { status: 204, body: undefined })
  t.equal(deleted.bytes.length, 0)
  t.equal(deleted.text(), '')
  const created = await c.post(`${server.url}/e`)
  t.match(created, { status: 201, body: undefined }, 'an empty JSON body is no body')
  t.equal(created.bytes.length, 0)
  const redirect = await c.get(`${server.url}/f`)
  t.equal(redirect.status, 302, 'the redirect is the answer')
  t.equal(redirect.headers.location, '/elsewhere')
  t.equal(server.received.length, 6, 'and its target was not requested')
  await t.rejects(c.get(`${server.url}/g`), { name: 'DownstreamInvalidJsonError', code: 'SVC_ERR_DOWNSTREAM_INVALID_JSON', status: 200, message: /answered 200 with a application\/json body that is not JSON/ })
  const unchanged = await c.get(`${server.url}/h`)
  t.match(unchanged, { status: 304, body: undefined, headers: { etag: '"v2"' } }, 'a 304 is an answer with no body')
  t.equal(unchanged.bytes.length, 0)
})
