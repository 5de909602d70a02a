import t from 'tap'
import { Writable } from 'node:stream'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { SECRET, token } from '../resource/helper.js'
import { withRoutes } from '../support/routes.js'

/*
 * Issue 42: every route the reference service serves (/health, /openapi.json and the docs
 * pages included) answers every 4xx and 5xx with the convention's problem body, whatever
 * headers it is sent, and no answer shows a JavaScript error's text (conventions.md, Errors,
 * rules 1, 3 and 7). The routes are taken from the app itself, so a new one is covered too.
 */

const RUNS = 400

const UA = 'route-problems/1 (tap)'
const SCOPES = ['authors:read', 'authors:write', 'documents:read', 'documents:write', 'webhooks:read', 'webhooks:write']
const TOKEN = token('user-1', SCOPES)
const ALLOWED_ORIGIN = 'https://app.example.com'

// Engine wording (a TypeError's message), the words of an unset value, stack frames.
const JS_ERROR = /Cannot read propert|Cannot set propert|is not a function|is not defined|is not iterable|undefined|\n\s+at |\bat [^\s()]+ \([^)]*:\d+:\d+\)/

t.test('every route answers its errors as problems', async (t) => {
  const logged: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { logged.push(String(chunk).slice(0, 800)); done() } })
  // A rate limit that the runs never meet, and one allowed origin, so that CORS both allows and refuses.
  const { config } = loadConfig({ LOG_LEVEL: 'error', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', RATE_LIMIT_MAX: '10000000', CORS_ORIGINS: ALLOWED_ORIGIN })
  const { app, routes } = await withRoutes(async () => await buildApp(config, { fastify: { logger: { level: 'error', stream } } }))
  t.teardown(() => app.close())

  const good = { 'user-agent': UA, authorization: `Bearer ${TOKEN}` }
  const created = async (url: string, body: unknown): Promise<string> => {
    const res = await app.inject({ method: 'POST', url, headers: { ...good, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 201, `fixture ${url}`)
    return JSON.parse(res.body).id
  }
  const authorId = await created('/v1/authors', { name: 'Route Problems', email: 'route-problems@example.com' })
  const documentId = await created('/v1/documents', { name: `route-problems-${process.pid}`, authorId, kind: 'INVOICE' })

  /** A concrete URL for a route: the fixtures' ids, an unknown id elsewhere, an asset for a wildcard. */
  const concrete = (url: string): string => url
    .replace(/:authorId\b/g, authorId)
    .replace(/:documentId\b/g, documentId)
    .replace(/:[A-Za-z]+/g, 'unknown-id')
    .replace(/\*$/, () => url.startsWith('/docs/') ? 'swagger-ui.css' : 'nowhere')

  // Every path, with GET, HEAD and OPTIONS whether served or not (405 is an answer too), and the
  // write methods it serves; a path that matches no route as well.
  const targets = new Map<string, Set<string>>()
  for (const { method, url } of routes) {
    const path = concrete(url)
    const methods = targets.get(path) ?? new Set(['GET', 'HEAD', 'OPTIONS'])
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) methods.add(method)
    targets.set(path, methods)
  }
  targets.set('/v1/nowhere', new Set(['GET', 'HEAD', 'OPTIONS', 'POST']))
  const requests = [...targets].flatMap(([url, methods]) => [...methods].map((method) => ({ method, url })))
  t.ok(['/health', '/openapi.json', '/docs', '/docs/json', '/docs/static/index.html', '/v1/authors', `/v1/documents/${documentId}/content`].every((url) => targets.has(url)), 'the routes come from the app, the public ones included')

  t.test('the reported cases: malformed conditional headers on the public routes', async (t) => {
    for (const url of ['/health', '/openapi.json', '/docs', '/docs/json', '/docs/static/swagger-ui.css']) {
      for (const method of ['GET', 'HEAD'] as const) {
        for (const header of ['If-Match', 'If-None-Match']) {
          for (const value of ['', 'garbage', 'W/"x']) {
            const res = await app.inject({ method, url, headers: { 'user-agent': UA, [header.toLowerCase()]: value } })
            const what = `${method} ${url} ${header}: ${JSON.stringify(value)}`
            t.equal(res.statusCode, 400, what)
            t.match(res.headers['content-type'], /^application\/problem\+json/, what)
            if (method === 'HEAD') {
              t.equal(res.body, '', `${what}: no body`)
              continue
            }
            const body = JSON.parse(res.body)
            t.match(body, { title: 'Invalid Data', status: 400, requestId: /./, context: [{ code: 'INPUT_INVALID', field: header, source: 'header', value }] }, what)
            t.equal(body.context.length, 1, `${what}: one item`)
          }
        }
      }
    }
  })

  t.test('generated headers on every route', async (t) => {
    let cases = 0
    const statuses = new Map<number, number>()
    // Most runs carry a valid User-Agent and token, so that they get past auth to the later hooks.
    await fc.assert(fc.asyncProperty(fc.constantFrom(...requests), headersArbitrary, fc.nat(4).map((n) => n > 0), fc.constantFrom(...BODIES), async (request, sent, withDefaults, body) => {
      const headers: Record<string, string> = withDefaults ? { ...good, ...sent } : sent
      const options: InjectOptions = { method: request.method as InjectOptions['method'], url: request.url, headers }
      if (['POST', 'PUT', 'PATCH'].includes(request.method)) {
        options.payload = body
        if (headers['content-type'] === undefined) headers['content-type'] = request.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
      }
      const res = await app.inject(options)
      cases++
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      judge(request.method, res)
    }), { numRuns: RUNS })
    t.comment(`${cases} requests over ${requests.length} method-paths: ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')}`)
    t.strictSame(logged, [], 'no unexpected error was logged')
  })
})

/**
 * Throws (so fast-check shrinks and reports the input) unless the answer follows the
 * convention: no 500 (nothing here fails unexpectedly); every 4xx/5xx typed
 * application/problem+json with a problem whose `status` is the HTTP status; no JSON body
 * shows a JavaScript error's text. Docs assets (HTML, scripts) are the browser's, not judged.
 */
function judge (method: string, res: LightMyRequestResponse): void {
  const fail = (why: string): never => { throw new Error(`${why}: ${method} ${res.statusCode} ${String(res.headers['content-type'])} ${res.body.slice(0, 400)}`) }
  const type = String(res.headers['content-type'] ?? '')
  if (res.statusCode === 500) fail('an unexpected error')
  const json = /^application\/(?:problem\+)?json/.test(type)
  if ((json || res.statusCode >= 400) && JS_ERROR.test(res.body)) fail('the body shows a JavaScript error')
  if (res.statusCode < 400) return
  if (!type.startsWith('application/problem+json')) fail('an error that is not application/problem+json')
  if (method === 'HEAD') {
    if (res.body !== '') fail('a body on HEAD')
    return
  }
  let problem: Record<string, unknown>
  try {
    problem = JSON.parse(res.body)
  } catch {
    return fail('a problem body that is not JSON')
  }
  if (problem.status !== res.statusCode) fail('problem status differs from the HTTP status')
  if (typeof problem.title !== 'string' || problem.title === '') fail('a problem without a title')
  if (typeof problem.requestId !== 'string' || problem.requestId === '') fail('a problem without a requestId')
  for (const member of ['type', 'instance', 'detail'] as const) {
    if (problem[member] !== undefined && typeof problem[member] !== 'string') fail(`problem ${member} is not a string`)
  }
  const context = problem.context
  if (context !== undefined && !(Array.isArray(context) && context.every((c: { message?: unknown }) => typeof c?.message === 'string'))) fail('context items without a message')
}

// Node accepts HTAB, visible ASCII, space and obs-text (0x80-0xFF) in a header value, and trims
// the blanks around it; inject does not, so the values are trimmed here as Node would.
const trim = (value: string): string => value.replace(/^[ \t]+|[ \t]+$/g, '')
const ASCII = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 })
const ODD = fc.string({ unit: fc.oneof(fc.constant(0x09), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)), maxLength: 20 })
const LONG = fc.constantFrom('a'.repeat(8000), '"' + 'x'.repeat(4000) + '"', 'W/'.repeat(2000), ','.repeat(3000), 'é'.repeat(2000))

/** Values that are right, nearly right, or the classic traps of each header. */
const POOLS: Record<string, string[]> = {
  'if-match': ['*', '"x"', 'W/"x"', '"a", "b"', '', 'garbage', 'W/"x', '"', ',', 'W/', '* , "a"', '"a",,"b"'],
  'if-none-match': ['*', '"x"', 'W/"x"', '', 'garbage', 'W/"x', '"a" "b"', ', ,'],
  accept: ['application/json', '*/*', 'application/*', 'text/html', 'text/csv', 'application/problem+json', 'application/json;q=0', 'application/json;q=abc', ',,,', ';;', '', '*/json', 'application/vnd.svc-x.v1+json'],
  'content-type': ['application/json', 'application/merge-patch+json', 'application/json; charset=UTF-8', 'application/json; charset=latin1', 'text/plain', 'multipart/form-data; boundary=x', 'multipart/form-data', 'application/pdf', 'application/json;', '/', '', 'application/x-www-form-urlencoded'],
  'user-agent': [UA, 'curl/8.0', 'a/1', 'x', '/1', 'a/', '', 'Mozilla/5.0 (X11; Linux x86_64)', 'é/1 ü'],
  authorization: [`Bearer ${TOKEN}`, 'Bearer', 'Bearer ', 'bearer x', 'Basic dXNlcjpwYXNz', `Bearer ${TOKEN}x`, 'Bearer a.b.c', `Bearer ${token('user-1', [])}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', TOKEN, ''],
  'x-request-id': ['trace-1', 'a'.repeat(200), 'a'.repeat(201), 'x\ty', '{"a":1}', '', '\u00e9'],
  'svc-execution-context': ['prod', 'preprod', 'PROD', '', 'a'.repeat(101), 'x y', 'dev'],
  'svc-service': ['id=6f1f6b0e-3c2a-4d8e-9a51-7c1e2f3a4b5c; name=orders', 'id=x', 'name=a', '=', ';;', 'id', ''],
  'svc-idempotency-key': ['key-2b8c1f6e-0e0b-4f8a-9e3d-4f5a6b7c8d9e', 'short', 'A'.repeat(30), 'a'.repeat(256), ''],
  'svc-custom': ['1', ''],
  origin: [ALLOWED_ORIGIN, 'https://evil.example', 'null', '', 'http://app.example.com'],
  'access-control-request-method': ['GET', 'POST', 'DELETE', 'TRACE', '', 'get'],
  'access-control-request-headers': ['authorization', 'content-type, if-match', 'x-evil', '', ',,'],
  prefer: ['respond-async', 'respond-async, wait=10', 'return=minimal', ';', '', '=', 'respond-async;;'],
  'if-modified-since': ['Mon, 01 Jan 1990 00:00:00 GMT', 'garbage', ''],
  'if-unmodified-since': ['Mon, 01 Jan 1990 00:00:00 GMT', 'garbage', ''],
  range: ['bytes=0-1', 'bytes=99999999-', 'bytes=-', 'garbage', ''],
  'content-language': ['en-US', 'xx', '*', ''],
  'x-forwarded-for': ['1.2.3.4', 'garbage', ''],
  'x-forwarded-proto': ['https', 'gopher', '']
}
const NAMES = Object.keys(POOLS)
const valueOf = (name: string): fc.Arbitrary<string> => fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...(POOLS[name] as string[])) },
  { weight: 2, arbitrary: ASCII },
  { weight: 1, arbitrary: ODD },
  { weight: 1, arbitrary: LONG }
).map(trim)
const headersArbitrary = fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 5 })
  .chain((names) => fc.tuple(...names.map((name) => valueOf(name).map((value) => [name, value] as const))))
  .map((pairs) => Object.fromEntries(pairs) as Record<string, string>)

const BODIES = ['{}', '{"name":"x"}', '{"operations":[]}', 'not json', '', '[]', 'null']
