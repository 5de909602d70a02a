import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import {
  problemExample, validationExample, conventionsExample, corsExample, methodsExample, authExample, rateLimitExample,
  conditionalExample, openapiExample, docsExample, lintExample
} from '../../examples/plugins.js'
import { build as bulkExample } from '../../examples/bulk.js'
import { build as csvExample } from '../../examples/csv.js'
import { build as jobsExample } from '../../examples/jobs.js'
import { signToken } from '../../plugins/auth/sign.js'

// The examples of docs/plugins/ do what their pages say (those of jobs, csv and bulk are whole
// programs, examples/<plugin>.ts; test/examples/programs.test.ts runs them as programs too).
const ua = { 'user-agent': 'plugins-test/1' }
const secret = 'a test secret of at least thirty-two bytes'

async function answers (t: Tap.Test, build: () => Promise<FastifyInstance>, cases: Array<{ request: InjectOptions, status: number, match?: Record<string, unknown>, headers?: Record<string, unknown> }>): Promise<void> {
  const app = await build()
  t.teardown(() => app.close())
  for (const c of cases) {
    const res = await app.inject(c.request)
    const label = `${c.request.method ?? 'GET'} ${String(c.request.url)}`
    t.equal(res.statusCode, c.status, label)
    if (c.match !== undefined) t.match(res.json(), c.match, label)
    if (c.headers !== undefined) t.match(res.headers, c.headers, label)
  }
}

declare global { namespace Tap { type Test = import('tap').Test } }

t.test('problem', async t => answers(t, problemExample, [
  { request: { url: '/v1/names/ann', headers: { 'x-request-id': 'r-1' } }, status: 409, match: { title: 'Conflict', status: 409, requestId: 'r-1', detail: /taken/ }, headers: { 'content-type': /^application\/problem\+json/ } }
]))

t.test('validation', async t => answers(t, validationExample, [
  { request: { method: 'POST', url: '/v1/notes', payload: { text: '', extra: 1 } }, status: 400, match: { title: 'Invalid Data', context: [{}, {}] } },
  { request: { method: 'POST', url: '/v1/notes', payload: { text: 'hi' } }, status: 201 }
]))

t.test('conventions', async t => answers(t, conventionsExample, [
  { request: { url: '/v1/where', headers: { ...ua, 'svc-execution-context': 'sandbox' } }, status: 200, match: { executionContext: 'sandbox' } },
  { request: { url: '/v1/where', headers: { ...ua, 'svc-execution-context': 'staging' } }, status: 400 },
  { request: { url: '/v1/where', headers: { 'user-agent': '' } }, status: 403 }
]))

t.test('cors', async t => answers(t, corsExample, [
  { request: { method: 'OPTIONS', url: '/v1/things', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } }, status: 204, headers: { 'access-control-allow-origin': 'https://app.example.com' } },
  { request: { method: 'OPTIONS', url: '/v1/things', headers: { origin: 'https://a.example.org', 'access-control-request-method': 'GET' } }, status: 204 },
  { request: { method: 'OPTIONS', url: '/v1/things', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } }, status: 403, headers: { 'svc-cors-error': 'bad origin' } }
]))

t.test('methods', async t => answers(t, methodsExample, [
  { request: { method: 'DELETE', url: '/v1/things' }, status: 405, headers: { allow: 'GET, HEAD, OPTIONS' } },
  { request: { method: 'OPTIONS', url: '/v1/things' }, status: 204, headers: { allow: 'GET, HEAD, OPTIONS' } }
]))

t.test('auth', async t => answers(t, async () => await authExample(secret), [
  { request: { url: '/v1/me' }, status: 401, match: { title: 'Invalid Request' } },
  { request: { url: '/v1/me', headers: { authorization: `Bearer ${signToken({ secret, sub: 'ann' })}` } }, status: 403 },
  { request: { url: '/v1/me', headers: { authorization: `Bearer ${signToken({ secret, sub: 'ann', scope: 'profile:read' })}` } }, status: 200, match: { id: 'ann' }, headers: { 'cache-control': 'no-store' } },
  { request: { url: '/v1/status' }, status: 200 }
]))

t.test('rateLimit', async t => answers(t, rateLimitExample, [
  { request: { url: '/v1/things' }, status: 200 },
  { request: { url: '/v1/things' }, status: 200 },
  { request: { url: '/v1/things' }, status: 429, match: { title: 'Too Many Requests' }, headers: { 'retry-after': /\d/ } },
  { request: { url: '/v1/cheap' }, status: 200 }
]))

t.test('conditional', async t => answers(t, conditionalExample, [
  { request: { url: '/v1/setting', headers: { 'if-none-match': '"1"' } }, status: 304 },
  { request: { method: 'PUT', url: '/v1/setting' }, status: 428 },
  { request: { method: 'PUT', url: '/v1/setting', headers: { 'if-match': '"7"' } }, status: 412 },
  // If-None-Match: * asks to create only: the setting exists, so nothing is overwritten.
  { request: { method: 'PUT', url: '/v1/setting', headers: { 'if-none-match': '*' } }, status: 412 },
  { request: { method: 'PUT', url: '/v1/setting', headers: { 'if-match': '"1"', 'if-none-match': '"1"' } }, status: 412 },
  { request: { method: 'PUT', url: '/v1/setting', headers: { 'if-match': '"1"' } }, status: 204, headers: { etag: '"2"' } }
]))

t.test('bulk', async t => {
  const token = signToken({ secret, sub: 'ann', scope: 'books:read books:write' })
  await answers(t, async () => await bulkExample({}, secret), [{
    request: {
      method: 'PATCH',
      url: '/v1/books',
      headers: { ...ua, authorization: `Bearer ${token}` },
      payload: { operations: [{ action: 'CREATE', entity: { title: 'Dune', isbn: '9780441013593', pageCount: 412 } }] }
    },
    status: 200,
    match: { status: 'SUCCEEDED' }
  }])
})

t.test('openapi', async t => answers(t, openapiExample, [
  { request: { url: '/openapi.json' }, status: 200, match: { info: { title: 'Notes' }, components: { securitySchemes: { bearerAuth: { description: /identity service/ } } } } }
]))

t.test('docs', async t => answers(t, docsExample, [
  { request: { url: '/docs', headers: { accept: 'text/html' } }, status: 200 }
]))

t.test('lint', async t => {
  await t.rejects(lintExample().then(async app => { await app.ready() }), /isActive.* \[boolean-prefix\]/)
})

t.test('jobs', async t => {
  const app = await jobsExample({}, secret)
  t.teardown(() => app.close())
  const headers = { ...ua, authorization: `Bearer ${signToken({ secret, sub: 'ann', scope: 'reports:read reports:write' })}` }
  const res = await app.inject({ method: 'POST', url: '/v1/reports', headers })
  t.equal(res.statusCode, 202)
  const job = res.json()
  t.equal(res.headers.link, `</v1/jobs/${job.id as string}>; rel="monitor"`)
  t.match(job, { kind: 'REPORT', collection: 'reports', createdBy: 'ann' })
  for (let i = 0; ; i++) {
    const now = (await app.inject({ url: `/v1/jobs/${job.id as string}`, headers })).json()
    if (now.status === 'SUCCEEDED') {
      t.strictSame(now.result, { jobs: 1 }, 'the job ran, counting itself')
      break
    }
    t.ok(i < 3000, 'the job ends')
    if (i >= 3000) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal((await app.inject({ url: '/v1/jobs', headers })).json().results.length, 1, 'listed')
})

t.test('csv', async t => {
  await answers(t, csvExample, [
    { request: { url: '/v1/books?ordering=id', headers: { ...ua, accept: 'text/csv, application/json' } }, status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } },
    { request: { url: '/v1/books', headers: { ...ua, accept: 'image/png' } }, status: 406, match: { detail: /"image\/png"/ } }
  ])
  const app = await csvExample()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/v1/books?ordering=id&limit=2', headers: { ...ua, accept: 'text/csv' } })
  t.equal(res.headers['content-type'], 'text/csv; charset=UTF-8')
  t.equal(res.body, 'id,title,year,tags,author.name,author.country\r\nb1,Nineteen Eighty-Four,1949,classic|dystopia,George Orwell,GB\r\nb2,Dune,1965,sf,Frank Herbert,US\r\n')
  t.match(res.headers.link, /^<http:\/\/localhost(:\d+)?\/v1\/books\?limit=2&cursor=[^>]+&ordering=id>; rel="next"$/)
})
