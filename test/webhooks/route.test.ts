import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import openapi from '../../plugins/openapi/index.js'
import { problems } from '../../plugins/problem/errors.js'
import { registerWebhook, sharedToken, standardWebhooks, type WebhookVerifier } from '../../plugins/webhooks/index.js'
import { pglite } from '../support/databases.js'
import { SECRET, TOKEN, bodyOf, build, signed } from './helper.js'
import { resolveRefs } from '../openapi/refs.js'

const URL = '/_webhooks/scanner/document-scanned'
const BODY = '{"documentId":"d-1","pageCount":3,"fingerprint":"sha256:ab"}'

const DocumentScanned = Type.Object({
  documentId: Type.String({ minLength: 1 }),
  pageCount: Type.Integer({ minimum: 0 }),
  fingerprint: Type.String()
})

function plain (headers: Record<string, string>): Record<string, string> {
  const { 'x-forwarded-proto': _, ...rest } = headers
  return rest
}

function which (): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

t.test('webhook routes', async t => {
  const store = await pglite.create(t)
  const payloads: unknown[] = []
  const scanner = (app: FastifyInstance): void => registerWebhook(app, {
    producer: 'scanner',
    event: 'document-scanned',
    verifier: standardWebhooks({ secrets: SECRET }),
    schema: DocumentScanned,
    handler: async (payload) => {
      payloads.push(payload)
      if (payload.documentId === 'missing') throw problems.notFound('The document missing does not exist.', { instance: '/v1/documents/missing' })
    }
  })

  t.test('apply with a delivery that carries no id: applied, with no claim to make it once', async t => {
    const seen: Array<{ payload: unknown, once: unknown }> = []
    const app = await build(t, {
      store,
      routes: (app) => registerWebhook(app, {
        producer: 'counter',
        event: 'counted',
        verifier: sharedToken({ tokens: TOKEN, idHeader: false }),
        schema: Type.Object({ n: Type.Integer() }),
        apply: async (payload, once) => { seen.push({ payload, once }); return true }
      })
    })
    const res = await app.inject({ method: 'POST', url: '/_webhooks/counter/counted', payload: '{"n":1}', headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', authorization: `Bearer ${TOKEN}` } })
    t.equal(res.statusCode, 204, res.body)
    t.strictSame(seen, [{ payload: { n: 1 }, once: null }])
  })

  t.test('HTTPS only: plain HTTP 403 before anything else; a trusted proxy saying https passes', async t => {
    const app = await build(t, { store, routes: scanner })
    const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...plain(signed(BODY)), 'x-request-id': 'r-403' } })
    t.equal(res.statusCode, 403)
    t.strictSame(bodyOf(res), {
      title: 'Forbidden',
      status: 403,
      requestId: 'r-403',
      detail: `Webhook deliveries to ${URL} are accepted over HTTPS only; send it to the https address.`,
      instance: URL
    })
    const unsigned = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { 'content-type': 'application/json' } })
    t.equal(unsigned.statusCode, 403, 'transport is checked before the signature')
    const proxied = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY) })
    t.equal(proxied.statusCode, 204, 'X-Forwarded-Proto: https from a trusted proxy')
    const httpProxied = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...signed(BODY), 'x-forwarded-proto': 'http' } })
    t.equal(httpProxied.statusCode, 403, 'a proxy saying http')
    for (const proto of ['HTTPS', 'Https']) {
      const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...signed(BODY), 'x-forwarded-proto': proto } })
      t.equal(res.statusCode, 204, `a proxy saying ${proto}: a scheme is case-insensitive`)
    }
  })

  t.test('the proxy header is ignored unless Fastify trusts the proxy', async t => {
    const untrusting = await build(t, { store, fastify: { trustProxy: false }, routes: scanner })
    t.equal((await untrusting.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY) })).statusCode, 403, 'trustProxy false')
    const byAddress = await build(t, { store, fastify: { trustProxy: '10.0.0.1' }, routes: scanner })
    t.equal((await byAddress.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY), remoteAddress: '192.0.2.9' })).statusCode, 403, 'from an address not trusted')
    t.equal((await byAddress.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY), remoteAddress: '10.0.0.1' })).statusCode, 204, 'from the trusted proxy')
  })

  t.test('allowHttp: plain HTTP accepted (local development)', async t => {
    const app = await build(t, { store, plugin: { allowHttp: true }, routes: scanner })
    t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers: plain(signed(BODY)) })).statusCode, 204)
  })

  t.test('directly over TLS', { skip: which() ? false : 'openssl is not installed: no certificate for the TLS test' }, async t => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-tls-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
    const app = await build(t, {
      store,
      fastify: { trustProxy: false, https: { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) } } as object,
      routes: scanner
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: URL, method: 'POST', headers: plain(signed(BODY)), rejectUnauthorized: false }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode))
      })
      req.on('error', reject)
      req.end(BODY)
    })
    t.equal(status, 204)
  })

  t.test('the body: JSON only, parsed after verification, checked against the schema', async t => {
    const app = await build(t, { store, plugin: { bodyLimit: 200 }, routes: scanner })
    payloads.length = 0
    const send = async (body: string, headers: Record<string, string> = {}, sign = body): Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }> =>
      await app.inject({ method: 'POST', url: URL, payload: body, headers: { ...signed(sign), ...headers } })

    const text = await send(BODY, { 'content-type': 'text/plain' })
    t.equal(text.statusCode, 415)
    t.equal(bodyOf(text).detail, `Deliveries to ${URL} are JSON; send Content-Type: application/json.`)
    const unsignedText = await send(BODY, { 'content-type': 'text/plain' }, 'other')
    t.equal(unsignedText.statusCode, 401, 'an unsigned delivery learns nothing about media types')
    const { 'content-type': _, ...untyped } = signed('')
    const noType = await app.inject({ method: 'POST', url: URL, headers: untyped })
    t.equal(noType.statusCode, 415, 'no body, no Content-Type')
    t.equal((await send(BODY, { 'content-type': 'application/cloudevents+json; charset=utf-8' })).statusCode, 204, 'a +json type')

    const malformed = await send('{"documentId":')
    t.equal(malformed.statusCode, 400)
    t.match(bodyOf(malformed), { title: 'Bad Request', detail: /not valid JSON/ })
    const empty = await send('')
    t.equal(empty.statusCode, 400)
    t.strictSame([bodyOf(empty).title, bodyOf(empty).detail], ['Bad Request', `The delivery has no body; deliveries to ${URL} are a JSON document.`],
      'not the advice to leave Content-Type out, which the route refuses')
    for (const coding of ['gzip', 'br', 'identity, gzip']) {
      const res = await send(BODY, { 'content-encoding': coding })
      t.equal(res.statusCode, 415, `Content-Encoding ${coding}`)
      t.equal(res.headers['accept-encoding'], 'identity')
      t.equal(bodyOf(res).detail, `Deliveries to ${URL} are not content-encoded, and this one has Content-Encoding ${JSON.stringify(coding)}; send the body uncompressed, without Content-Encoding.`)
    }
    t.equal((await send(BODY, { 'content-encoding': ' Identity ' })).statusCode, 204, 'Content-Encoding identity')
    t.equal((await send(BODY, { 'content-encoding': 'gzip' }, 'other')).statusCode, 401, 'an unsigned delivery learns nothing about codings')
    const poisoned = await send('{"documentId":"d","pageCount":1,"fingerprint":"f","__proto__":{"x":1}}')
    t.equal(poisoned.statusCode, 400, 'a __proto__ key is refused like everywhere')
    t.match(bodyOf(poisoned), { detail: /has a "__proto__" or "constructor.prototype" member/ }, 'naming the member, not the syntax, which is fine')

    // Signed bytes that are not UTF-8: refused, not stored with U+FFFD in their place.
    const bytes = Buffer.concat([Buffer.from('{"documentId":"d","pageCount":1,"fingerprint":"ab'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    const notUtf8 = await app.inject({ method: 'POST', url: URL, payload: bytes, headers: signed(bytes) })
    t.equal(notUtf8.statusCode, 400, 'bytes that are not UTF-8')
    t.match(bodyOf(notUtf8), { detail: 'The body is not valid UTF-8; send it encoded in UTF-8, the only charset accepted.' })
    for (const charset of ['ISO-8859-1', 'utf-16']) {
      const latin = await send(BODY, { 'content-type': `application/json; charset=${charset}` })
      t.equal(latin.statusCode, 415, `charset=${charset}`)
      t.equal(bodyOf(latin).detail, `Deliveries to ${URL} are JSON in UTF-8, and the Content-Type declares charset "${charset}"; send the body in UTF-8, with charset=UTF-8 or none.`)
    }
    t.equal((await send(BODY, { 'content-type': 'application/json; charset="UTF-8"' })).statusCode, 204, 'charset UTF-8, quoted')

    const invalid = await send('{"documentId":"","pageCount":"3"}')
    t.equal(invalid.statusCode, 400)
    const problem = bodyOf(invalid)
    t.equal(problem.title, 'Invalid Data')
    t.strictSame(problem.context.map((c: { field: string, source: string }) => [c.field, c.source]).sort(), [['documentId', 'body'], ['fingerprint', 'body'], ['pageCount', 'body']])

    const large = await send(JSON.stringify({ documentId: 'd', pageCount: 1, fingerprint: 'x'.repeat(200) }))
    t.equal(large.statusCode, 413, 'over the bodyLimit')
    const valid = { documentId: 'd-1', pageCount: 3, fingerprint: 'sha256:ab' }
    t.strictSame(payloads, [valid, valid, valid], 'only the valid deliveries reached the handler (a +json type, Content-Encoding identity, a quoted charset)')
  })

  t.test('per-route bodyLimit, method, generic path, config and the handler\'s problems', async t => {
    const seen: Array<[string, string | null]> = []
    const app = await build(t, {
      store,
      before: async (app) => { await app.register(openapi) },
      routes: (app) => {
        scanner(app)
        registerWebhook(app, {
          event: 'payment-received',
          method: 'PUT',
          bodyLimit: 20,
          config: { problems: [409], openapi: { internal: false } },
          verifier: standardWebhooks({ secrets: SECRET }),
          handler: async (_payload, _tx, request) => { seen.push([request.webhook?.producer as string, request.webhook?.id ?? null]) }
        })
      }
    })
    const generic = '/_webhooks/payment-received'
    t.equal((await app.inject({ method: 'PUT', url: generic, payload: '{"a":1}', headers: signed('{"a":1}', { id: 'p1' }) })).statusCode, 204)
    t.strictSame(seen, [['payment-received', 'p1']], 'the event names the producer on a generic path')
    t.equal((await app.inject({ method: 'PUT', url: generic, payload: '{"a":"0123456789012345"}', headers: signed('{"a":"0123456789012345"}') })).statusCode, 413, 'its own bodyLimit')
    // A method the path lacks matches no webhook route: the app-wide rules apply (User-Agent).
    const post = await app.inject({ method: 'POST', url: generic, payload: '{}', headers: { ...signed('{}'), 'user-agent': 'producer/1' } })
    t.equal(post.statusCode, 405)
    t.equal(post.headers.allow, 'PUT, OPTIONS')

    const missing = await app.inject({ method: 'POST', url: URL, payload: '{"documentId":"missing","pageCount":1,"fingerprint":"f"}', headers: signed('{"documentId":"missing","pageCount":1,"fingerprint":"f"}') })
    t.equal(missing.statusCode, 404)
    t.match(bodyOf(missing), { title: 'Not Found', instance: '/v1/documents/missing' })

    // Read through the document's references (shared responses are components).
    const raw = app.swagger() as unknown as Record<string, unknown>
    const doc = resolveRefs(raw, raw) as { paths: Record<string, Record<string, Record<string, any>>> }
    const op = doc.paths[URL]?.post
    t.equal(op?.['x-internal'], true, 'internal in the interface description')
    t.strictSame(op?.security, [], 'no bearer token')
    t.ok(op?.requestBody?.content?.['application/json']?.schema?.properties?.fingerprint, 'the payload schema documented')
    t.equal(op?.responses?.['204']?.description, 'The delivery is acknowledged: applied now, or before.')
    const put = doc.paths[generic]?.put
    t.equal(put?.['x-internal'], true, 'internal whatever the extra config says')
    t.ok(put?.responses?.['409'], 'extra config kept')
  })

  t.test('no User-Agent rule, no Accept rule, no bearer token on webhook routes', async t => {
    const app = await build(t, {
      store,
      routes: (app) => {
        scanner(app)
        app.post('/v1/things', async () => ({ ok: true }))
      }
    })
    const headers = { ...signed(BODY), 'user-agent': 'curl', accept: 'text/html' }
    t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers })).statusCode, 204)
    const normal = await app.inject({ method: 'POST', url: '/v1/things', payload: BODY, headers })
    t.equal(normal.statusCode, 403, 'the same request elsewhere is refused')
  })

  t.test('custom verifiers: null refuses, an id of null applies every time', async t => {
    const refuse: WebhookVerifier = () => null
    let calls = 0
    const app = await build(t, {
      store,
      routes: (app) => {
        registerWebhook(app, { producer: 'refused', verifier: refuse, handler: async () => { calls++ } })
        registerWebhook(app, { producer: 'open', verifier: async () => ({ id: null }), handler: async () => { calls++ } })
      }
    })
    const res = await app.inject({ method: 'POST', url: '/_webhooks/refused/', payload: '{}', headers: signed('{}') })
    t.equal(res.statusCode, 401)
    t.equal(bodyOf(res).detail, 'The delivery could not be authenticated; it must come from the producer, with its secret.')
    for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'POST', url: '/_webhooks/open/', payload: '{}', headers: signed('{}') })).statusCode, 204)
    t.equal(calls, 2)
  })

  t.test('a delivery id longer than the store keeps: 400, from any verifier, and nothing applied', async t => {
    let calls = 0
    const handler = async (): Promise<void> => { calls++ }
    const app = await build(t, {
      store,
      routes: (app) => {
        registerWebhook(app, { producer: 'standard', verifier: standardWebhooks({ secrets: SECRET }), handler })
        registerWebhook(app, { producer: 'token', verifier: sharedToken({ tokens: TOKEN, idHeader: 'x-delivery' }), handler })
        registerWebhook(app, { producer: 'custom', verifier: async (_raw, request) => ({ id: String(request.headers['x-custom-id']) }), handler })
      }
    })
    const tokenHeaders = (id: string): Record<string, string> => ({ 'content-type': 'application/json', 'x-forwarded-proto': 'https', authorization: `Bearer ${TOKEN}`, 'x-delivery': id })
    // 255 and 256 characters; the longer ones once made the store's key fail (a 500 retried for ever).
    for (const [length, status] of [[255, 204], [256, 400], [4000, 400], [8192, 400]] as const) {
      const id = 'é'.repeat(length)
      const standard = await app.inject({ method: 'POST', url: '/_webhooks/standard/', payload: '{}', headers: signed('{}', { id: 'i'.repeat(length) }) })
      t.equal(standard.statusCode, status, `webhook-id of ${length}`)
      const token = await app.inject({ method: 'POST', url: '/_webhooks/token/', payload: '{}', headers: tokenHeaders(id) })
      t.equal(token.statusCode, status, `x-delivery of ${length} two-byte characters`)
      const custom = await app.inject({ method: 'POST', url: '/_webhooks/custom/', payload: '{}', headers: { ...signed('{}'), 'x-custom-id': 'c'.repeat(length) } })
      t.equal(custom.statusCode, status, `an id of ${length} from a verifier of the application's own`)
      if (status === 204) continue
      t.strictSame(bodyOf(standard).context, [{ code: 'INPUT_INVALID', message: `must be at most 255 characters, and is ${length}`, field: 'webhook-id', source: 'header', value: 'i'.repeat(200) + '…' }])
      t.equal(bodyOf(standard).detail, `The webhook-id header must be at most 255 characters, and is ${length}; send a shorter id, the same on each retry of the delivery.`)
      t.match(bodyOf(token).context, [{ field: 'x-delivery', source: 'header' }])
      t.equal(bodyOf(custom).detail, `The delivery's id is ${length} characters long, and at most 255 are kept; the producer must send a shorter one.`)
    }
    t.equal(calls, 3, 'only the deliveries of 255 characters were applied')
    const badSignature = await app.inject({ method: 'POST', url: '/_webhooks/standard/', payload: '{}', headers: { ...signed('{}', { id: 'i'.repeat(300) }), 'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64') } })
    t.equal(badSignature.statusCode, 401, 'the signature is checked first: a stranger learns nothing of the bound')
  })
})
