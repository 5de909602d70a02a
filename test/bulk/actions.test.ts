import t from 'tap'
import { databases } from '../support/databases.js'
import { api, build, count, json, statuses, unique, type Json } from './helper.js'

// The four actions, per-operation validation and constraints, ISOLATED and ATOMIC
// (conventions: "Bulk endpoint", "Bulk response body"; reference-service.md "Bulk"), over
// PGlite and a PostgreSQL server. Outcomes that matter are checked in the database too.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Every field of a document, to compare what a bulk stores with what a POST stores. */
function fullDocument (authorId: string, name: string): Json {
  return {
    name,
    description: 'all the types',
    authorId,
    kind: 'CONTRACT',
    status: 'PUBLISHED',
    pageCount: 7,
    byteCount: '9223372036854775807',
    amount: '-123456789012345.1234',
    discountPercentage: '12.5',
    tags: ['b', 'a', 'c,d', 'quote"d', '{x}'],
    pages: [{ number: 1, imageUrl: 'https://example.com/1.png' }, { number: 2, description: 'two', imageUrl: null }],
    retentionDuration: 'P1Y2M',
    validityInterval: '2024-01-01T00:00:00Z/P1D',
    reviewSchedule: '0 9 * * MON-FRI',
    effectiveDate: '2024-02-29',
    publishedDateTime: '2024-05-01T12:00:00Z',
    metadata: { source: { system: 'erp' } }
  }
}

/** An entity without what differs between two creations of the same fields. */
function comparable (e: Json): Json {
  const { id: _i, ref: _r, name: _n, etag: _e, createdDateTime: _c, modifiedDateTime: _m, ...rest } = e
  return rest
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store)
    const { bulk, post, get } = api(app)

    const entity = async (collection: string, id: string, extra: Record<string, string> = {}): Promise<Json | null> => {
      const res = await get(`/v1/${collection}/${id}`, extra)
      return res.statusCode === 200 ? json(res) : null
    }
    const newAuthor = async (name = 'Ann'): Promise<Json> => await post('/v1/authors', { name, email: 'ann@example.com' })
    const newDocument = async (authorId: string, extra: Json = {}): Promise<Json> => await post('/v1/documents', { name: unique(), authorId, kind: 'INVOICE', ...extra })
    const ok = async (collection: string, body: unknown, extra?: Record<string, string>, sub?: string): Promise<Json> => {
      const res = await bulk(collection, body, extra, sub)
      t.equal(res.statusCode, 200, res.body)
      t.match(res.headers['content-type'], /^application\/json/)
      return json(res)
    }

    t.test('CREATE: ids assigned, results in request order, audit fields from the token', async t => {
      const before = await count(store, 'authors')
      const body = await ok('authors', {
        operations: [
          { operationId: 'first', action: 'CREATE', entity: { name: 'One', email: 'one@example.com' } },
          { action: 'CREATE', entity: { name: 'Two', email: 'two@example.com', active: false } },
          { operationId: null, action: 'CREATE', entity: { name: 'Three', email: 'three@example.com' } }
        ]
      }, {}, 'bulk-user')
      t.equal(body.status, 'SUCCEEDED')
      t.strictSame(body.operations.map((o: Json) => o.operationId), ['first', '1', '2'])
      for (const o of body.operations) {
        t.equal(o.action, 'CREATE')
        t.match(o.entityId, UUID)
        t.equal(o.entityRef, `svc:author::${o.entityId as string}`)
        t.strictSame(o.result, { status: 'SUCCEEDED', detail: null, context: null })
      }
      t.equal(await count(store, 'authors'), before + 3)
      const two = await entity('authors', body.operations[1].entityId) as Json
      t.match(two, { name: 'Two', email: 'two@example.com', active: false, createdBy: 'bulk-user', modifiedBy: 'bulk-user' })
      t.equal(two.createdDateTime, two.modifiedDateTime)
      t.match(two.etag, /^"[A-Za-z0-9_-]+"$/)
      const one = await entity('authors', body.operations[0].entityId) as Json
      t.equal(one.active, true, 'defaults applied')
      t.not(one.etag, two.etag, 'each entity its own ETag')
    })

    t.test('a bulk stores exactly what a POST stores, batched or alone, ISOLATED or ATOMIC', async t => {
      const a = await newAuthor()
      const reference = await post('/v1/documents', fullDocument(a.id, unique()))
      for (const [mode, n] of [['ISOLATED', 1], ['ISOLATED', 3], ['ATOMIC', 1], ['ATOMIC', 3]] as const) {
        const body = await ok('documents', { transactionMode: mode, operations: Array.from({ length: n }, () => ({ action: 'CREATE', entity: fullDocument(a.id, unique()) })) })
        t.equal(body.status, 'SUCCEEDED', `${mode} × ${n}`)
        for (const o of body.operations) {
          const stored = await entity('documents', o.entityId) as Json
          t.strictSame(comparable(stored), comparable(reference), `${mode} × ${n}: same fields as the POST`)
        }
      }
    })

    t.test('per-operation validation fails only its operation (ISOLATED: PARTIAL)', async t => {
      const a = await newAuthor()
      const good = unique()
      const body = await ok('documents', {
        operations: [
          { action: 'CREATE', entity: { name: good, authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: '', authorId: a.id, kind: 'NOTE', pageCount: -1 } },
          { action: 'CREATE', entity: { id: 'mine', name: unique(), authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: unique(), authorId: a.id, kind: 'INVOICE', fingerprint: 'abc', etag: '"x"' } },
          { action: 'DELETE', ifMatch: 'no-quotes', entity: { id: 'bad id!' } },
          { action: 'CREATE_UPDATE', entity: { name: unique(), authorId: a.id, kind: 'INVOICE' } },
          { action: 'UPDATE', ifMatch: '"x"', entity: { id: 'd-1', name: unique(), kind: 'INVOICE' } }
        ]
      })
      t.equal(body.status, 'PARTIAL')
      t.strictSame(statuses(body), ['SUCCEEDED', ...Array(6).fill('FAILED')])
      const [, blank, withId, readOnly, badDelete, noId, partial] = body.operations as [Json, Json, Json, Json, Json, Json, Json]
      t.equal(blank.result.detail, 'The operation has 3 invalid values; see context for each one.')
      t.strictSame(blank.result.context, [
        { message: 'must not be blank', code: 'INPUT_BLANK', field: 'operations[1].entity.name', value: '' },
        { message: 'must be one of PURCHASE_ORDER, INVOICE, CONTRACT', code: 'INPUT_INVALID', field: 'operations[1].entity.kind', value: 'NOTE' },
        { message: 'must be at least 0', code: 'INPUT_MIN_VALUE', field: 'operations[1].entity.pageCount', value: '-1' }
      ])
      t.strictSame(blank.entityId, null, 'a failed CREATE names no entity')
      t.strictSame(withId.result.context, [{ message: 'is assigned by the server on CREATE; leave it out, or use CREATE_UPDATE to create an entity with this id', code: 'INPUT_INVALID', field: 'operations[2].entity.id' }])
      t.strictSame(readOnly.result.context.map((i: Json) => [i.field, i.message]), [
        ['operations[3].entity.fingerprint', 'is read-only; leave it out of the entity'],
        ['operations[3].entity.etag', 'is read-only; leave it out of the entity']
      ])
      t.strictSame(badDelete.result.context.map((i: Json) => [i.code, i.field]), [
        ['INPUT_INVALID', 'operations[4].ifMatch'],
        ['INPUT_INVALID', 'operations[4].entity.id']
      ])
      t.equal(badDelete.entityId, null, 'an invalid id is not echoed')
      t.match(noId.result.context, [{ code: 'INPUT_NULL', field: 'operations[5].entity.id' }])
      t.match(partial.result.context, [{ code: 'INPUT_NULL', field: 'operations[6].entity.authorId' }])
      t.equal(partial.entityId, 'd-1', 'a valid id is echoed although the rest is invalid')
      t.equal(partial.entityRef, 'svc:document::d-1')
      t.equal((await entity('documents', body.operations[0].entityId) as Json).name, good, 'the valid one is stored')
    })

    t.test('UPDATE replaces an existing entity entirely; ifMatch checked like If-Match', async t => {
      const a = await newAuthor('Before')
      const b = await newAuthor('Other')
      const c = await newAuthor('Third')
      const body = await ok('authors', {
        operations: [
          { action: 'UPDATE', ifMatch: a.etag, entity: { id: a.id, name: 'After', email: 'after@example.com' } },
          { action: 'UPDATE', ifMatch: '"stale"', entity: { id: b.id, name: 'Nope', email: 'nope@example.com' } },
          { action: 'UPDATE', entity: { id: 'no-such-author', name: 'X', email: 'x@example.com' } },
          { action: 'UPDATE', ifMatch: `W/${c.etag as string}`, entity: { id: c.id, name: 'Weak', email: 'w@example.com' } }
        ]
      }, {}, 'editor')
      t.strictSame(statuses(body), ['SUCCEEDED', 'FAILED', 'FAILED', 'FAILED'])
      t.equal(body.operations[0].entityId, a.id)
      const after = await entity('authors', a.id) as Json
      t.match(after, { name: 'After', email: 'after@example.com', active: true, createdBy: 'user-1', modifiedBy: 'editor', createdDateTime: a.createdDateTime })
      t.not(after.etag, a.etag, 'a new ETag')
      t.equal(body.operations[1].result.detail, `ifMatch does not match the current ETag of /v1/authors/${b.id as string}; GET it again and retry with its ETag.`)
      t.strictSame(body.operations[1].result.context, [{ message: 'does not match the current ETag', code: 'PRECONDITION_FAILED', field: 'operations[1].ifMatch', value: '"stale"' }])
      t.strictSame(body.operations[2].result.context, [{ message: 'must name an existing author', code: 'ENTITY_NOT_FOUND', field: 'operations[2].entity.id', value: 'no-such-author' }])
      t.match(body.operations[2].result.detail, 'CREATE_UPDATE creates it')
      t.equal(body.operations[3].result.context[0].code, 'PRECONDITION_FAILED', 'a weak tag never matches strongly')
      t.strictSame(await entity('authors', b.id), b, 'the failed ones unchanged')
      t.strictSame(await entity('authors', c.id), c)
      const star = await ok('authors', { operations: [{ action: 'UPDATE', ifMatch: '*', entity: { id: b.id, name: 'Star', email: 'b@example.com' } }] })
      t.equal(star.status, 'SUCCEEDED', 'ifMatch * matches any existing entity')
    })

    t.test('documents require ifMatch on UPDATE, DELETE and CREATE_UPDATE of an existing one', async t => {
      const a = await newAuthor()
      const d = await newDocument(a.id)
      const newId = `doc-${crypto.randomUUID()}`
      const body = await ok('documents', {
        operations: [
          { action: 'UPDATE', entity: { id: d.id, name: d.name, authorId: a.id, kind: 'INVOICE' } },
          { action: 'DELETE', entity: { id: d.id + 'x' } },
          { action: 'CREATE_UPDATE', entity: { id: d.id + 'y', name: unique(), authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE_UPDATE', entity: { id: newId, name: unique(), authorId: a.id, kind: 'CONTRACT' } }
        ]
      })
      t.strictSame(statuses(body), ['FAILED', 'FAILED', 'SUCCEEDED', 'SUCCEEDED'])
      t.strictSame(body.operations[0].result.context, [{ message: 'is required for this action', code: 'PRECONDITION_REQUIRED', field: 'operations[0].ifMatch' }])
      t.equal(body.operations[0].result.detail, `UPDATE of a document requires ifMatch; GET /v1/documents/${d.id as string} and send its ETag in ifMatch.`)
      t.equal(body.operations[1].result.context[0].code, 'PRECONDITION_REQUIRED', 'also for an id that does not exist, as DELETE on the item')
      t.equal((await entity('documents', newId) as Json).kind, 'CONTRACT', 'CREATE_UPDATE of a new id creates it without ifMatch')
      const replace = await ok('documents', { operations: [{ action: 'CREATE_UPDATE', entity: { id: newId, name: unique(), authorId: a.id, kind: 'INVOICE' } }] })
      t.strictSame(replace.operations[0].result.context, [{ message: 'is required for this action', code: 'PRECONDITION_REQUIRED', field: 'operations[0].ifMatch' }])
      t.match(replace.operations[0].result.detail, 'CREATE_UPDATE of a document requires ifMatch')
    })

    t.test('CREATE_UPDATE: creates with the given id, or replaces (as PUT)', async t => {
      const a = await newAuthor('Existing')
      const id = `author-${crypto.randomUUID()}`
      const body = await ok('authors', {
        operations: [
          { operationId: 'new', action: 'CREATE_UPDATE', entity: { id, name: 'Created', email: 'c@example.com' } },
          { operationId: 'old', action: 'CREATE_UPDATE', entity: { id: a.id, name: 'Replaced', email: 'r@example.com' } },
          { operationId: 'cond', action: 'CREATE_UPDATE', ifMatch: '"x"', entity: { id: `${id}-2`, name: 'Never', email: 'n@example.com' } }
        ]
      }, {}, 'putter')
      t.strictSame(statuses(body), ['SUCCEEDED', 'SUCCEEDED', 'FAILED'])
      t.match(await entity('authors', id), { id, ref: `svc:author::${id}`, name: 'Created', createdBy: 'putter' })
      t.match(await entity('authors', a.id), { name: 'Replaced', active: true, createdBy: 'user-1', modifiedBy: 'putter' })
      t.match(body.operations[2], { operationId: 'cond', entityId: `${id}-2`, result: { detail: /no author has the id/, context: [{ code: 'PRECONDITION_FAILED', message: 'cannot match an entity that does not exist', value: '"x"' }] } })
      t.equal(await entity('authors', `${id}-2`), null)
    })

    t.test('DELETE: existing ones go, a missing one succeeds, children block', async t => {
      const a = await newAuthor()
      const b = await newAuthor()
      const c = await newAuthor()
      const parent = await newAuthor('Parent')
      await newDocument(parent.id)
      const body = await ok('authors', {
        operations: [
          { action: 'DELETE', entity: { id: a.id } },
          { action: 'DELETE', ifMatch: b.etag, entity: { id: b.id, name: 'ignored', anything: true } },
          { action: 'DELETE', entity: { id: 'never-existed' } },
          { action: 'DELETE', ifMatch: '"other"', entity: { id: c.id } },
          { action: 'DELETE', entity: { id: parent.id } }
        ]
      })
      t.strictSame(statuses(body), ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', 'FAILED'])
      t.equal(await entity('authors', a.id), null)
      t.equal(await entity('authors', b.id), null)
      t.strictSame(body.operations[2], { operationId: '2', action: 'DELETE', entityId: 'never-existed', entityRef: 'svc:author::never-existed', result: { status: 'SUCCEEDED', detail: 'No author had this id, or it was deleted already; there was nothing to delete.', context: null } })
      t.equal(body.operations[3].result.context[0].code, 'PRECONDITION_FAILED')
      t.ok(await entity('authors', c.id))
      t.equal(body.operations[4].result.detail, `The author ${parent.id as string} cannot be deleted while documents refer to it, deleted ones included (they keep it, to be restored); change or delete those not deleted, and restore and change the deleted ones, first.`, 'documents are soft-deleted: the detail says deleted ones count')
      t.strictSame(body.operations[4].result.context, [{ message: 'is still referred to by other entities', code: 'ENTITY_REFERENCED', field: 'operations[4].entity.id', value: parent.id }])
      t.ok(await entity('authors', parent.id))
    })

    t.test('a batch of deletes, then creates reusing the names: request order is kept', async t => {
      const a = await newAuthor()
      const docs = [await newDocument(a.id), await newDocument(a.id)]
      const body = await ok('documents', {
        transactionMode: 'ATOMIC',
        operations: [
          ...docs.map(d => ({ action: 'DELETE', ifMatch: d.etag, entity: { id: d.id } })),
          ...docs.map(d => ({ action: 'CREATE', entity: { name: d.name, authorId: a.id, kind: 'CONTRACT' } }))
        ]
      })
      t.equal(body.status, 'SUCCEEDED', JSON.stringify(body))
      for (const d of docs) t.match(await entity('documents', d.id), { deletedDateTime: String, deletedBy: String }, 'soft-deleted: still there, its deletion shown')
      t.equal((await entity('documents', body.operations[2].entityId) as Json).name, docs[0]?.name)
    })

    t.test('UNIQUE_NAME_VIOLATION within the request and against stored documents', async t => {
      const a = await newAuthor()
      const stored = await newDocument(a.id)
      const twice = unique()
      const body = await ok('documents', {
        operations: [
          { action: 'CREATE', entity: { name: twice, authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: twice, authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: stored.name, authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: unique(), authorId: a.id, kind: 'INVOICE' } }
        ]
      })
      t.equal(body.status, 'PARTIAL')
      t.strictSame(statuses(body), ['SUCCEEDED', 'FAILED', 'FAILED', 'SUCCEEDED'])
      t.strictSame(body.operations[1].result, {
        status: 'FAILED',
        detail: `A document named '${twice}' already exists; choose another name.`,
        context: [{ message: 'must be unique among documents', code: 'UNIQUE_NAME_VIOLATION', field: 'operations[1].entity.name', value: twice }]
      })
      t.equal(body.operations[2].result.context[0].code, 'UNIQUE_NAME_VIOLATION')
      t.equal(body.operations[2].result.context[0].field, 'operations[2].entity.name')
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM documents WHERE name = $1', [twice])
      t.equal(rows[0]?.n, 1, 'the name stored once')
    })

    t.test('a batch of updates with one failing: the others are applied (ISOLATED)', async t => {
      const a = await newAuthor()
      const docs = [await newDocument(a.id), await newDocument(a.id), await newDocument(a.id)]
      const taken = await newDocument(a.id)
      const body = await ok('documents', {
        operations: docs.map((d, i) => ({ action: 'UPDATE', ifMatch: d.etag, entity: { id: d.id, name: i === 1 ? taken.name : `${d.name as string}-renamed`, authorId: a.id, kind: 'INVOICE', pageCount: 9 } }))
      })
      t.strictSame(statuses(body), ['SUCCEEDED', 'FAILED', 'SUCCEEDED'])
      t.equal(body.operations[1].result.context[0].code, 'UNIQUE_NAME_VIOLATION')
      t.match(await entity('documents', docs[0]?.id), { name: `${docs[0]?.name as string}-renamed`, pageCount: 9 })
      t.strictSame(await entity('documents', docs[1]?.id), docs[1], 'the failed one unchanged')
      t.match(await entity('documents', docs[2]?.id), { pageCount: 9 })
    })

    t.test('REFERENCE_NOT_FOUND for a missing author', async t => {
      const body = await ok('documents', { operations: [{ action: 'CREATE', entity: { name: unique(), authorId: 'nobody', kind: 'INVOICE' } }] })
      t.equal(body.status, 'FAILED')
      t.strictSame(body.operations[0].result, {
        status: 'FAILED',
        detail: "No author has the id 'nobody' given in authorId; create it first or correct authorId.",
        context: [{ message: 'must name an existing author', code: 'REFERENCE_NOT_FOUND', field: 'operations[0].entity.authorId', value: 'nobody' }]
      })
    })

    t.test('ATOMIC: one failure and nothing is stored; every result says why', async t => {
      const a = await newAuthor()
      const keep = await newDocument(a.id)
      const taken = await newDocument(a.id)
      const before = await count(store, 'documents')
      const body = await ok('documents', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: unique(), authorId: a.id, kind: 'INVOICE' } },
          { action: 'UPDATE', ifMatch: keep.etag, entity: { id: keep.id, name: keep.name, authorId: a.id, kind: 'CONTRACT' } },
          { operationId: 'dup-name', action: 'CREATE', entity: { name: taken.name, authorId: a.id, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: unique(), authorId: a.id, kind: 'INVOICE' } }
        ]
      })
      t.equal(body.status, 'FAILED')
      t.strictSame(statuses(body), ['FAILED', 'FAILED', 'FAILED', 'FAILED'])
      t.equal(body.operations[2].result.context[0].code, 'UNIQUE_NAME_VIOLATION')
      for (const i of [0, 1, 3]) {
        t.strictSame(body.operations[i].result, {
          status: 'FAILED',
          detail: 'Not applied: the ATOMIC bulk request was rolled back because operations[2] (operationId "dup-name") failed.',
          context: [{ message: 'was not applied because operations[2] (operationId "dup-name") failed', code: 'ROLLED_BACK' }]
        })
      }
      t.equal(body.operations[0].entityId, null, 'a rolled-back CREATE names no entity')
      t.equal(body.operations[1].entityId, keep.id)
      t.equal(await count(store, 'documents'), before, 'no row added')
      t.strictSame(await entity('documents', keep.id), keep, 'the update rolled back')
    })

    t.test('ATOMIC: invalid operations are all reported, nothing is tried', async t => {
      const before = await count(store, 'authors')
      const body = await ok('authors', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: 'Fine', email: 'f@example.com' } },
          { action: 'CREATE', entity: { name: 'Bad', email: 'not-an-email' } },
          { action: 'CREATE', entity: { name: 'Fine too', email: 'f@example.com' } },
          { action: 'CREATE', entity: { email: 'f@example.com' } }
        ]
      })
      t.strictSame(statuses(body), ['FAILED', 'FAILED', 'FAILED', 'FAILED'])
      t.match(body.operations[1].result.context, [{ code: 'INPUT_INVALID', field: 'operations[1].entity.email' }])
      t.match(body.operations[3].result.context, [{ code: 'INPUT_NULL', field: 'operations[3].entity.name' }])
      // Numbered as the context fields are (operations[1].entity.email): zero-based.
      t.equal(body.operations[0].result.detail, 'Not applied: the ATOMIC bulk request was rolled back because operations[1] and operations[3] failed.')
      t.equal(await count(store, 'authors'), before)
    })

    t.test('ATOMIC: a failed ifMatch or a missing entity rolls back the rest', async t => {
      const a = await newAuthor()
      const b = await newAuthor()
      const before = await count(store, 'authors')
      const body = await ok('authors', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: 'New', email: 'n@example.com' } },
          { action: 'DELETE', entity: { id: b.id } },
          { action: 'UPDATE', ifMatch: '"stale"', entity: { id: a.id, name: 'X', email: 'x@example.com' } },
          { action: 'UPDATE', entity: { id: 'missing', name: 'X', email: 'x@example.com' } }
        ]
      })
      t.strictSame(statuses(body), ['FAILED', 'FAILED', 'FAILED', 'FAILED'])
      t.equal(body.operations[2].result.context[0].code, 'PRECONDITION_FAILED')
      t.equal(body.operations[3].result.context[0].code, 'ENTITY_NOT_FOUND')
      t.match(body.operations[1].result.detail, 'because operations[2] and operations[3] failed')
      t.equal(await count(store, 'authors'), before)
      t.ok(await entity('authors', b.id), 'the delete rolled back')
    })

    t.test('ATOMIC: every action together succeeds together', async t => {
      const a = await newAuthor()
      const b = await newAuthor()
      const id = `atomic-${crypto.randomUUID()}`
      const body = await ok('authors', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: 'C', email: 'c@example.com' } },
          { action: 'UPDATE', ifMatch: a.etag, entity: { id: a.id, name: 'U', email: 'u@example.com' } },
          { action: 'CREATE_UPDATE', entity: { id, name: 'CU', email: 'cu@example.com' } },
          { action: 'DELETE', entity: { id: b.id } }
        ]
      })
      t.equal(body.status, 'SUCCEEDED')
      t.equal((await entity('authors', body.operations[0].entityId) as Json).name, 'C')
      t.equal((await entity('authors', a.id) as Json).name, 'U')
      t.equal((await entity('authors', id) as Json).name, 'CU')
      t.equal(await entity('authors', b.id), null)
    })

    t.test('ISOLATED: every operation failing is FAILED overall, nothing stored', async t => {
      const before = await count(store, 'documents')
      const body = await ok('documents', { operations: [{ action: 'CREATE', entity: { name: unique(), authorId: 'nobody', kind: 'INVOICE' } }, { action: 'CREATE', entity: {} }] })
      t.equal(body.status, 'FAILED')
      t.equal(await count(store, 'documents'), before)
    })

    t.test('execution contexts: a bulk sees and changes only its own partition', async t => {
      const pre = { 'svc-execution-context': 'preprod' }
      const created = json(await bulk('authors', { operations: [{ action: 'CREATE', entity: { name: 'Pre', email: 'p@example.com' } }] }, pre))
      const id = created.operations[0].entityId
      const res = await bulk('authors', { operations: [{ action: 'CREATE', entity: { name: 'Pre', email: 'p@example.com' } }] }, pre)
      t.equal(res.headers['svc-execution-context'], 'preprod', 'the header is echoed')
      t.equal(await entity('authors', id), null, 'not visible in prod')
      t.ok(await entity('authors', id, pre))
      const fromProd = await ok('authors', { operations: [{ action: 'UPDATE', entity: { id, name: 'Prod', email: 'p@example.com' } }] })
      t.equal(fromProd.operations[0].result.context[0].code, 'ENTITY_NOT_FOUND')
      const del = await ok('authors', { operations: [{ action: 'DELETE', entity: { id } }] })
      t.equal(del.operations[0].result.detail, 'No author had this id, or it was deleted already; there was nothing to delete.')
      t.match(await entity('authors', id, pre), { name: 'Pre' }, 'untouched in preprod')
      t.equal(await count(store, 'authors', 'preprod'), 2)
    })
  })
}
