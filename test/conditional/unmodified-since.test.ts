import t from 'tap'
import { randomUUID } from 'node:crypto'
import { client } from '../events/helper.js'
import { serviceClient, startService } from '../service/service.js'

// If-Unmodified-Since on the reference service (RFC 9110 §13.1.4; conventions: Common errors,
// 412 and 428): compared with the entity's modifiedDateTime to the second, only where
// If-Match is not sent, on every write path and on an item's GET.

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
