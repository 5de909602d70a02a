import t from 'tap'
import { randomUUID } from 'node:crypto'
import { createStore } from '../../index.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { quoteIdent } from '../../store/quote.js'
import { client } from '../events/helper.js'
import { serviceClient, startService } from '../service/service.js'
import { databases } from '../support/databases.js'
import { lastChanged } from '../../plugins/resource/write/decide.js'

// If-Unmodified-Since on the reference service (RFC 9110 §13.1.4; conventions: Common errors,
// 412 and 428): compared with the entity's modifiedDateTime to the second, only where
// If-Match is not sent, on every write path and on an item's GET.

t.test('lastChanged: the later of modifiedDateTime and deletedDateTime', async t => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['never deleted', { modifiedDateTime: '2026-01-01T00:00:00.000Z', deletedDateTime: null }, '2026-01-01T00:00:00.000Z'],
    ['no soft delete', { modifiedDateTime: '2026-01-01T00:00:00.000Z' }, '2026-01-01T00:00:00.000Z'],
    ['deleted later', { modifiedDateTime: '2026-01-01T00:00:00.000Z', deletedDateTime: '2026-01-01T00:00:01.000Z' }, '2026-01-01T00:00:01.000Z'],
    ['changed after its delete (a server-side change of a deleted one)', { modifiedDateTime: '2026-01-01T00:00:02.000Z', deletedDateTime: '2026-01-01T00:00:01.000Z' }, '2026-01-01T00:00:02.000Z']
  ]
  for (const [name, row, expected] of cases) t.equal(lastChanged(row), expected, name)
})

/** The HTTP date of an entity's modifiedDateTime moved by `seconds`. */
const dateOf = (modified: string, seconds = 0): string => new Date(Date.parse(modified) + seconds * 1000).toUTCString()

t.test('If-Unmodified-Since: the writes of an author go on while it has not changed since the date, to the second', async t => {
  const { base } = await startService(t)
  const { call } = serviceClient(base)
  const created = await call('POST', '/v1/authors', { name: 'Ada', email: 'ada@example.com' })
  t.equal(created.status, 201)
  const path = `/v1/authors/${created.body.id as string}`
  let author = created.body

  const patched = await call('PATCH', path, { name: 'Ada L.' }, { 'if-unmodified-since': dateOf(author.modifiedDateTime) })
  t.equal(patched.status, 204, 'PATCH with the date of its last change (that very second): it has not changed since')
  author = (await call('GET', path)).body
  t.equal(author.name, 'Ada L.', 'the PATCH was applied')

  const stale = await call('PATCH', path, { name: 'Not applied' }, { 'if-unmodified-since': dateOf(author.modifiedDateTime, -1) })
  t.equal(stale.status, 412, 'PATCH with the second before its last change: 412')
  t.match(stale.body, { title: 'Precondition Failed', instance: path, detail: `${path} has changed since the date in If-Unmodified-Since; GET it again, reapply your change and retry.` })
  t.equal((await call('GET', path)).body.name, 'Ada L.', 'nothing written')

  const etag = (await call('GET', path)).headers.get('etag') as string
  const staleEtag = await call('PATCH', path, { name: 'Not applied' }, { 'if-match': '"stale"', 'if-unmodified-since': dateOf(author.modifiedDateTime, 60) })
  t.equal(staleEtag.status, 412, 'If-Match is evaluated first')
  t.match(staleEtag.body.detail, /^If-Match does not match/, 'and named')
  const withIfMatch = await call('PATCH', path, { name: 'Ada King' }, { 'if-match': etag, 'if-unmodified-since': dateOf(author.modifiedDateTime, -3600) })
  t.equal(withIfMatch.status, 204, 'with an If-Match that holds, a stale date is ignored (§13.2.2)')
  author = (await call('GET', path)).body

  const put = await call('PUT', path, { name: 'Ada Lovelace', email: 'ada@example.com' }, { 'if-unmodified-since': dateOf(author.modifiedDateTime, 60) })
  t.equal(put.status, 204, 'PUT with a later date')
  author = (await call('GET', path)).body
  const stalePut = await call('PUT', path, { name: 'Not applied', email: 'ada@example.com' }, { 'if-unmodified-since': dateOf(author.modifiedDateTime, -1) })
  t.equal(stalePut.status, 412, 'PUT with an earlier date: 412')
  t.equal(stalePut.body.detail, `${path} has changed since the date in If-Unmodified-Since; GET it again and retry.`)

  const fresh = `/v1/authors/${randomUUID()}`
  const creating = await call('PUT', fresh, { name: 'New', email: 'new@example.com' }, { 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' })
  t.equal(creating.status, 204, 'a PUT that creates: nothing exists, so the date is ignored')
  t.equal((await call('GET', fresh)).status, 200, 'created')

  const read = await call('GET', path, undefined, { 'if-unmodified-since': dateOf(author.modifiedDateTime) })
  t.equal(read.status, 200, 'GET with the date of its last change')
  const staleRead = await call('GET', path, undefined, { 'if-unmodified-since': dateOf(author.modifiedDateTime, -1) })
  t.equal(staleRead.status, 412, 'GET with an earlier date: 412')

  const staleDelete = await call('DELETE', path, undefined, { 'if-unmodified-since': dateOf(author.modifiedDateTime, -1) })
  t.equal(staleDelete.status, 412, 'DELETE with an earlier date: 412')
  t.equal((await call('GET', path)).status, 200, 'not deleted')
  const deleted = await call('DELETE', path, undefined, { 'if-unmodified-since': dateOf(author.modifiedDateTime) })
  t.equal(deleted.status, 204, 'DELETE with the date of its last change')
  t.equal((await call('GET', path)).status, 404, 'deleted')

  const malformed = await call('PATCH', fresh, { name: 'x' }, { 'if-unmodified-since': '2026-01-01' })
  t.equal(malformed.status, 400, 'a date that is not an HTTP date: 400')
  t.match(malformed.body.context, [{ code: 'INPUT_INVALID', field: 'If-Unmodified-Since', source: 'header', value: '2026-01-01' }])
})

t.test('If-Unmodified-Since on documents: 428 still asks for If-Match; an action and a bulk request', async t => {
  const { base } = await startService(t)
  const { call } = serviceClient(base)
  const author = await call('POST', '/v1/authors', { name: 'Ada', email: 'ada@example.com' })
  const created = await call('POST', '/v1/documents', { name: 'Report', authorId: author.body.id, kind: 'INVOICE' })
  t.equal(created.status, 201)
  const path = `/v1/documents/${created.body.id as string}`
  const modified = created.body.modifiedDateTime as string

  const without = await call('PATCH', path, { description: 'x' }, { 'if-unmodified-since': dateOf(modified, 60) })
  t.equal(without.status, 428, 'documents require If-Match: the date does not stand in for it')

  const stale = await call('POST', `${path}/publish`, undefined, { 'if-unmodified-since': dateOf(modified, -1) })
  t.equal(stale.status, 412, 'an action (If-Match not required) with an earlier date: 412')
  t.equal(stale.body.detail, `${path} has changed since the date in If-Unmodified-Since; GET it again and retry.`)
  const published = await call('POST', `${path}/publish`, undefined, { 'if-unmodified-since': dateOf(modified) })
  t.equal(published.status, 200, 'the action with the date of its last change')
  t.equal(published.body.status, 'PUBLISHED')

  const etag = published.headers.get('etag') as string
  const content = await call('PUT', `${path}/content`, 'hello', { 'if-match': etag, 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT', 'content-type': 'text/plain; charset=UTF-8' })
  t.equal(content.status, 204, 'an upload with If-Match: the date is not weighed')

  const bulk = await call('PATCH', '/v1/authors', { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: 'Bulk', email: 'bulk@example.com' } }] }, { 'content-type': 'application/json', 'if-unmodified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' })
  t.equal(bulk.status, 200, 'a collection has no modification date: the date is ignored on a bulk request')
})

t.test('If-Unmodified-Since on a webhook subscription: PATCH and DELETE read it first, then write at the ETag read', async t => {
  const { base } = await startService(t, undefined, { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
  const hooks = client(base)
  const created = await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })
  t.equal(created.status, 201)
  const path = `/v1/webhook-subscriptions/${created.body.id as string}`
  const patched = await hooks('PATCH', path, { description: 'changed' }, { 'if-unmodified-since': dateOf(created.body.modifiedDateTime) })
  t.equal(patched.status, 204, 'PATCH with the date of its last change')
  const now = (await hooks('GET', path)).body
  t.equal(now.description, 'changed')
  t.not(patched.headers.get('etag'), created.headers.get('etag'), 'a new ETag answered')
  const stale = await hooks('PATCH', path, { description: 'not applied' }, { 'if-unmodified-since': dateOf(now.modifiedDateTime, -1) })
  t.equal(stale.status, 412, 'PATCH with the second before its last change: 412')
  const read = await hooks('GET', path, undefined, { 'if-unmodified-since': dateOf(now.modifiedDateTime) })
  t.equal(read.status, 200, 'GET with the date of its last change')
  const deleted = await hooks('DELETE', path, undefined, { 'if-unmodified-since': dateOf(now.modifiedDateTime, 60) })
  t.equal(deleted.status, 204, 'DELETE with a later date')
  t.equal((await hooks('GET', path)).status, 404)
})

t.test('If-Unmodified-Since sees a soft delete, and a stamp never goes back', async t => {
  const store = createStore({ dataDir: 'memory' })
  t.teardown(async () => { await store.close() })
  const { base } = await startService(t, store, { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
  const { call } = serviceClient(base)
  const author = await call('POST', '/v1/authors', { name: 'Ada', email: 'ada@example.com' })
  const created = await call('POST', '/v1/documents', { name: 'Report', authorId: author.body.id, kind: 'INVOICE' })
  const path = `/v1/documents/${created.body.id as string}`
  // Last changed in 2020, as far as its stamp says: a soft delete now is the later change.
  await store.query(`UPDATE ${quoteIdent(documents.storage.table)} SET "modifiedDateTime" = '2020-01-01T00:00:00Z' WHERE id = $1`, [created.body.id])
  const since2020 = { 'if-unmodified-since': 'Wed, 01 Jan 2020 00:00:00 GMT' }
  t.equal((await call('GET', path, undefined, since2020)).status, 200, 'not changed since 2020')
  const etag = (await call('GET', path)).headers.get('etag') as string
  t.equal((await call('DELETE', path, undefined, { 'if-match': etag })).status, 204, 'soft-deleted')
  const deleted = await call('GET', path)
  t.equal(deleted.body.modifiedDateTime, '2020-01-01T00:00:00.000Z', 'a soft delete leaves modifiedDateTime as it was')
  t.equal((await call('GET', path, undefined, since2020)).status, 412, 'GET: deleted since 2020')
  const restore = await call('POST', `${path}/restore`, undefined, since2020)
  t.equal(restore.status, 412, 'restore: deleted since 2020, so not restored')
  t.equal((await call('GET', path)).body.deletedDateTime, deleted.body.deletedDateTime, 'still deleted')

  // A stamp later than the clock (another server's, or a write whose transaction began later
  // and committed first) is kept by the next change: the time a change is stamped never goes back.
  const authorPath = `/v1/authors/${author.body.id as string}`
  await store.query(`UPDATE ${quoteIdent(authors.storage.table)} SET "modifiedDateTime" = '2999-01-01T00:00:00Z' WHERE id = $1`, [author.body.id])
  t.equal((await call('PATCH', authorPath, { name: 'Ada L.' })).status, 204)
  const after = (await call('GET', authorPath)).body
  t.equal(after.name, 'Ada L.')
  t.equal(after.modifiedDateTime, '2999-01-01T00:00:00.000Z', 'PATCH: the stamp did not go back')
  t.equal((await call('PUT', authorPath, { name: 'Ada', email: 'ada@example.com' })).status, 204)
  t.equal((await call('GET', authorPath)).body.modifiedDateTime, '2999-01-01T00:00:00.000Z', 'PUT (an upsert): the stamp did not go back')
  const hooks = client(base)
  const subscription = await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })
  await store.query('UPDATE event_subscriptions SET modified_at = \'2999-01-01T00:00:00Z\' WHERE id = $1', [subscription.body.id])
  const subscriptionPath = `/v1/webhook-subscriptions/${subscription.body.id as string}`
  t.equal((await hooks('PATCH', subscriptionPath, { description: 'changed' })).status, 204)
  t.equal((await hooks('GET', subscriptionPath)).body.modifiedDateTime, '2999-01-01T00:00:00.000Z', 'a subscription\'s PATCH: the stamp did not go back')
})

for (const db of databases) {
  t.test(`${db.label}: a subscription written by many at once, each read first (If-Unmodified-Since), answers each writer: no 409`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store, { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' })
    const hooks = client(base)
    const created = await hooks('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/in', events: ['author.created'] })
    const path = `/v1/webhook-subscriptions/${created.body.id as string}`
    const later = { 'if-unmodified-since': 'Fri, 31 Dec 9999 23:59:59 GMT' }
    const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) => await hooks('PATCH', path, { description: `writer ${i}` }, later)))
    t.strictSame([...new Set(answers.map(a => a.status))], [204], 'every writer got its 204')
    const etags = new Set(answers.map(a => a.headers.get('etag')))
    t.equal(etags.size, 30, 'each wrote a version of its own')
    const last = await hooks('GET', path)
    t.ok(etags.has(last.headers.get('etag')), 'the one that stays is one of them')
  })
}
