import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { SECRET, token } from '../resource/helper.js'
import { withRoutes } from '../support/routes.js'

/*
 * Method rules 12: HEAD and OPTIONS answers carry no sensitive data. On every path the
 * reference service serves (taken from the app, so a new route is covered too): a HEAD has no
 * body and no header that the GET of the same request lacks, and without a token it shows no
 * more than the GET does (no ETag, no length of what it would read); an OPTIONS has no body and
 * only the headers that say what the path allows, the request's own and CORS's, with or without
 * a token.
 */

const UA = 'head-options/1 (tap)'
const SCOPES = ['authors:read', 'authors:write', 'documents:read', 'documents:write', 'webhooks:read', 'webhooks:write']
const ORIGIN = 'https://app.example.com'

// What differs between two answers to the same request.
const PER_ANSWER = new Set(['date', 'x-request-id', 'ratelimit-reset', 'ratelimit-remaining', 'ratelimit', 'connection', 'keep-alive'])
// What an OPTIONS answer may say: what the path allows, how to cache it, the request's own headers, CORS.
const OPTIONS_HEADERS = /^(?:allow|cache-control|content-language|date|connection|keep-alive|x-request-id|vary|access-control-[a-z-]+|ratelimit(?:-[a-z]+)?|ratelimit-policy|svc-execution-context)$/

t.test('HEAD and OPTIONS answers carry nothing a GET would not show', async (t) => {
  const { config } = loadConfig({ LOG_LEVEL: 'error', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', CORS_ORIGINS: ORIGIN, WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
  const { app, routes } = await withRoutes(async () => await buildApp(config))
  t.teardown(() => app.close())
  const good = { 'user-agent': UA, authorization: `Bearer ${token('user-1', SCOPES)}` }
  const created = async (url: string, body: unknown): Promise<{ id: string, etag: string }> => {
    const res = await app.inject({ method: 'POST', url, headers: { ...good, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 201, `fixture ${url}`)
    return { id: JSON.parse(res.body).id, etag: String(res.headers.etag) }
  }
  const { id: authorId } = await created('/v1/authors', { name: 'Head Options', email: 'head-options@example.com' })
  const { id: documentId, etag } = await created('/v1/documents', { name: `head-options-${process.pid}`, authorId, kind: 'INVOICE' })
  const { id: subscriptionId } = await created('/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['document.created'] })
  const upload = await app.inject({ method: 'PUT', url: `/v1/documents/${documentId}/content`, headers: { ...good, 'content-type': 'application/pdf', 'if-match': etag }, payload: Buffer.from('%PDF-1.4 head-options') })
  t.equal(upload.statusCode, 204, 'fixture content')

  const concrete = (url: string): string => url
    .replace(/:authorId\b/g, authorId)
    .replace(/:documentId\b/g, documentId)
    .replace(/:subscriptionId\b|:id\b/g, url.includes('webhook-subscriptions') ? subscriptionId : 'unknown-id')
    .replace(/:[A-Za-z]+/g, 'unknown-id')
    .replace(/\*$/, () => url.startsWith('/docs/') ? 'swagger-ui.css' : 'nowhere')
  const paths = [...new Set(routes.filter(r => r.method === 'GET').map(r => concrete(r.url)))]
  t.ok(paths.includes(`/v1/documents/${documentId}`) && paths.includes(`/v1/documents/${documentId}/content`) && paths.includes('/health'), 'the paths come from the app')

  const send = async (method: 'GET' | 'HEAD' | 'OPTIONS', url: string, headers: Record<string, string>): Promise<LightMyRequestResponse> =>
    await app.inject({ method, url, headers: { 'x-request-id': 'same-request', ...headers } })
  const stable = (res: LightMyRequestResponse): Record<string, unknown> =>
    Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_ANSWER.has(name)))

  t.comment(`${paths.length} paths, each with and without a token and from an allowed origin`)
  for (const url of paths) {
    for (const [who, headers] of [['with a token', good], ['without a token', { 'user-agent': UA }], ['from an origin', { ...good, origin: ORIGIN }]] as const) {
      const get = await send('GET', url, headers)
      const head = await send('HEAD', url, headers)
      const what = `HEAD ${url} ${who}`
      t.equal(head.statusCode, get.statusCode, `${what}: the GET's status`)
      t.equal(head.body, '', `${what}: no body`)
      t.strictSame(stable(head), stable(get), `${what}: the GET's headers, no other`)
      if (get.statusCode === 401) {
        t.equal(head.headers.etag, undefined, `${what}: no ETag of the entity`)
        t.match(head.headers['content-type'], /^application\/problem\+json/, `${what}: the length is the problem's`)
      }

      const options = await send('OPTIONS', url, headers)
      const asked = `OPTIONS ${url} ${who}`
      t.ok([204, 404].includes(options.statusCode), `${asked}: ${options.statusCode}`)
      t.equal(options.body === '' || options.statusCode === 404, true, `${asked}: no body`)
      if (options.statusCode !== 204) continue
      const extra = Object.keys(options.headers).filter(name => !OPTIONS_HEADERS.test(name))
      t.strictSame(extra, [], `${asked}: only what the path allows, the request's own headers and CORS`)
      t.equal(options.headers['cache-control'], 'no-store', `${asked}: not cached`)
    }
  }
})
