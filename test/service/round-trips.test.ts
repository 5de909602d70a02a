import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { BACKGROUND, countStatements } from '../support/count-statements.js'
import { DEV_WEBHOOK_SECRET } from '../../config.js'
import { signStandardWebhook } from 'svc-conventions/webhooks'
import { serviceClient, startService } from './service.js'
import { client as hooksClient } from '../events/helper.js'

// How many statements each kind of request sends to the database (docs/performance.md): one
// round trip, two where the write must read the entity before it can decide (a merge patch
// into an object or with a removal, an action). A change that adds
// one fails here, naming the statements. Each request runs against the reference service over
// HTTP, on each engine. Left out of the count: the instance's own background work
// (`BACKGROUND`).

interface Case {
  name: string
  statements: number
  run: () => Promise<{ status: number }>
  status: number
  /** A write answered 204 asks its statement for the entity's id and ETag alone; one answered with the entity, for all of it. */
  returns?: 'etag' | 'row'
}

/** What the write statement among `sent` answers: its last `SELECT`, after the CTEs, or what the write alone returns. */
function answerOf (sent: readonly string[]): string {
  const write = sent.find(text => /^(WITH|INSERT|UPDATE|DELETE) /.test(text)) ?? ''
  return write.startsWith('WITH ') ? write.slice(write.lastIndexOf('\nSELECT ')) : write.slice(write.lastIndexOf('RETURNING '))
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)
    const { base } = await startService(t, store, { TRUST_PROXY: '127.0.0.1', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
    const { call } = serviceClient(base)
    // A signed scanner delivery (reference contract, Webhooks), as over HTTPS behind a proxy.
    const deliver = async (documentId: string, n: string): Promise<{ status: number }> => {
      const raw = JSON.stringify({ documentId, pageCount: 3, fingerprint: `scan-${n}` })
      const msg = `msg_${n}`
      const ts = Math.floor(Date.now() / 1000)
      return await fetch(`${base}/_webhooks/scanner/document-scanned`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'webhook-id': msg, 'webhook-timestamp': String(ts), 'webhook-signature': signStandardWebhook(DEV_WEBHOOK_SECRET, msg, ts, raw) },
        body: raw
      })
    }
    const sql = countStatements(store)
    t.teardown(() => { sql.restore() })

    const author = await call('POST', '/v1/authors', { name: 'Round Trip', email: 'rt@example.com' })
    t.equal(author.status, 201, 'an author', { body: author.body })
    const authorId = author.body.id as string
    const newDocument = (): Record<string, unknown> => ({ name: `doc ${randomUUID()}`, authorId, kind: 'INVOICE' })
    const created = await call('POST', '/v1/documents', newDocument())
    t.equal(created.status, 201, 'a document', { body: created.body })
    const id = created.body.id as string
    let etag = created.headers.get('etag') as string
    const ifMatch = (): Record<string, string> => ({ 'if-match': etag })
    const keep = (a: { status: number, headers: Headers }): { status: number } => {
      etag = a.headers.get('etag') ?? etag
      return a
    }

    /** A bulk request of `n` new documents, every one of which must succeed. */
    const bulk = async (mode: 'ATOMIC' | 'ISOLATED', n: number, extra: Record<string, string> = {}): Promise<{ status: number, body: any }> => {
      const answer = await call('PATCH', '/v1/documents', { transactionMode: mode, operations: Array.from({ length: n }, () => ({ action: 'CREATE', entity: newDocument() })) }, { 'content-type': 'application/json', ...extra })
      return { status: answer.body?.status === 'SUCCEEDED' ? answer.status : -1, body: answer.body }
    }

    // Webhook subscriptions, with a token that may manage them.
    const hooks = hooksClient(base)
    let subscription = { id: '', etag: '' }
    const keepSubscription = (a: { status: number, headers: Headers, body: any }): { status: number } => {
      subscription = { id: a.body?.id ?? subscription.id, etag: a.headers.get('etag') ?? subscription.etag }
      return a
    }
    const authorOfPut = randomUUID()
    /** Two new authors and updates of two existing ones, in turns: a bulk that must succeed whole. */
    const inTurns = async (mode: 'ATOMIC' | 'ISOLATED'): Promise<{ status: number }> => {
      const operations = [authorId, authorOfPut].flatMap(id => [
        { action: 'CREATE', entity: { name: `Bulk ${randomUUID()}`, email: 'bulk@example.com' } },
        { action: 'UPDATE', entity: { id, name: `Bulk ${randomUUID()}`, email: 'bulk@example.com' } }
      ])
      const answer = await call('PATCH', '/v1/authors', { transactionMode: mode, operations }, { 'content-type': 'application/json' })
      return { status: answer.body?.status === 'SUCCEEDED' ? answer.status : -1 }
    }
    const cases: Case[] = [
      { name: 'POST /v1/documents', statements: 1, status: 201, returns: 'row', run: async () => await call('POST', '/v1/documents', newDocument()) },
      { name: 'POST /v1/documents with Svc-Idempotency-Key', statements: 1, status: 201, run: async () => await call('POST', '/v1/documents', newDocument(), { 'svc-idempotency-key': randomUUID() }) },
      { name: 'GET /v1/documents/{id}', statements: 1, status: 200, run: async () => await call('GET', `/v1/documents/${id}`) },
      { name: 'GET /v1/documents', statements: 1, status: 200, run: async () => await call('GET', '/v1/documents?limit=5') },
      { name: 'GET /v1/documents with totalCount', statements: 1, status: 200, run: async () => await call('GET', '/v1/documents?limit=5&offset=1&totalCount=true') },
      { name: 'PATCH /v1/documents/{id} with If-Match', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('PATCH', `/v1/documents/${id}`, { description: 'changed', tags: ['x'] }, ifMatch())) },
      { name: 'PATCH into an object, with a removal', statements: 2, status: 204, run: async () => keep(await call('PATCH', `/v1/documents/${id}`, { description: null, metadata: { source: { system: 'rt' } } }, ifMatch())) },
      { name: 'PUT /v1/documents/{id} with If-Match', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('PUT', `/v1/documents/${id}`, { name: `doc ${randomUUID()}`, authorId, kind: 'CONTRACT' }, ifMatch())) },
      { name: 'POST /v1/documents/{id}/publish', statements: 2, status: 200, returns: 'row', run: async () => keep(await call('POST', `/v1/documents/${id}/publish`, undefined, ifMatch())) },
      { name: 'PATCH with a stale If-Match (412)', statements: 2, status: 412, run: async () => await call('PATCH', `/v1/documents/${id}`, { description: 'stale' }, { 'if-match': '"stale"' }) },
      { name: 'DELETE /v1/documents/{id} with If-Match', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('DELETE', `/v1/documents/${id}`, undefined, ifMatch())) },
      { name: 'DELETE of a deleted document (204)', statements: 2, status: 204, run: async () => await call('DELETE', `/v1/documents/${id}`, undefined, ifMatch()) },
      { name: 'DELETE with a stale If-Match (412)', statements: 2, status: 412, run: async () => await call('DELETE', `/v1/authors/${authorId}`, undefined, { 'if-match': '"stale"' }) },
      // The date is the row's to compare: read, then written at the ETag read.
      { name: 'PATCH an author with If-Unmodified-Since, no If-Match', statements: 2, status: 204, run: async () => await call('PATCH', `/v1/authors/${authorId}`, { name: `Since ${randomUUID()}` }, { 'if-unmodified-since': new Date(Date.now() + 86_400_000).toUTCString() }) },
      { name: 'PUT creating an author', statements: 1, status: 204, run: async () => await call('PUT', `/v1/authors/${authorOfPut}`, { name: 'Put', email: 'put@example.com' }) },
      { name: 'PUT replacing an author, no If-Match', statements: 1, status: 204, run: async () => await call('PUT', `/v1/authors/${authorOfPut}`, { name: 'Put again', email: 'put@example.com' }) },
      { name: 'PUT creating an author with Svc-Idempotency-Key', statements: 1, status: 204, run: async () => await call('PUT', `/v1/authors/${randomUUID()}`, { name: 'Put', email: 'put@example.com' }, { 'svc-idempotency-key': randomUUID() }) },
      { name: 'scanner webhook delivery', statements: 1, status: 204, returns: 'etag', run: async () => await deliver(id, randomUUID()) },
      { name: 'POST /v1/documents/{id}/restore', statements: 2, status: 200, run: async () => keep(await call('POST', `/v1/documents/${id}/restore`)) },
      { name: 'PUT /v1/documents/{id}/pages', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('PUT', `/v1/documents/${id}/pages`, { results: [{ number: 1, description: 'one' }, { number: 2, description: 'two' }] }, ifMatch())) },
      { name: 'PUT /v1/documents/{id}/content', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('PUT', `/v1/documents/${id}/content`, 'hello', { ...ifMatch(), 'content-type': 'text/plain; charset=UTF-8' })) },
      { name: 'DELETE /v1/documents/{id}/content', statements: 1, status: 204, returns: 'etag', run: async () => keep(await call('DELETE', `/v1/documents/${id}/content`, undefined, ifMatch())) },
      // A bulk of new entities: one statement, its own transaction, with the key's claim in it.
      { name: 'PATCH /v1/documents (bulk), ATOMIC, new documents', statements: 1, status: 200, run: async () => await bulk('ATOMIC', 3) },
      { name: 'PATCH /v1/documents (bulk), ISOLATED, new documents', statements: 1, status: 200, run: async () => await bulk('ISOLATED', 3) },
      { name: 'PATCH /v1/documents (bulk) of new documents with Svc-Idempotency-Key', statements: 1, status: 200, run: async () => await bulk('ATOMIC', 3, { 'svc-idempotency-key': randomUUID() }) },
      // Any other bulk, in one transaction: BEGIN, the locked read, each run of a kind in a
      // savepoint (SAVEPOINT, its statement, RELEASE), COMMIT.
      // On a server, the rows read and one statement; on the embedded store, whose statements are
      // calls in its thread, the transaction costs less than the read ahead.
      { name: 'PATCH /v1/authors (bulk), ATOMIC, two updates', statements: store.kind === 'pg' ? 2 : 6, status: 200, run: async () => await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [authorOfPut, authorId].map(a => ({ action: 'UPDATE', entity: { id: a, name: `Bulk ${randomUUID()}`, email: 'bulk@example.com' } })) }, { 'content-type': 'application/json' }) },
      // Kinds in turns: each kind's operations in one statement (authors have no unique field
      // for their order to matter to); ATOMIC, in one savepoint, not one per run.
      { name: 'PATCH /v1/authors (bulk), ISOLATED, two creations and two updates in turns', statements: 9, status: 200, run: async () => await inTurns('ISOLATED') },
      { name: 'PATCH /v1/authors (bulk), ATOMIC, two creations and two updates in turns', statements: 7, status: 200, run: async () => await inTurns('ATOMIC') },
      { name: 'PATCH /v1/authors (bulk), ISOLATED, a creation and an update', statements: 9, status: 200, run: async () => await call('PATCH', '/v1/authors', { transactionMode: 'ISOLATED', operations: [{ action: 'CREATE', entity: { name: `Bulk ${randomUUID()}`, email: 'bulk@example.com' } }, { action: 'UPDATE', entity: { id: authorId, name: `Bulk ${randomUUID()}`, email: 'bulk@example.com' } }] }, { 'content-type': 'application/json' }) },
      { name: 'GET /v1/authors/{id}/documents', statements: 1, status: 200, run: async () => await call('GET', `/v1/authors/${authorId}/documents`) },
      // An empty page of a child collection: whether its parent exists decides between 200 and
      // 404, answered by the page's own statement.
      { name: 'GET /v1/authors/{id}/documents, none', statements: 1, status: 404, run: async () => await call('GET', `/v1/authors/${randomUUID()}/documents`) },
      { name: 'GET /v1/authors/{id}/documents, an author with none', statements: 1, status: 200, run: async () => await call('GET', `/v1/authors/${authorOfPut}/documents`) },
      { name: 'GET /v1/authors/{id}/documents with totalCount, none', statements: 1, status: 404, run: async () => await call('GET', `/v1/authors/${randomUUID()}/documents?offset=0&totalCount=true`) },
      { name: 'POST /v1/webhook-subscriptions', statements: 1, status: 201, run: async () => keepSubscription(await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })) },
      { name: 'PATCH /v1/webhook-subscriptions/{id} with If-Match', statements: 1, status: 204, run: async () => keepSubscription(await hooks('PATCH', `/v1/webhook-subscriptions/${subscription.id}`, { events: ['author.updated'] }, { 'if-match': subscription.etag })) },
      { name: 'PATCH of a subscription\'s url alone with If-Match', statements: 1, status: 204, run: async () => keepSubscription(await hooks('PATCH', `/v1/webhook-subscriptions/${subscription.id}`, { url: 'http://127.0.0.1:9/elsewhere' }, { 'if-match': subscription.etag })) },
      { name: 'PATCH of a subscription with a stale If-Match (412)', statements: 2, status: 412, run: async () => await hooks('PATCH', `/v1/webhook-subscriptions/${subscription.id}`, { active: false }, { 'if-match': '"stale"' }) },
      // With Svc-Idempotency-Key: the key's claim in the write's own statement.
      { name: 'POST /v1/webhook-subscriptions with Svc-Idempotency-Key', statements: 1, status: 201, run: async () => await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] }, { 'svc-idempotency-key': randomUUID() }) },
      { name: 'PATCH /v1/webhook-subscriptions/{id} with If-Match and Svc-Idempotency-Key', statements: 1, status: 204, run: async () => keepSubscription(await hooks('PATCH', `/v1/webhook-subscriptions/${subscription.id}`, { events: ['author.created'] }, { 'if-match': subscription.etag, 'svc-idempotency-key': randomUUID() })) },
      { name: 'GET /v1/webhook-subscriptions/{id}/deliveries, none', statements: 1, status: 200, run: async () => await hooks('GET', `/v1/webhook-subscriptions/${subscription.id}/deliveries`) },
      { name: 'GET /v1/webhook-subscriptions/{id}/deliveries of none', statements: 1, status: 404, run: async () => await hooks('GET', `/v1/webhook-subscriptions/${randomUUID()}/deliveries`) },
      { name: 'DELETE /v1/webhook-subscriptions/{id} with If-Match and Svc-Idempotency-Key', statements: 1, status: 204, run: async () => await hooks('DELETE', `/v1/webhook-subscriptions/${subscription.id}`, undefined, { 'if-match': subscription.etag, 'svc-idempotency-key': randomUUID() }) },
      { name: 'POST /v1/webhook-subscriptions, then DELETE with If-Match', statements: 1, status: 204, run: async () => { keepSubscription(await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })); sql.reset(); return await hooks('DELETE', `/v1/webhook-subscriptions/${subscription.id}`, undefined, { 'if-match': subscription.etag }) } }
    ]
    for (const c of cases) {
      sql.reset()
      const answer = await c.run() as { status: number, body?: unknown }
      const sent = sql.texts().filter(text => !BACKGROUND.test(text))
      t.equal(answer.status, c.status, `${c.name}: ${c.status}`, { body: answer.body })
      t.equal(sent.length, c.statements, `${c.name}: ${c.statements} statement(s)`, { sent })
      if (c.returns === undefined) continue
      const answered = answerOf(sent)
      t.match(answered, /[wt]\."etag"/, `${c.name}: answers the ETag`)
      if (c.returns === 'etag') t.notMatch(answered, /[wt]\."name"/, `${c.name}: and no field`, { answered })
      else t.match(answered, /[wt]\."name"/, `${c.name}: and every field`, { answered })
    }
  })
}
