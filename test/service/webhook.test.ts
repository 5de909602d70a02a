import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { headers } from '../resource/helper.js'
import { DEV_WEBHOOK_SECRET } from '../../config.js'
import { startService } from './service.js'
import { signStandardWebhook } from 'svc-conventions/webhooks'

// Black-box: POST /_webhooks/scanner/document-scanned (reference-service.md, Webhooks) and
// the rate limit, over real HTTP with a trusted proxy saying https.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store, { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_MAX: '200' })

    const json = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any, headers: Headers }> => {
      const res = await fetch(base + path, { method, headers: { ...headers(), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) }
    }
    const author = (await json('POST', '/v1/authors', { name: 'Scan', email: 'scan@example.com' })).body
    const doc = (await json('POST', '/v1/documents', { name: 'scanned-doc', authorId: author.id, kind: 'INVOICE' })).body

    async function deliver (payload: unknown, opts: { id?: string, ts?: number, secret?: string, proto?: string, signature?: string, context?: string } = {}): Promise<{ status: number, body: any, headers: Headers }> {
      const raw = typeof payload === 'string' ? payload : JSON.stringify(payload)
      const id = opts.id ?? `msg_${randomUUID()}`
      const ts = opts.ts ?? Math.floor(Date.now() / 1000)
      const res = await fetch(`${base}/_webhooks/scanner/document-scanned`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forwarded-proto': opts.proto ?? 'https',
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': opts.signature ?? signStandardWebhook(opts.secret ?? DEV_WEBHOOK_SECRET, id, ts, raw),
          ...(opts.context === undefined ? {} : { 'svc-execution-context': opts.context })
        },
        body: raw
      })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) }
    }

    t.test('a signed delivery sets pageCount and fingerprint; a replay is acknowledged, not applied twice', async t => {
      const id = `msg_${randomUUID()}`
      // Key order and spacing that a re-serialization would change: the signature covers the raw bytes.
      const raw = `{ "fingerprint": "sha256:abc",  "pageCount": 7, "documentId": "${doc.id as string}" }`
      const first = await deliver(raw, { id })
      t.equal(first.status, 204)
      const after = (await json('GET', `/v1/documents/${doc.id as string}`)).body
      t.equal(after.pageCount, 7)
      t.equal(after.fingerprint, 'sha256:abc')
      t.not(after.etag, doc.etag, 'a new ETag')
      t.equal(after.modifiedBy, 'scanner')
      const replay = await deliver(raw, { id })
      t.equal(replay.status, 204, 'the replay is acknowledged')
      const again = (await json('GET', `/v1/documents/${doc.id as string}`)).body
      t.equal(again.etag, after.etag, 'and not applied again')
    })

    t.test('bad, stale and missing signatures: 401; plain HTTP: 403; unknown document: 404; bad payload: 400', async t => {
      const payload = { documentId: doc.id, pageCount: 1, fingerprint: 'x' }
      t.equal((await deliver(payload, { secret: 'whsec_' + Buffer.from('another-secret-of-enough-bytes').toString('base64') })).status, 401, 'wrong secret')
      t.equal((await deliver(payload, { ts: Math.floor(Date.now() / 1000) - 600 })).status, 401, 'ten minutes old')
      t.equal((await deliver(payload, { ts: Math.floor(Date.now() / 1000) + 600 })).status, 401, 'ten minutes ahead')
      t.equal((await deliver(payload, { signature: '' })).status, 401, 'no signature')
      const http = await deliver(payload, { proto: 'http' })
      t.equal(http.status, 403, 'not over TLS')
      t.equal(http.body.title, 'Forbidden')
      const unknown = await deliver({ documentId: 'no-such-doc', pageCount: 1, fingerprint: 'x' }, { id: 'msg_refused_once' })
      t.equal(unknown.status, 404)
      t.equal(unknown.body.instance, '/v1/documents/no-such-doc')
      // A refused delivery leaves no record of its id: the producer's retry is applied.
      t.equal((await deliver({ documentId: doc.id, pageCount: 7, fingerprint: 'retried' }, { id: 'msg_refused_once' })).status, 204)
      t.equal((await json('GET', `/v1/documents/${doc.id as string}`)).body.fingerprint, 'retried', 'the retry was applied')
      const bad = await deliver({ documentId: doc.id, pageCount: -1, fingerprint: 'x' })
      t.equal(bad.status, 400)
      t.match(bad.body.context, [{ field: 'pageCount', code: 'INPUT_MIN_VALUE' }])
      const current = (await json('GET', `/v1/documents/${doc.id as string}`)).body
      t.equal(current.pageCount, 7, 'nothing refused changed the document')
    })

    t.test('Svc-Execution-Context selects the partition the delivery writes to, and is checked and echoed', async t => {
      const inContext = async (context: string, method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => {
        const res = await fetch(base + path, { method, headers: { ...headers(), 'content-type': 'application/json', 'svc-execution-context': context }, body: body === undefined ? undefined : JSON.stringify(body) })
        const text = await res.text()
        return { status: res.status, body: text === '' ? null : JSON.parse(text) }
      }
      const preAuthor = (await inContext('preprod', 'POST', '/v1/authors', { name: 'Scan pre', email: 'pre@example.com' })).body
      const preDoc = (await inContext('preprod', 'POST', '/v1/documents', { name: 'scanned-pre', authorId: preAuthor.id, kind: 'INVOICE' })).body
      const prodBefore = (await json('GET', `/v1/documents/${doc.id as string}`)).body

      const pre = await deliver({ documentId: preDoc.id, pageCount: 11, fingerprint: 'pre' }, { context: 'preprod' })
      t.equal(pre.status, 204, 'the preprod document is found in preprod')
      t.equal(pre.headers.get('svc-execution-context'), 'preprod', 'echoed')
      t.equal((await inContext('preprod', 'GET', `/v1/documents/${preDoc.id as string}`)).body.pageCount, 11)
      t.equal((await deliver({ documentId: preDoc.id, pageCount: 12, fingerprint: 'p' })).status, 404, 'not visible without the header (prod)')

      const cross = await deliver({ documentId: doc.id, pageCount: 99, fingerprint: 'cross' }, { context: 'preprod' })
      t.equal(cross.status, 404, 'a prod document is not visible in preprod')
      t.strictSame((await json('GET', `/v1/documents/${doc.id as string}`)).body, prodBefore, 'and the prod document is untouched')

      for (const bad of ['BAD!', 'nonexistent-ctx']) {
        const res = await deliver({ documentId: doc.id, pageCount: 99, fingerprint: 'bad' }, { context: bad })
        t.equal(res.status, 400, `${bad}: refused`)
        t.match(res.body.context, [{ field: 'Svc-Execution-Context', source: 'header' }])
      }
      t.strictSame((await json('GET', `/v1/documents/${doc.id as string}`)).body, prodBefore, 'nothing refused changed the prod document')
    })

    t.test('the webhook is internal in the OpenAPI document', async t => {
      const docRes = await fetch(`${base}/openapi.json`, { headers: headers() })
      const openapi = await docRes.json() as { paths: Record<string, { post: Record<string, unknown> }> }
      const op = openapi.paths['/_webhooks/scanner/document-scanned']?.post
      t.equal(op?.['x-internal'], true)
      t.strictSame(op?.security, [])
    })
  })
}

t.test('rate limit: 429 problem with the throttling values and the rate-limit headers', async t => {
  const { base } = await startService(t, undefined, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute' })
  const statuses: number[] = []
  let last: Response | undefined
  for (let i = 0; i < 4; i++) {
    last = await fetch(`${base}/v1/authors`, { headers: headers() })
    statuses.push(last.status)
  }
  t.strictSame(statuses, [200, 200, 200, 429])
  t.equal(last?.headers.get('ratelimit-limit'), '3')
  t.equal(last?.headers.get('ratelimit-remaining'), '0')
  t.ok(Number(last?.headers.get('retry-after')) > 0)
  const body = await last?.json() as { title: string, status: number, detail: string }
  t.equal(body.title, 'Too Many Requests')
  t.match(body.detail, /3/)
  const other = await fetch(`${base}/v1/authors`, { headers: headers({}, 'another-user') })
  t.equal(other.status, 200, 'limits are per token subject')
  const health = await fetch(`${base}/health`)
  t.equal(health.status, 200, '/health is never limited')
})

t.test('rate limit: requests without a valid token count per address, and stop token guessing', async t => {
  const { base } = await startService(t, undefined, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute' })
  const statuses: number[] = []
  for (const authorization of ['Bearer bad.token.here', 'Bearer another.bad.one', 'Basic eDp5']) {
    statuses.push((await fetch(`${base}/v1/authors`, { headers: { ...headers(), authorization } })).status)
  }
  t.strictSame(statuses, [401, 401, 401])
  const guess = await fetch(`${base}/v1/authors`, { headers: headers() })
  t.equal(guess.status, 429, 'the address is stopped before its next token is checked, a valid one too')
  t.ok(Number(guess.headers.get('retry-after')) > 0)
  const body = await guess.json() as { title: string, detail: string }
  t.equal(body.title, 'Too Many Requests')
  t.match(body.detail, /refused authentication/)
})

t.test('rate limit behind a trusted proxy (TRUST_PROXY): each client counts by its forwarded address', async t => {
  const { base } = await startService(t, undefined, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute', TRUST_PROXY: '127.0.0.1' })
  const from = async (address: string, authorization: string): Promise<number> =>
    (await fetch(`${base}/v1/authors`, { headers: { ...headers(), authorization, 'x-forwarded-for': address } })).status
  const guesses = []
  for (const token of ['bad.token.here', 'another.bad.one', 'a.third.one']) guesses.push(await from('203.0.113.7', `Bearer ${token}`))
  t.strictSame(guesses, [401, 401, 401])
  const valid = headers().authorization as string
  t.equal(await from('203.0.113.7', valid), 429, 'the guessing client is stopped')
  t.equal(await from('198.51.100.9', valid), 200, 'another client behind the same proxy is not')
  t.equal(await from('198.51.100.9, 203.0.113.7', valid), 429, 'the address the proxy saw counts, not one the client wrote before it')
})
