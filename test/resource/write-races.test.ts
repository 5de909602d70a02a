import t from 'tap'
import { randomUUID } from 'node:crypto'
import { Unavailable } from '../../store/errors.js'
import type { QueryOptions, QueryResult } from '../../store/types.js'
import { pglite } from '../support/databases.js'
import { build, headers } from './helper.js'

// An item write reads the entity without a lock, then writes only while it is as read
// (Writer.one). What another request does in between is staged here, deterministically: a
// hook runs right after the read returns. The write then misses, and the operation is decided
// again with the row locked, in a transaction of its own: never lost, never applied twice.

type Json = Record<string, any>

t.test('a change between the read and the write', async t => {
  const store = await pglite.create(t)
  const real = { query: store.query }
  let afterRead: (() => Promise<void>) | null = null
  let emptyHolder = false
  let missBlind = false
  store.query = async <R extends object = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> => {
    // Its key's holder not found once: as if it expired and another request took it meanwhile.
    if (emptyHolder && /FROM "idempotency_keys" WHERE .* expires_at >/s.test(sql)) {
      emptyHolder = false
      return { rows: [] as R[], rowCount: 0 }
    }
    // A write decided on preconditions alone that misses though they hold: as when another
    // change commits between its statement's snapshot and its update. Its If-Match made stale.
    if (missBlind && /^UPDATE "(authors|documents)" AS t .*t\.etag = ANY\(/s.test(sql) && params !== undefined) {
      missBlind = false
      params = params.map((p) => Array.isArray(p) ? ['"elsewhere"'] : p)
    }
    const result = await real.query<R>(sql, params, options)
    if (afterRead !== null && /^SELECT .* FROM "authors" WHERE ctx = \$1 AND id = ANY/s.test(sql)) {
      const hook = afterRead
      afterRead = null
      await hook()
    }
    return result
  }
  // The locked transaction's database gone, once.
  let failTransaction = false
  const transaction = store.transaction
  store.transaction = async (fn, options) => {
    if (failTransaction) {
      failTransaction = false
      throw new Unavailable()
    }
    return await transaction(fn, options)
  }
  const app = await build(t, store)
  const call = async (method: string, url: string, payload?: unknown, extra: Record<string, string> = {}): Promise<{ status: number, body: Json | null, etag: string | undefined }> => {
    const res = await app.inject({ method, url, headers: headers({ 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', ...extra }), ...(payload === undefined ? {} : { payload: payload as object }) })
    return { status: res.statusCode, body: res.body === '' ? null : JSON.parse(res.body), etag: res.headers.etag as string | undefined }
  }
  const author = async (): Promise<Json> => (await call('POST', '/v1/authors', { name: `A ${randomUUID()}`, email: 'a@example.com' })).body as Json
  // Another instance's change, straight to the table.
  const changeEmail = (id: string, email: string) => async (): Promise<void> => {
    await real.query('UPDATE "authors" SET email = $2, etag = $3 WHERE id = $1', [id, email, `"${randomUUID()}"`])
  }

  // A removal (`active: null`, filled again with its default) is merged onto the entity as
  // stored, so these patches read it first; a patch of whole fields alone writes without a read.
  const REMOVAL = { active: null }

  t.test('a merge patch of whole fields is one statement: what another change set meanwhile stays', async t => {
    const a = await author()
    await changeEmail(a.id, 'blind@example.com')()
    const patched = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Blind' })
    t.equal(patched.status, 204)
    t.match((await call('GET', `/v1/authors/${a.id as string}`)).body, { name: 'Blind', email: 'blind@example.com' })
    t.equal(afterRead, null)
  })

  t.test('a merge patch of whole fields that misses though its preconditions hold is decided on the entity read whole', async t => {
    const a = await author()
    missBlind = true
    const patched = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Missed' }, { 'if-match': a.etag })
    t.equal(missBlind, false, 'the staged miss was used')
    t.equal(patched.status, 204)
    const now = (await call('GET', `/v1/authors/${a.id as string}`)).body as Json
    t.match(now, { name: 'Missed', email: 'a@example.com' })
    t.equal(now.etag, patched.etag)
  })

  t.test('a sub-collection PUT that misses though its If-Match holds is decided on the entity as found', async t => {
    const a = await author()
    const doc = (await call('POST', '/v1/documents', { name: `D ${randomUUID()}`, authorId: a.id, kind: 'INVOICE' })).body as Json
    missBlind = true
    const pages = [{ number: 1, description: 'one' }, { number: 2, description: 'two' }]
    const put = await call('PUT', `/v1/documents/${doc.id as string}/pages`, { results: pages }, { 'if-match': doc.etag })
    t.equal(missBlind, false, 'the staged miss was used')
    t.equal(put.status, 204)
    const now = (await call('GET', `/v1/documents/${doc.id as string}`)).body as Json
    t.match(now.pages, pages)
    t.equal(now.etag, put.etag)
  })

  t.test('a keyed patch decided on the entity as read: refused, the key stays free; the key of a change, answered as that change', async t => {
    const a = await author()
    const key = randomUUID()
    const refused = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Stale', ...REMOVAL }, { 'svc-idempotency-key': key, 'if-match': '"stale"' })
    t.equal(refused.status, 412)
    const done = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Fresh', ...REMOVAL }, { 'svc-idempotency-key': key, 'if-match': a.etag })
    t.equal(done.status, 204, 'the refusal did not keep the key')
    const again = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Fresh', ...REMOVAL }, { 'svc-idempotency-key': key, 'if-match': '"stale"' })
    t.equal(again.status, 204, 'a retry with the key is answered as the change, whatever its If-Match now')
    t.equal(((await call('GET', `/v1/authors/${a.id as string}`)).body as Json).etag, done.etag, 'and not applied again')
  })

  t.test('a merge patch is merged again onto the entity as the other change left it', async t => {
    const a = await author()
    afterRead = changeEmail(a.id, 'other@example.com')
    const patched = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Patched', ...REMOVAL })
    t.equal(patched.status, 204)
    const now = (await call('GET', `/v1/authors/${a.id as string}`)).body as Json
    t.match(now, { name: 'Patched', email: 'other@example.com' }, 'both changes kept')
    t.equal(now.etag, patched.etag, 'the ETag answered is the one stored')
  })

  t.test('with an idempotency key: the key is taken once, with the change', async t => {
    const a = await author()
    const key = randomUUID()
    afterRead = changeEmail(a.id, 'keyed@example.com')
    const first = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Keyed', ...REMOVAL }, { 'svc-idempotency-key': key })
    t.equal(first.status, 204)
    const stored = (await call('GET', `/v1/authors/${a.id as string}`)).body as Json
    t.match(stored, { name: 'Keyed', email: 'keyed@example.com' })
    const again = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Keyed', ...REMOVAL }, { 'svc-idempotency-key': key })
    t.equal(again.status, 204, 'a retry is answered as the first')
    t.equal(((await call('GET', `/v1/authors/${a.id as string}`)).body as Json).etag, stored.etag, 'and not applied again')
  })

  t.test('the entity deleted meanwhile: 404, and the key left free', async t => {
    const a = await author()
    const key = randomUUID()
    afterRead = async () => { await real.query('DELETE FROM "authors" WHERE id = $1', [a.id]) }
    const patched = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Gone', ...REMOVAL }, { 'svc-idempotency-key': key })
    t.equal(patched.status, 404)
    const b = await author()
    t.equal((await call('PATCH', `/v1/authors/${b.id as string}`, { name: 'Free' }, { 'svc-idempotency-key': key })).status, 204, 'the key was not kept')
  })

  t.test('the database gone when it is decided again: 503, nothing changed', async t => {
    const a = await author()
    afterRead = changeEmail(a.id, 'third@example.com')
    failTransaction = true
    const patched = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Lost', ...REMOVAL })
    t.equal(patched.status, 503)
    t.match((await call('GET', `/v1/authors/${a.id as string}`)).body, { name: a.name, email: 'third@example.com' })
  })

  t.test('a key taken by another request just before the write: answered as that one', async t => {
    const a = await author()
    const key = randomUUID()
    t.equal((await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Once' }, { 'svc-idempotency-key': key })).status, 204)
    const after = (await call('GET', `/v1/authors/${a.id as string}`)).body as Json
    emptyHolder = true
    const again = await call('PATCH', `/v1/authors/${a.id as string}`, { name: 'Once' }, { 'svc-idempotency-key': key, 'if-match': after.etag })
    t.equal(again.status, 204)
    t.equal(((await call('GET', `/v1/authors/${a.id as string}`)).body as Json).etag, after.etag, 'nothing applied')
    t.equal(emptyHolder, false, 'the staged miss was used')
  })
})
