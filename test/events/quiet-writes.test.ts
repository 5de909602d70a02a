import t from 'tap'
import { randomUUID } from 'node:crypto'
import { databases } from '../support/databases.js'
import { BACKGROUND, countStatements } from '../support/count-statements.js'
import { client, startEvents } from './helper.js'

// A write whose event no subscription wants carries a check in place of the outbox's insert;
// one that finds a subscription wanting it writes nothing and is made again with its outbox.
// Instances over one database, each learning from its own writes: a subscription made on one
// is found by the next write of another, and no event is lost.

const QUIET = '(SELECT count(*) FROM "event_subscriptions"'
const OUTBOX = 'INSERT INTO "event_deliveries"'

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // No delivery worker: the deliveries stay in the table, where they are counted.
    const instance = async (): Promise<ReturnType<typeof client>> => client((await startEvents(t, store, {}, { worker: false })).base)
    const [a, b] = [await instance(), await instance()]
    const sql = countStatements(store)
    t.teardown(() => { sql.restore() })
    /**
     * The statements of one request, without the instances' own background work and the
     * notification announcing new deliveries, which the writes of a busy instance share.
     */
    const sent = async <T>(fn: () => Promise<T>): Promise<{ answer: T, texts: string[] }> => {
      sql.reset()
      const answer = await fn()
      return { answer, texts: sql.texts().filter(text => !BACKGROUND.test(text) && !text.startsWith('SELECT pg_notify(')) }
    }
    const author = await a('POST', '/v1/authors', { name: 'Quiet', email: 'quiet@example.com' })
    t.equal(author.status, 201, author.text)
    const newDocument = (): Record<string, unknown> => ({ name: `quiet ${randomUUID()}`, authorId: author.body.id, kind: 'INVOICE' })
    const deliveriesOf = async (id: string): Promise<string[]> =>
      (await store.query<{ event_type: string }>('SELECT event_type FROM event_deliveries WHERE entity[1] = $1 ORDER BY created_at', [id])).rows.map(r => r.event_type)

    await t.test('no subscription: one statement, the check in place of the outbox', async t => {
      const { answer, texts } = await sent(async () => await a('POST', '/v1/documents', newDocument()))
      t.equal(answer.status, 201, answer.text)
      t.equal(texts.length, 1, 'one statement', { texts })
      t.match(texts[0], QUIET)
      t.notMatch(texts[0], OUTBOX)
      t.strictSame(await deliveriesOf(answer.body.id), [])
    })

    // A statement of several parts (here the key's claim, then the insert) reads the check once
    // and guards each part with what it read: the key is not claimed for a write a subscription stops.
    await t.test('no subscription, with Svc-Idempotency-Key: one statement, the check read once for the claim and the write', async t => {
      const { answer, texts } = await sent(async () => await a('POST', '/v1/documents', newDocument(), { 'svc-idempotency-key': randomUUID() }))
      t.equal(answer.status, 201, answer.text)
      t.equal(texts.length, 1, 'one statement', { texts })
      t.equal(texts[0]?.split(QUIET).length, 2, 'the check once', { text: texts[0] })
      t.match(texts[0], /^WITH q AS \(SELECT \(SELECT count\(\*\) FROM "event_subscriptions" .*\) = 0 AS quiet\),\s*k AS \(INSERT INTO "idempotency_keys" .*WHERE \(SELECT quiet FROM q\)/s)
      t.match(texts[0], /INSERT INTO "documents" .*WHERE \(SELECT quiet FROM q\) AND EXISTS \(SELECT 1 FROM k\)/s)
      t.notMatch(texts[0], OUTBOX)
    })

    /** A bulk request of `n` new documents (JSON, as bulk bodies are), each operation's status, and its statements. */
    const bulkCreate = async (c: typeof a, n: number, mode: 'ATOMIC' | 'ISOLATED', extra: Record<string, string> = {}): Promise<{ answer: Awaited<ReturnType<typeof a>>, ids: string[], texts: string[] }> => {
      const { answer, texts } = await sent(async () => await c('PATCH', '/v1/documents', { transactionMode: mode, operations: Array.from({ length: n }, () => ({ action: 'CREATE', entity: newDocument() })) }, { 'content-type': 'application/json', ...extra }))
      const ops = (answer.body?.operations ?? []) as Array<{ entityId: string, result: { status: string } }>
      t.strictSame(ops.map(o => o.result.status), Array.from({ length: n }, () => 'SUCCEEDED'), answer.text)
      return { answer, ids: ops.map(o => o.entityId), texts }
    }

    /**
     * A bulk request changing two documents made for it (`ATOMIC`), and its statements: in a
     * transaction, after the creation of a third document that makes it more than one run of
     * operations of a kind; `alone`: those two only, which go as one statement.
     */
    const bulkChange = async (c: typeof a, action: 'UPDATE' | 'DELETE', alone = false): Promise<{ answer: Awaited<ReturnType<typeof a>>, ids: string[], texts: string[] }> => {
      const docs = [await a('POST', '/v1/documents', newDocument()), await a('POST', '/v1/documents', newDocument())]
      const changes = docs.map(d => ({ action, ifMatch: d.headers.get('etag'), entity: action === 'DELETE' ? { id: d.body.id } : { id: d.body.id, ...newDocument() } }))
      const operations = alone ? changes : [{ action: 'CREATE', entity: newDocument() }, ...changes]
      return { ...await sent(async () => await c('PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations }, { 'content-type': 'application/json' })), ids: docs.map(d => d.body.id as string) }
    }

    await t.test('a bulk of new entities, no subscription: one statement, no transaction, the check in place of the outbox', async t => {
      for (const mode of ['ATOMIC', 'ISOLATED'] as const) {
        const { answer, ids, texts } = await bulkCreate(a, 3, mode)
        t.equal(answer.status, 200, answer.text)
        t.equal(texts.length, 1, `${mode}: one statement`, { texts })
        t.match(texts[0], QUIET)
        t.notMatch(texts[0], OUTBOX)
        for (const id of ids) t.strictSame(await deliveriesOf(id), [])
      }
    })

    // On a server; the embedded store sends such a bulk in a transaction (the cases after).
    const server = { skip: store.kind === 'pg' ? false : 'a bulk of one kind goes in a transaction on the embedded store' }

    await t.test('a bulk of updates of one kind, no subscription: their rows read, then one statement, no transaction, the check in place of the outbox', server, async t => {
      const { answer, ids, texts } = await bulkChange(a, 'UPDATE', true)
      t.equal(answer.body?.status, 'SUCCEEDED', answer.text)
      t.equal(texts.length, 2, 'two statements', { texts })
      t.match(texts[0], /^SELECT .* FROM "documents" WHERE ctx = \$1 AND id = ANY\(\$2::text\[\]\)$/s, 'the rows read, not locked')
      t.match(texts[1], /^WITH q AS \(SELECT \(SELECT count\(\*\) FROM "event_subscriptions" .*\),\ng AS \(SELECT t\.id FROM "documents" AS t .* ORDER BY t\.id FOR UPDATE OF t\)/s, 'the write locks them in the order of their ids, the check read once')
      t.match(texts[1], QUIET)
      t.notMatch(texts[1], OUTBOX)
      for (const id of ids) t.strictSame(await deliveriesOf(id), [])
    })

    const sub = await b('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['document.created', 'document.deleted'], description: null })
    t.equal(sub.status, 201, sub.text)

    await t.test('a subscription made on another instance: the next write finds it, writes nothing, and is made again with its outbox', async t => {
      const first = await sent(async () => await a('POST', '/v1/documents', newDocument()))
      t.equal(first.answer.status, 201, first.answer.text)
      t.equal(first.texts.length, 2, 'the quiet write, then the write with its outbox', { texts: first.texts })
      t.match(first.texts[0], QUIET)
      t.match(first.texts[1], OUTBOX)
      t.strictSame(await deliveriesOf(first.answer.body.id), ['document.created'], 'its event is in the outbox, once')
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::integer AS n FROM documents WHERE id = $1', [first.answer.body.id])
      t.equal(rows[0]?.n, 1, 'the document written once')

      const next = await sent(async () => await a('POST', '/v1/documents', newDocument()))
      t.equal(next.texts.length, 1, 'the instance knows now: one statement, with its outbox', { texts: next.texts })
      t.match(next.texts[0], OUTBOX)
      t.strictSame(await deliveriesOf(next.answer.body.id), ['document.created'])
    })

    await t.test('an event the subscription does not want stays quiet', async t => {
      const doc = await a('POST', '/v1/documents', newDocument())
      const patched = await sent(async () => await a('PATCH', `/v1/documents/${doc.body.id as string}`, { description: 'quiet' }, { 'if-match': doc.headers.get('etag') as string }))
      t.equal(patched.answer.status, 204, patched.answer.text)
      t.equal(patched.texts.length, 1, { texts: patched.texts })
      t.match(patched.texts[0], QUIET)
      t.strictSame(await deliveriesOf(doc.body.id), ['document.created'], 'no document.updated')
    })

    await t.test('a guarded write that finds the subscription: its ETag and deletion checked again with the outbox, one event', async t => {
      const doc = await a('POST', '/v1/documents', newDocument())
      const etag = doc.headers.get('etag') as string
      // Another instance, which has not written a deletion yet.
      const c = await instance()
      const stale = await sent(async () => await c('DELETE', `/v1/documents/${doc.body.id as string}`, undefined, { 'if-match': '"stale"' }))
      t.equal(stale.answer.status, 412, 'a stale ETag is refused, quiet or not')
      // Written alone, it missed: what it found says a subscription wants the event, so the
      // refusal is decided by the write made again with its outbox, which misses too.
      t.equal(stale.texts.length, 3, 'the quiet write, what it found, the write with its outbox', { texts: stale.texts })
      t.match(stale.texts[0], QUIET)
      t.match(stale.texts[1], /^SELECT t\.etag AS "svc:etag", .*"svc:wanted"/s)
      t.match(stale.texts[2], OUTBOX)
      const deleted = await sent(async () => await c('DELETE', `/v1/documents/${doc.body.id as string}`, undefined, { 'if-match': etag }))
      t.equal(deleted.answer.status, 204, deleted.answer.text)
      t.match(deleted.texts.at(-1), OUTBOX)
      t.strictSame(await deliveriesOf(doc.body.id), ['document.created', 'document.deleted'])
      // What it knows now holds after a write with the outbox that wrote nothing.
      const other = await a('POST', '/v1/documents', newDocument())
      const refused = await sent(async () => await c('DELETE', `/v1/documents/${other.body.id as string}`, undefined, { 'if-match': '"stale"' }))
      t.equal(refused.answer.status, 412)
      t.equal(refused.texts.length, 1, { texts: refused.texts })
      t.match(refused.texts[0], OUTBOX)
      const next = await sent(async () => await c('DELETE', `/v1/documents/${other.body.id as string}`, undefined, { 'if-match': other.headers.get('etag') as string }))
      t.equal(next.answer.status, 204)
      t.equal(next.texts.length, 1, { texts: next.texts })
      t.match(next.texts[0], OUTBOX)
      t.strictSame(await deliveriesOf(other.body.id), ['document.created', 'document.deleted'])
    })

    await t.test('with an idempotency key: the key is taken by the write that applies, and its repeat refused naming it', async t => {
      const c = await instance()
      const key = randomUUID()
      const body = newDocument()
      const first = await sent(async () => await c('POST', '/v1/documents', body, { 'svc-idempotency-key': key }))
      t.equal(first.answer.status, 201, first.answer.text)
      t.equal(first.texts.length, 2, 'the quiet write (its key untaken), then the write with its outbox', { texts: first.texts })
      // A POST is not idempotent: its repeat is a conflict naming what the first created.
      const again = await c('POST', '/v1/documents', body, { 'svc-idempotency-key': key })
      t.equal(again.status, 409, again.text)
      t.equal(again.body.instance, `/v1/documents/${first.answer.body.id as string}`)
      t.strictSame(await deliveriesOf(first.answer.body.id), ['document.created'], 'one event')
    })

    await t.test('a bulk of new entities that finds the subscription: nothing written, made again with its outbox, one event each, its key taken once', async t => {
      const c = await instance()
      const key = randomUUID()
      const first = await bulkCreate(c, 3, 'ATOMIC', { 'svc-idempotency-key': key })
      t.equal(first.answer.status, 200, first.answer.text)
      t.equal(first.texts.length, 2, 'the quiet write (its key untaken), then the write with its outbox', { texts: first.texts })
      t.match(first.texts[0], QUIET)
      t.match(first.texts[1], OUTBOX)
      for (const id of first.ids) t.strictSame(await deliveriesOf(id), ['document.created'], 'its event, once')
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::integer AS n FROM documents WHERE id = ANY($1::text[])', [first.ids])
      t.equal(rows[0]?.n, 3, 'each document written once')
      // A bulk PATCH is not idempotent: its key is never run twice.
      const again = await c('PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: newDocument() }] }, { 'content-type': 'application/json', 'svc-idempotency-key': key })
      t.equal(again.status, 409, again.text)
      const next = await bulkCreate(c, 2, 'ISOLATED')
      t.equal(next.texts.length, 1, 'the instance knows now: one statement, with its outbox', { texts: next.texts })
      t.match(next.texts[0], OUTBOX)
      for (const id of next.ids) t.strictSame(await deliveriesOf(id), ['document.created'])
    })

    await t.test('a bulk in a transaction: its statement carries the check too, and one that finds the subscription is made again with its outbox there', async t => {
      const c = await instance()
      const bulk = async (action: 'UPDATE' | 'DELETE'): ReturnType<typeof bulkChange> => await bulkChange(c, action)
      // document.updated: no subscription wants it.
      const updated = await bulk('UPDATE')
      t.equal(updated.answer.body?.status, 'SUCCEEDED', updated.answer.text)
      const updates = updated.texts.filter(text => /^(WITH w AS \()?UPDATE "documents"/.test(text))
      t.equal(updates.length, 1, 'one statement for both', { texts: updated.texts })
      t.match(updates[0], QUIET)
      t.notMatch(updates[0], OUTBOX)
      // document.deleted: the subscription wants it, which this instance has not met yet.
      const deleted = await bulk('DELETE')
      t.equal(deleted.answer.body?.status, 'SUCCEEDED', deleted.answer.text)
      const marks = deleted.texts.filter(text => /UPDATE "documents" AS t SET etag = x\.etag, "deletedDateTime"/.test(text))
      t.equal(marks.length, 2, 'the quiet statement, then the one with its outbox', { texts: deleted.texts })
      t.match(marks[0], QUIET)
      t.match(marks[1], OUTBOX)
      t.match(deleted.texts, ['BEGIN'], 'in one transaction')
      t.equal(deleted.texts.at(-1), 'COMMIT')
      for (const id of deleted.ids) t.strictSame(await deliveriesOf(id), ['document.created', 'document.deleted'], 'its event, once')
    })

    await t.test('a bulk of deletions of one kind that finds the subscription: the quiet statement wrote nothing, and the one with its outbox follows', server, async t => {
      const c = await instance()
      const deleted = await bulkChange(c, 'DELETE', true)
      t.equal(deleted.answer.body?.status, 'SUCCEEDED', deleted.answer.text)
      t.notOk(deleted.texts.includes('BEGIN'), 'no transaction')
      const marks = deleted.texts.filter(text => /^WITH (q AS .*)?g AS .*UPDATE "documents" AS t SET etag = x\.etag, "deletedDateTime"/s.test(text))
      t.equal(marks.length, 2, 'the quiet statement, then the one with its outbox', { texts: deleted.texts })
      t.match(marks[0], QUIET)
      t.match(marks[1], OUTBOX)
      for (const id of deleted.ids) t.strictSame(await deliveriesOf(id), ['document.created', 'document.deleted'], 'its event, once')
    })

    await t.test('a PUT without If-Match creates or replaces in one statement (an upsert), its event the one it made', async t => {
      const c = await instance()
      const id = randomUUID()
      const put = async (on: typeof c, authorId: string, name: string): Promise<{ answer: Awaited<ReturnType<typeof c>>, texts: string[] }> =>
        await sent(async () => await on('PUT', `/v1/authors/${authorId}`, { name, email: 'upsert@example.com' }))
      const created = await put(c, id, 'Made')
      t.equal(created.answer.status, 204, created.answer.text)
      t.equal(created.texts.length, 1, 'quiet: one statement', { texts: created.texts })
      t.match(created.texts[0], /ON CONFLICT \(ctx, id\) DO UPDATE/)
      t.match(created.texts[0], QUIET)
      const first = (await c('GET', `/v1/authors/${id}`)).body
      t.match(first, { id, name: 'Made', createdBy: 'user-1', etag: created.answer.headers.get('etag') })
      const replaced = await put(c, id, 'Replaced')
      t.equal(replaced.answer.status, 204, replaced.answer.text)
      t.equal(replaced.texts.length, 1, { texts: replaced.texts })
      const second = (await c('GET', `/v1/authors/${id}`)).body
      t.match(second, { name: 'Replaced', createdDateTime: first.createdDateTime, etag: replaced.answer.headers.get('etag') })
      t.not(second.etag, first.etag)
      t.strictSame(await deliveriesOf(id), [])

      // A subscription to replacements only, made on another instance.
      const updates = await b('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.updated'], description: null })
      t.equal(updates.status, 201, updates.text)
      const found = await put(c, id, 'Found')
      t.equal(found.answer.status, 204, found.answer.text)
      t.equal(found.texts.length, 2, 'the quiet upsert, then the upsert with its outbox', { texts: found.texts })
      t.match(found.texts[1], OUTBOX)
      t.strictSame(await deliveriesOf(id), ['author.updated'])
      const other = randomUUID()
      const made = await put(c, other, 'Other')
      t.equal(made.answer.status, 204, made.answer.text)
      t.equal(made.texts.length, 1, 'either event may be wanted now: the outbox, one statement', { texts: made.texts })
      t.match(made.texts[0], OUTBOX)
      t.strictSame(await deliveriesOf(other), [], 'no subscription wants its creation')

      const creations = await b('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'], description: null })
      t.equal(creations.status, 201, creations.text)
      const third = randomUUID()
      t.equal((await put(c, third, 'Third')).answer.status, 204)
      t.equal((await put(c, third, 'Third, again')).answer.status, 204)
      t.strictSame(await deliveriesOf(third), ['author.created', 'author.updated'], 'each its own event, once')
      for (const s of [updates, creations]) t.equal((await b('DELETE', `/v1/webhook-subscriptions/${s.body.id as string}`, undefined, { 'if-match': s.body.etag })).status, 204)
    })

    await t.test('the subscription switched off: the next write carries its outbox and finds none; the one after is quiet', async t => {
      const off = await b('PATCH', `/v1/webhook-subscriptions/${sub.body.id as string}`, { active: false }, { 'if-match': sub.body.etag })
      t.equal(off.status, 204, off.text)
      const first = await sent(async () => await a('POST', '/v1/documents', newDocument()))
      t.equal(first.texts.length, 1, { texts: first.texts })
      t.match(first.texts[0], OUTBOX)
      t.strictSame(await deliveriesOf(first.answer.body.id), [])
      const next = await sent(async () => await a('POST', '/v1/documents', newDocument()))
      t.equal(next.texts.length, 1, { texts: next.texts })
      t.match(next.texts[0], QUIET)
    })

    await t.test('bulk requests learn as item writes do: one with its outbox that finds no subscription makes the next quiet', async t => {
      const d = await instance()
      const wanting = await b('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/bulk', events: ['document.created', 'document.updated'], description: null })
      t.equal(wanting.status, 201, wanting.text)
      const updates = (texts: string[]): string[] => texts.filter(text => /^(WITH w AS \()?UPDATE "documents"/.test(text))
      // Met once each: from then on d's bulks carry the outbox.
      t.equal((await bulkCreate(d, 2, 'ATOMIC')).texts.length, 2, 'the quiet insert, then the one with its outbox')
      t.equal(updates((await bulkChange(d, 'UPDATE')).texts).length, 2, 'the quiet update, then the one with its outbox')
      t.equal((await b('PATCH', `/v1/webhook-subscriptions/${wanting.body.id as string}`, { active: false }, { 'if-match': wanting.body.etag })).status, 204)
      for (const [name, run] of [['a bulk of new entities', async () => (await bulkCreate(d, 2, 'ISOLATED')).texts], ['a bulk in a transaction', async () => updates((await bulkChange(d, 'UPDATE')).texts)]] as const) {
        const first = await run()
        t.equal(first.length, 1, `${name}: one statement`, { texts: first })
        t.match(first[0], OUTBOX, `${name}: with its outbox, which finds none`)
        const then = await run()
        t.equal(then.length, 1, { texts: then })
        t.match(then[0], QUIET, `${name}: the next is quiet`)
        t.notMatch(then[0], OUTBOX)
      }
    })
  })
}
