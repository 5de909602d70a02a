import t from 'tap'
import { databases } from '../support/databases.js'
import { unique } from '../resource/helper.js'
import { DEV_SERVICE_ID, DEV_SERVICE_NAME } from '../../config.js'
import { client, receiver, sleep, startEvents, verify } from './helper.js'

// Black-box over real HTTP: the reference contract's "Outgoing events", with a real receiver.

/**
 * The attempts' timeout of the test of a timeout: reached by the attempt left unanswered, and
 * still longer than a stall of this loaded process, which must not time out an answered one.
 */
const TIMEOUT_MILLIS = 5000

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startEvents(t, store)
    const hook = await receiver(t)

    /** Requests to the service at `base`, and the subscription routes' steps. */
    function api (base: string): {
      call: ReturnType<typeof client>
      subscribe: (events: string[], url?: string, extra?: Record<string, string>) => Promise<any>
      deliveries: (subscriptionId: string, query?: string, extra?: Record<string, string>) => Promise<any[]>
      settled: (subscriptionId: string, n: number, status?: string, extra?: Record<string, string>) => Promise<any[]>
    } {
      const call = client(base)
      async function subscribe (events: string[], url = hook.url, extra: Record<string, string> = {}): Promise<any> {
        const res = await call('POST', '/v1/webhook-subscriptions', { url, events, description: null }, extra)
        t.equal(res.status, 201, res.text)
        return res
      }
      async function deliveries (subscriptionId: string, query = '', extra: Record<string, string> = {}): Promise<any[]> {
        return (await call('GET', `/v1/webhook-subscriptions/${subscriptionId}/deliveries${query}`, undefined, extra)).body.results
      }
      async function settled (subscriptionId: string, n: number, status = 'SUCCEEDED', extra: Record<string, string> = {}): Promise<any[]> {
        const deadline = Date.now() + 30_000
        for (;;) {
          const list = await deliveries(subscriptionId, `?status=${status}&limit=100`, extra)
          if (list.length >= n) return list
          if (Date.now() > deadline) throw new Error(`${list.length} of ${n} deliveries ${status}`)
          await sleep(30)
        }
      }
      return { call, subscribe, deliveries, settled }
    }
    const { call, subscribe, deliveries, settled } = api(base)

    t.test('a subscription: 201 with Location, ETag and the secret once; reads leave the secret out', async t => {
      const res = await subscribe(['author.created'])
      const s = res.body
      t.match(s, { ref: `svc:webhook-subscription::${s.id as string}`, url: hook.url, events: ['author.created'], description: null, active: true, createdBy: 'user-1', modifiedBy: 'user-1' })
      t.match(s.secret, /^whsec_[A-Za-z0-9+/=]+$/)
      t.equal(res.headers.get('location'), `/v1/webhook-subscriptions/${s.id as string}`)
      t.equal(res.headers.get('etag'), s.etag)
      const read = await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)
      t.equal(read.status, 200)
      t.equal(read.body.secret, undefined)
      t.equal(read.headers.get('etag'), s.etag)
      const list = await call('GET', '/v1/webhook-subscriptions')
      t.ok(list.body.results.some((x: any) => x.id === s.id && x.secret === undefined))
      const bad = await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.eaten'] })
      t.equal(bad.status, 400)
      t.equal((await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: [] })).status, 400, 'at least one event')
      t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)).status, 204)
      t.equal((await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).status, 404)
    })

    t.test('PATCH: a merge patch, If-Match honoured (412 on a stale one), 204 with the new ETag; DELETE 204 also when gone', async t => {
      const s = (await subscribe(['author.created'])).body
      const patched = await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { description: 'for tests', events: ['author.created', 'author.updated'] }, { 'if-match': s.etag })
      t.equal(patched.status, 204)
      const etag = patched.headers.get('etag') as string
      t.not(etag, s.etag)
      const read = (await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).body
      t.match(read, { description: 'for tests', events: ['author.created', 'author.updated'], active: true, etag })
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { active: false }, { 'if-match': s.etag })).status, 412)
      const current = (await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).headers.get('etag') as string
      const unchanged = await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { active: false }, { 'if-none-match': current })
      t.equal(unchanged.status, 412, 'If-None-Match that matches refuses the change')
      t.match(unchanged.body, { detail: /If-None-Match matches/ })
      t.equal((await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).body.active, true, 'nothing changed')
      t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`, undefined, { 'if-none-match': '*' })).status, 412, 'If-None-Match: * on an existing one')
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { active: false }, { 'if-none-match': '"other"' })).status, 204, 'If-None-Match of another tag holds')
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${s.id as string}`, { active: false })).status, 204, 'If-Match is not required')
      t.equal((await call('PATCH', '/v1/webhook-subscriptions/nope', { active: false })).status, 404)
      t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`, undefined, { 'if-match': s.etag })).status, 412)
      t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)).status, 204)
      t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)).status, 204, 'gone already')
      // As for authors: once it is gone, a DELETE is 204 whatever its conditions.
      for (const condition of [{ 'if-match': s.etag }, { 'if-match': '*' }, { 'if-match': '"other"' }]) {
        t.equal((await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`, undefined, condition)).status, 204, `gone already, ${JSON.stringify(condition)}`)
      }
    })

    t.test('a committed change is delivered once, signed, with the contract\'s headers and body', async t => {
      const s = (await subscribe(['author.created'])).body
      hook.got.length = 0
      const author = (await call('POST', '/v1/authors', { name: 'Evented', email: 'e@example.com' }, { 'x-request-id': 'req-events-1' })).body
      const [r] = await hook.waitFor(1)
      verify(s.secret, r as any)
      const h = (r as any).headers
      t.equal(h['content-type'], 'application/json')
      t.match(h['user-agent'], /^svc-reference\/1 /)
      t.equal(h['x-request-id'], 'req-events-1')
      t.equal(h['svc-service'], `id=${DEV_SERVICE_ID}; name=${DEV_SERVICE_NAME}`)
      t.equal(h['svc-execution-context'], undefined, 'production: no header')
      t.match(h['webhook-id'], /^msg_/)
      t.match((r as any).json, { type: 'author.created', data: { id: author.id, ref: author.ref, name: 'Evented', email: 'e@example.com', active: true, etag: author.etag } })
      t.ok(Math.abs(Date.parse((r as any).json.timestamp) - Date.now()) < 60_000)
      const [d] = await settled(s.id, 1)
      t.match(d, { webhookId: h['webhook-id'], eventType: 'author.created', status: 'SUCCEEDED', attemptCount: 1, lastStatusCode: 204, nextAttemptDateTime: null })
      await sleep(300)
      t.equal(hook.got.length, 1, 'delivered once')
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('a delivered entity is the one a GET answers, whatever its text holds', async t => {
      const s = (await subscribe(['document.created'])).body
      hook.got.length = 0
      const author = (await call('POST', '/v1/authors', { name: 'Quoted "Author"', email: 'q@example.com' })).body
      const awkward = 'a "quoted", {braced} \\ back\nslash NULL ünïcödé 👍'
      const doc = (await call('POST', '/v1/documents', { name: unique('awkward "doc", {x}'), description: awkward, authorId: author.id, kind: 'INVOICE', tags: ['a,b', '{c}', '"q"', 'NULL', '\\', ' '] })).body
      const [r] = await hook.waitFor(1)
      const read = (await call('GET', `/v1/documents/${doc.id as string}`)).body
      t.strictSame((r as any).json.data, read, 'the delivered entity is the GET\'s, member for member')
      t.equal((r as any).json.data.description, awkward)
      t.strictSame((r as any).json.data.tags, ['a,b', '{c}', '"q"', 'NULL', '\\', ' '])
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('the document lifecycle: created, published, deleted, restored, updated, archived; execution contexts apart', async t => {
      const ctx = { 'svc-execution-context': 'preprod' }
      const s = (await subscribe(['document.created', 'document.updated', 'document.published', 'document.deleted', 'document.restored', 'document.archived'], hook.url, ctx)).body
      t.equal((await call('GET', `/v1/webhook-subscriptions/${s.id as string}`)).status, 404, 'not visible in prod')
      hook.got.length = 0
      await call('POST', '/v1/documents', { name: unique('prod-doc'), authorId: 'nobody', kind: 'INVOICE' })
      const author = (await call('POST', '/v1/authors', { name: 'Doc Author', email: 'd@example.com' }, ctx)).body
      const doc = (await call('POST', '/v1/documents', { name: unique('ctx-doc'), authorId: author.id, kind: 'INVOICE' }, ctx)).body
      let etag = doc.etag
      const step = async (method: string, path: string, body?: unknown): Promise<void> => {
        const res = await call(method, path, body, { ...ctx, 'if-match': etag })
        t.ok(res.status < 300, `${method} ${path}: ${res.text}`)
        etag = (await call('GET', `/v1/documents/${doc.id as string}`, undefined, ctx)).headers.get('etag')
      }
      await step('POST', `/v1/documents/${doc.id as string}/publish`)
      await step('DELETE', `/v1/documents/${doc.id as string}`)
      await step('POST', `/v1/documents/${doc.id as string}/restore`)
      await step('PATCH', `/v1/documents/${doc.id as string}`, { description: 'changed' })
      await step('POST', `/v1/documents/${doc.id as string}/archive`)
      const got = await hook.waitFor(6)
      await sleep(200)
      t.strictSame(hook.got.map(r => r.json.type).sort(), ['document.archived', 'document.created', 'document.deleted', 'document.published', 'document.restored', 'document.updated'])
      t.ok(hook.got.every(r => r.headers['svc-execution-context'] === 'preprod'))
      const published = got.find(r => r.json.type === 'document.published') as any
      t.match(published.json.data, { id: doc.id, status: 'PUBLISHED' })
      // Those answered 204 hold the whole entity too, though the route asked its write for the ETag alone.
      for (const type of ['document.updated', 'document.deleted']) {
        const event = got.find(r => r.json.type === type) as any
        t.match(event.json.data, { id: doc.id, name: doc.name, authorId: author.id, kind: 'INVOICE', createdDateTime: doc.createdDateTime }, `${type}: the whole entity`)
      }
      t.equal((got.find(r => r.json.type === 'document.updated') as any).json.data.description, 'changed')
      t.equal(new Set(hook.got.map(r => r.headers['webhook-id'])).size, 6)
      const byType = await deliveries(s.id, '?eventType=document.archived', ctx)
      t.equal(byType.length, 1, 'filtered on eventType')
      t.equal((await deliveries(s.id, '', ctx)).length, 6)
      const newest = await deliveries(s.id, '', ctx)
      t.ok(newest[0].createdDateTime >= newest[5].createdDateTime, 'newest first')
    })

    t.test('an ATOMIC bulk that fails delivers nothing; one that commits delivers each', async t => {
      const s = (await subscribe(['author.created'])).body
      hook.got.length = 0
      const failed = await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'A', email: 'a@example.com' } }, { action: 'UPDATE', entity: { id: 'missing', name: 'B', email: 'b@example.com' } }] }, { 'content-type': 'application/json' })
      t.equal(failed.status, 200)
      t.equal(failed.body.status, 'FAILED')
      const ok = await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'C', email: 'c@example.com' } }, { action: 'CREATE', entity: { name: 'D', email: 'd@example.com' } }] }, { 'content-type': 'application/json' })
      t.equal(ok.body.status, 'SUCCEEDED')
      await hook.waitFor(2)
      await sleep(400)
      t.strictSame(hook.got.map(r => r.json.data.name).sort(), ['C', 'D'], 'only the committed bulk')
      t.equal((await deliveries(s.id)).length, 2)
      // A bulk of several changes, one of a type no subscription wants: only the wanted one.
      const c = ok.body.operations[0].entityId as string
      const etag = (await call('GET', `/v1/authors/${c}`)).headers.get('etag') as string
      hook.got.length = 0
      const mixed = await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [{ action: 'UPDATE', ifMatch: etag, entity: { id: c, name: 'C2', email: 'c@example.com' } }, { action: 'CREATE', entity: { name: 'E', email: 'e@example.com' } }] }, { 'content-type': 'application/json' })
      t.equal(mixed.body.status, 'SUCCEEDED')
      await hook.waitFor(1)
      await sleep(400)
      t.strictSame(hook.got.map(r => `${r.json.type as string} ${r.json.data.name as string}`), ['author.created E'], 'the update is of a type no subscription wants')
      t.equal((await deliveries(s.id)).length, 3)
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('retries with the same webhook-id after a 500 and a timeout; FAILED after the schedule; the retry action', async t => {
      // A service of its own, with a timeout the test waits for, on a store of its own: the
      // other service, on the shared store, would claim these deliveries too.
      const { call, subscribe, settled } = api((await startEvents(t, await db.create(t), {}, { timeoutMillis: TIMEOUT_MILLIS })).base)
      const s = (await subscribe(['author.updated'])).body
      hook.got.length = 0
      let n = 0
      hook.setRespond((_r, res) => {
        n++
        if (n === 1) { res.statusCode = 500; res.end(); return }
        if (n === 2) return // no answer: the attempt times out
        res.statusCode = 204; res.end()
      })
      const author = (await call('POST', '/v1/authors', { name: 'Retried', email: 'r@example.com' })).body
      await call('PATCH', `/v1/authors/${author.id as string}`, { name: 'Retried again' })
      await hook.waitFor(3)
      t.equal(new Set(hook.got.map(r => r.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt')
      const [d] = await settled(s.id, 1)
      t.match(d, { status: 'SUCCEEDED', attemptCount: 3, lastStatusCode: 204 })

      hook.setRespond((_r, res) => { res.statusCode = 503; res.end() })
      hook.got.length = 0
      await call('PATCH', `/v1/authors/${author.id as string}`, { name: 'Failing' })
      const [failed] = await settled(s.id, 1, 'FAILED')
      t.match(failed, { status: 'FAILED', attemptCount: 3, lastStatusCode: 503, nextAttemptDateTime: null })
      t.equal(hook.got.length, 3, 'one attempt and two retries')
      const notFailed = await call('POST', `/v1/webhook-subscriptions/${s.id as string}/deliveries/${d.id as string}/retry`)
      t.equal(notFailed.status, 409)
      t.equal(notFailed.body.context[0].code, 'INVALID_STATE_TRANSITION')
      t.equal((await call('POST', `/v1/webhook-subscriptions/${s.id as string}/deliveries/nope/retry`)).status, 404)
      hook.setRespond((_r, res) => { res.statusCode = 200; res.end('ok') })
      const retried = await call('POST', `/v1/webhook-subscriptions/${s.id as string}/deliveries/${failed.id as string}/retry`)
      t.equal(retried.status, 200)
      t.match(retried.body, { id: failed.id, status: 'PENDING', attemptCount: 3 })
      t.equal((await settled(s.id, 2)).length, 2)
      t.equal(new Set(hook.got.map(r => r.headers['webhook-id'])).size, 1)
      hook.setRespond((_r, res) => { res.statusCode = 204; res.end() })
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('a kept entity no served resource renders (its resource gone): its attempts fail, sending nothing', async t => {
      const s = (await subscribe(['author.updated'])).body
      hook.got.length = 0
      await store.query(`INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, entity, status, next_attempt_at, created_at)
        VALUES ('prod', 'ghost-1', $1, 'ghost.created', ARRAY['x'], 'PENDING', now(), now())`, [s.id])
      const [failed] = await settled(s.id, 1, 'FAILED')
      t.match(failed, { id: 'ghost-1', status: 'FAILED', lastStatusCode: null })
      t.equal(hook.got.length, 0)
      await call('DELETE', `/v1/webhook-subscriptions/${s.id as string}`)
    })

    t.test('scopes: 401 without a token, 403 without webhooks:read / webhooks:write', async t => {
      const anon = await fetch(`${base}/v1/webhook-subscriptions`, { headers: { 'user-agent': 'events-tests/1' } })
      t.equal(anon.status, 401)
      const reader = client(base, ['webhooks:read'])
      t.equal((await reader('GET', '/v1/webhook-subscriptions')).status, 200)
      t.equal((await reader('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] })).status, 403)
      const none = client(base, ['authors:read'])
      t.equal((await none('GET', '/v1/webhook-subscriptions')).status, 403)
    })
  })
}
