import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { DEV_WEBHOOK_SECRET } from '../../config.js'
import { signStandardWebhook } from '../../plugins/webhooks/index.js'
import type { ServedResource } from '../../plugins/resource/index.js'
import { signToken } from '../../plugins/auth/sign.js'
import { SECRET } from '../resource/helper.js'
import { ALL_SCOPES, client, receiver, sleep, startEvents } from './helper.js'

// Every path of the write path emits (jobs, the scanner webhook), safe targets over HTTP, and a
// subscription switched off after 20 deliveries in a row failed.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const hook = await receiver(t)

    t.test('a job and the scanner webhook emit, with the requestId of the request that made the change', async t => {
      const { base } = await startEvents(t, store, { TRUST_PROXY: '127.0.0.1' })
      const call = client(base)
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created', 'document.updated'] })).body
      hook.got.length = 0
      const accepted = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Job 1', email: 'j1@example.com' } }, { action: 'CREATE', entity: { name: 'Job 2', email: 'j2@example.com' } }] },
        { prefer: 'respond-async', 'x-request-id': 'the-job-request', 'content-type': 'application/json' })
      t.equal(accepted.status, 202)
      await hook.waitFor(2)
      t.strictSame(hook.got.map(r => r.headers['x-request-id']), ['the-job-request', 'the-job-request'])
      t.strictSame(hook.got.map(r => r.json.data.name).sort(), ['Job 1', 'Job 2'])

      const author = hook.got[0]?.json.data
      const doc = (await call('POST', '/v1/documents', { name: `scanned-${randomUUID()}`, authorId: author.id, kind: 'INVOICE' })).body
      hook.got.length = 0
      const raw = JSON.stringify({ documentId: doc.id, pageCount: 7, fingerprint: 'sha256:abc' })
      const id = `msg_${randomUUID()}`
      const ts = Math.floor(Date.now() / 1000)
      const scanned = await fetch(`${base}/_webhooks/scanner/document-scanned`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-request-id': 'scanner-call', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signStandardWebhook(DEV_WEBHOOK_SECRET, id, ts, raw) },
        body: raw
      })
      t.equal(scanned.status, 204)
      const [r] = await hook.waitFor(1)
      t.match(r?.json, { type: 'document.updated', data: { id: doc.id, name: doc.name, authorId: author.id, kind: 'INVOICE', pageCount: 7, fingerprint: 'sha256:abc' } })
      t.equal(r?.headers['x-request-id'], 'scanner-call')
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('a file\'s upload and removal, one statement each with the bytes, emit one event each', async t => {
      const { base } = await startEvents(t, store)
      const call = client(base)
      const author = (await call('POST', '/v1/authors', { name: `Uploader ${randomUUID()}`, email: 'u@example.com' })).body
      const doc = (await call('POST', '/v1/documents', { name: `uploaded-${randomUUID()}`, authorId: author.id, kind: 'INVOICE' })).body
      const auth = { 'user-agent': 'events-tests/1 (tap)', authorization: `Bearer ${signToken({ secret: SECRET, sub: 'user-1', scope: ALL_SCOPES })}` }
      const content = async (method: string, etag?: string, body?: string): Promise<Response> => await fetch(`${base}/v1/documents/${doc.id as string}/content`, {
        method,
        headers: { ...auth, ...(etag === undefined ? {} : { 'if-match': etag }), ...(body === undefined ? {} : { 'content-type': 'text/plain; charset=UTF-8' }) },
        body
      })
      // Before any subscription: the instance learns that none wants the event.
      const first = await content('PUT', doc.etag, 'before')
      t.equal(first.status, 204)
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['document.updated'] })).body
      hook.got.length = 0
      // The first write the subscription wants: stopped by its quiet check, then made again with its outbox, the bytes with it.
      const put = await content('PUT', first.headers.get('etag') as string, 'the file')
      t.equal(put.status, 204)
      const [updated] = await hook.waitFor(1)
      t.match(updated?.json, { type: 'document.updated', data: { id: doc.id, etag: put.headers.get('etag'), content: { mediaType: 'text/plain; charset=UTF-8', byteCount: '8' } } })
      t.equal(await (await content('GET')).text(), 'the file', 'the bytes stored with the change')
      hook.got.length = 0
      const removed = await content('DELETE', put.headers.get('etag') as string)
      t.equal(removed.status, 204)
      const [cleared] = await hook.waitFor(1)
      t.match(cleared?.json, { type: 'document.updated', data: { id: doc.id, etag: removed.headers.get('etag'), content: null } })
      t.equal((await content('GET')).status, 404, 'and removed with it')
      await sleep(200)
      t.equal(hook.got.length, 1, 'one event each')
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('a change the application makes through the write path outside any request emits, with no requestId', async t => {
      const { app, base } = await startEvents(t, store)
      const call = client(base)
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] })).body
      hook.got.length = 0
      const authors = app.resources.get('authors') as ServedResource
      const id = randomUUID()
      // A task of the application's own (no request): its WriteCall names no requestId.
      const created = await authors.writer.one(authors.store, { ctx: 'prod', by: 'nightly-import', atomic: true }, { action: 'create', id, values: { name: 'Imported', email: 'i@example.com' }, ifMatch: null, ifNoneMatch: null }, null)
      t.match(created, { failure: null, change: 'created', row: { id, createdBy: 'nightly-import' } })
      const [r] = await hook.waitFor(1)
      t.match(r?.json, { type: 'author.created', data: { id, name: 'Imported' } })
      t.notOk('x-request-id' in (r?.headers ?? {}), 'no X-Request-ID: no request made the change')
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('safe targets: refused at save with a 400 naming the rule; a name resolving to a private address too', async t => {
      const resolver = async (host: string): Promise<Array<{ address: string, family: number }>> => {
        if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }]
        if (host === 'internal.example.com') return [{ address: '10.20.30.40', family: 4 }]
        throw new Error('ENOTFOUND')
      }
      const { base } = await startEvents(t, store, { WEBHOOK_ALLOW_INSECURE_TARGETS: 'false' }, { resolver, worker: false })
      const call = client(base)
      const cases: Array<[string, string]> = [
        ['http://hooks.example.com/in', 'URL_NOT_HTTPS'],
        ['https://127.0.0.1/in', 'URL_INTERNAL_ADDRESS'],
        ['https://[::1]/in', 'URL_INTERNAL_ADDRESS'],
        ['https://10.0.0.8/in', 'URL_INTERNAL_ADDRESS'],
        ['https://169.254.169.254/latest', 'URL_INTERNAL_ADDRESS'],
        ['https://internal.example.com/in', 'URL_INTERNAL_ADDRESS']
      ]
      for (const [url, code] of cases) {
        const res = await call('POST', '/v1/webhook-subscriptions', { url, events: ['author.created'] })
        t.equal(res.status, 400, url)
        t.match(res.body.context, [{ code, field: 'url', source: 'body', value: url, message: / \(in local development, WEBHOOK_ALLOW_INSECURE_TARGETS=true allows it\)$/ }], url)
      }
      const ok = await call('POST', '/v1/webhook-subscriptions', { url: 'https://hooks.example.com/in', events: ['author.created'] })
      t.equal(ok.status, 201)
      const moved = await call('PATCH', `/v1/webhook-subscriptions/${ok.body.id as string}`, { url: 'https://internal.example.com/in' })
      t.equal(moved.status, 400, 'a PATCH of the url is checked too')
      // In production the refusal names no setting: its clients cannot change it, and it must stay off there.
      const production = await startEvents(t, store, {
        WEBHOOK_ALLOW_INSECURE_TARGETS: 'false', NODE_ENV: 'production', CURSOR_SECRET: 'a production cursor secret 0123', WEBHOOK_SECRET_SCANNER: DEV_WEBHOOK_SECRET, OVERLOAD_MAX_EVENT_LOOP_DELAY: '0', OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '0'
      }, { resolver, worker: false })
      const refused = await client(production.base)('POST', '/v1/webhook-subscriptions', { url: 'http://hooks.example.com/in', events: ['author.created'] })
      t.match(refused, { status: 400, body: { context: [{ code: 'URL_NOT_HTTPS', message: 'must be an https:// URL' }] } }, 'production: no setting named')
      const writes: Array<[string, string]> = [['POST', '/v1/webhook-subscriptions'], ['PATCH', `/v1/webhook-subscriptions/${ok.body.id as string}`]]
      for (const [method, path] of writes) {
        const credentials = await call(method, path, { url: 'https://hooks:s3cr3t@hooks.example.com/in', events: ['author.created'] })
        t.equal(credentials.status, 400, `${method}: a URL with a user and password`)
        t.strictSame(credentials.body.context, [{ code: 'URL_CREDENTIALS', field: 'url', source: 'body', message: 'must not carry a user name or password, which every read of the subscription would show; the subscriber authenticates deliveries by their signature' }], `${method}: no value`)
        t.notMatch(JSON.stringify(credentials.body), /s3cr3t/, `${method}: the password is not sent back`)
        // Accepted by the schema's `uri` format, refused by the URL parser: a 400, not a 500.
        for (const url of ['https://example.com:99999/', 'https://a%20b/']) {
          const unparsed = await call(method, path, { url, events: ['author.created'] })
          t.equal(unparsed.status, 400, `${method} ${url}`)
          t.match(unparsed.body.context, [{ code: 'INPUT_INVALID', field: 'url', source: 'body', value: url, message: /^must be a URL a client can connect to/ }], `${method} ${url}`)
        }
        const hidden = await call(method, path, { url: 'https://hooks:s3cr3t@hooks.example.com:99999/in', events: ['author.created'] })
        t.equal(hidden.status, 400, `${method}: an unparsed URL with credentials`)
        t.notMatch(JSON.stringify(hidden.body), /s3cr3t/, `${method}: what may be a password is not sent back`)
      }
      const unknown = await call('PATCH', `/v1/webhook-subscriptions/${ok.body.id as string}`, { events: ['author.eaten'] })
      t.match(unknown.body.context, [{ code: 'INPUT_INVALID', field: 'events[0]', value: 'author.eaten' }])
      await call('DELETE', `/v1/webhook-subscriptions/${ok.body.id as string}`)
    })

    t.test('20 deliveries FAILED in a row switch the subscription off', async t => {
      const { base } = await startEvents(t, store, {}, { retrySchedule: [] })
      const call = client(base)
      hook.setRespond((_r, res) => { res.statusCode = 500; res.end() })
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] })).body
      hook.got.length = 0
      const ops = Array.from({ length: 20 }, (_, i) => ({ action: 'CREATE', entity: { name: `Failing ${i}`, email: 'f@example.com' } }))
      t.equal((await call('PATCH', '/v1/authors', { operations: ops }, { 'content-type': 'application/json' })).status, 200)
      const deadline = Date.now() + 30_000
      let read: any
      do {
        await sleep(50)
        read = (await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).body
      } while (read.active && Date.now() < deadline)
      t.equal(read.active, false)
      t.not(read.etag, s.etag)
      t.equal(hook.got.length, 20)
      await call('POST', '/v1/authors', { name: 'Not delivered', email: 'n@example.com' })
      await sleep(300)
      t.equal(hook.got.length, 20, 'an inactive subscription receives nothing')
      const failed = (await call('GET', `/v1/webhook-subscriptions/${s.id as string}/deliveries?status=FAILED&limit=100`)).body.results
      t.equal(failed.length, 20)
      hook.setRespond((_r, res) => { res.statusCode = 204; res.end() })
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { active: true })).status, 204, 'switched on again by hand')
    })
  })
}
