import t from 'tap'
import type { InjectOptions } from 'fastify'
import { build } from '../../examples/five-minute.js'
import { signToken } from '../../plugins/auth/sign.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { inlineHeaders } from '../openapi/support.js'

const secret = 'a test secret of at least thirty-two bytes'
const ua = { 'user-agent': 'orders-test/1.0' }
const bearer = (scope: string): Record<string, string> => ({ ...ua, authorization: `Bearer ${signToken({ secret, sub: 'alice', scope })}` })

t.test('the five-minute server follows the conventions', async (t) => {
  const app = await build({}, secret)
  t.teardown(() => app.close())
  const rw = bearer('orders:read orders:write')

  const created = await app.inject({ method: 'POST', url: '/v1/orders', headers: rw, payload: { item: 'pen', quantity: 2 } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, '/v1/orders/1')
  t.strictSame(created.json(), { id: '1', item: 'pen', quantity: 2 })

  const read = await app.inject({ url: '/v1/orders/1', headers: bearer('orders:read'), query: {} })
  t.equal(read.statusCode, 200)
  t.strictSame(read.json(), { id: '1', item: 'pen', quantity: 2 })
  t.equal(read.headers['cache-control'], 'no-store', 'authenticated responses are not cached')
  t.equal(read.headers['x-request-id'], undefined, 'nothing echoed when no X-Request-ID was sent')

  const missing = await app.inject({ url: '/v1/orders/9', headers: { ...rw, 'x-request-id': 'r-1' } })
  t.equal(missing.statusCode, 404)
  t.match(missing.headers['content-type'], /^application\/problem\+json/)
  t.equal(missing.headers['x-request-id'], 'r-1')
  t.match(missing.json(), { title: 'Not Found', status: 404, requestId: 'r-1', detail: /no order 9; create it with POST/ })
})

t.test('requests the conventions refuse, as problems', async (t) => {
  const app = await build({}, secret)
  t.teardown(() => app.close())
  const rw = bearer('orders:read orders:write')
  const cases: Array<{ name: string, request: InjectOptions, status: number, title: string, headers?: Record<string, string> }> = [
    { name: 'no token', request: { url: '/v1/orders/1', headers: ua }, status: 401, title: 'Invalid Request' },
    { name: 'not a Bearer header', request: { url: '/v1/orders/1', headers: { ...ua, authorization: 'Basic YTpi' } }, status: 401, title: 'Invalid Request' },
    { name: 'a forged token', request: { url: '/v1/orders/1', headers: { ...ua, authorization: `Bearer ${signToken({ secret: secret.toUpperCase(), sub: 'eve' })}` } }, status: 401, title: 'Invalid Token' },
    { name: 'an expired token', request: { url: '/v1/orders/1', headers: { ...ua, authorization: `Bearer ${signToken({ secret, sub: 'alice', scope: 'orders:read', expiresIn: -60 })}` } }, status: 401, title: 'Invalid Token' },
    { name: 'a token without the scope', request: { method: 'POST', url: '/v1/orders', headers: bearer('orders:read'), payload: { item: 'pen', quantity: 1 } }, status: 403, title: 'Forbidden' },
    { name: 'no User-Agent', request: { url: '/v1/orders/1', headers: { 'user-agent': '', authorization: rw.authorization ?? '' } }, status: 403, title: 'Forbidden' },
    { name: 'HTML asked for', request: { url: '/v1/orders/1', headers: { ...rw, accept: 'text/html' } }, status: 406, title: 'Not Acceptable' },
    { name: 'a form body', request: { method: 'POST', url: '/v1/orders', headers: { ...rw, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'item=pen' }, status: 415, title: 'Unsupported Media Type' },
    { name: 'a bad execution context', request: { url: '/v1/orders/1', headers: { ...rw, 'svc-execution-context': 'PROD!' } }, status: 400, title: 'Invalid Data' },
    { name: 'an unknown method', request: { method: 'DELETE', url: '/v1/orders/1', headers: rw }, status: 405, title: 'Method Not Allowed', headers: { allow: 'GET, HEAD, OPTIONS' } },
    { name: 'a URL that does not decode (the router, before any plugin)', request: { url: '/v1/orders/%ZZ', headers: rw }, status: 400, title: 'Bad Request' },
    { name: 'a preflight from another origin', request: { method: 'OPTIONS', url: '/v1/orders', headers: { ...ua, origin: 'https://evil.example', 'access-control-request-method': 'POST' } }, status: 403, title: 'Forbidden', headers: { 'svc-cors-error': 'bad origin' } }
  ]
  for (const c of cases) {
    const res = await app.inject(c.request)
    t.equal(res.statusCode, c.status, c.name)
    t.match(res.headers['content-type'], /^application\/problem\+json/, c.name)
    t.match(res.json(), { title: c.title, status: c.status, requestId: String }, c.name)
    t.match(res.headers, c.headers ?? {}, c.name)
  }

  const invalid = await app.inject({ method: 'POST', url: '/v1/orders', headers: rw, payload: { item: '', quantity: '2', colour: 'red' } })
  t.equal(invalid.statusCode, 400)
  t.match(invalid.json(), { title: 'Invalid Data' })
  t.strictSame(invalid.json().context.map((c: { field: string }) => c.field).sort(), ['colour', 'item', 'quantity'], 'every error at once, no coercion of "2"')
})

t.test('OPTIONS, preflights and the OpenAPI document', async (t) => {
  const app = await build({}, secret)
  t.teardown(() => app.close())
  const options = await app.inject({ method: 'OPTIONS', url: '/v1/orders', headers: ua })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'POST, OPTIONS')

  const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/orders', headers: { ...ua, origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com')

  const doc = await app.inject({ url: '/openapi.json', headers: ua })
  t.equal(doc.statusCode, 200)
  // Shared headers written in place, to read them per operation.
  const paths = inlineHeaders(doc.json()).paths
  t.strictSame(Object.keys(paths).sort(), ['/openapi.json', '/v1/orders', '/v1/orders/{orderId}'], 'every route, the document\'s own included')
  t.match(paths['/v1/orders'].post.responses, { 201: {}, default: { description: /^A problem \(RFC 9457\): 400, 401, 403, 404, 406, 413, 415, 429 or 500/ } })
  t.strictSame(doc.json().security, [{ bearerAuth: [] }], 'bearer security')
  t.match(doc.json().components.securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer' } })
  t.equal(doc.json().openapi, '3.1.0')
  t.strictSame(doc.json()['x-request-headers'].map((p: { in: string, name: string }) => `${p.in}:${p.name}`),
    ['header:User-Agent', 'header:X-Request-ID', 'header:Svc-Execution-Context', 'header:Svc-Service'], 'the convention\'s headers, once')
  t.strictSame(paths['/v1/orders/{orderId}'].get.parameters.map((p: { in: string, name: string }) => `${p.in}:${p.name}`), ['path:orderId'], 'and the operation\'s own')
  t.match(paths['/v1/orders/{orderId}'].get.responses, { 200: {}, default: { content: { 'application/problem+json': {} } } }, 'the problem responses')
  t.strictSame(lintOpenApi(doc.json()), [], 'the hand-written routes pass the convention linter')
})

t.test('a missing secret fails at boot, naming the option', async (t) => {
  await t.rejects(build({}, undefined), { name: 'TypeError', message: /secret/ })
})
