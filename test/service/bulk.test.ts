import t from 'tap'
import { databases } from '../support/databases.js'
import { headers } from '../resource/helper.js'
import { startService } from './service.js'

// Black-box: PATCH /v1/authors and /v1/documents (reference-service.md, Bulk) over real HTTP.

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => {
      const res = await fetch(base + path, { method, headers: { ...headers(), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      return { status: res.status, body: text === '' ? null : JSON.parse(text) }
    }
    const count = async (): Promise<number> => {
      const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM documents')
      return (rows[0] as { n: number }).n
    }

    const authors = await call('PATCH', '/v1/authors', {
      operations: [
        { operationId: 'a', action: 'CREATE', entity: { name: 'Ann', email: 'ann@example.com' } },
        { action: 'CREATE', entity: { name: 'Bob', email: 'bob@example.com' } }
      ]
    })
    t.equal(authors.status, 200)
    t.equal(authors.body.status, 'SUCCEEDED')
    t.strictSame(authors.body.operations.map((o: { operationId: string }) => o.operationId), ['a', '1'], 'operationId echoed, else the index')
    const annId = authors.body.operations[0].entityId as string
    t.equal(authors.body.operations[0].entityRef, `svc:author::${annId}`)

    t.test('ATOMIC: a duplicate name fails the whole bulk and nothing is stored', async t => {
      const before = await count()
      const res = await call('PATCH', '/v1/documents', {
        transactionMode: 'ATOMIC',
        operations: [
          { action: 'CREATE', entity: { name: 'dup', authorId: annId, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: 'fine', authorId: annId, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: 'dup', authorId: annId, kind: 'CONTRACT' } }
        ]
      })
      t.equal(res.status, 200, 'never 207')
      t.equal(res.body.status, 'FAILED')
      t.ok(res.body.operations.every((o: { result: { status: string } }) => o.result.status === 'FAILED'))
      t.ok(res.body.operations.some((o: { result: { context: Array<{ code: string }> | null } }) => o.result.context?.some(c => c.code === 'UNIQUE_NAME_VIOLATION')), 'the reason is named')
      t.equal(await count(), before, 'counted in the database: nothing stored')
    })

    t.test('ISOLATED: each operation alone; PARTIAL; per-operation validation fields', async t => {
      const before = await count()
      const res = await call('PATCH', '/v1/documents', {
        operations: [
          { action: 'CREATE', entity: { name: 'iso-1', authorId: annId, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: '', authorId: annId, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: 'iso-3', authorId: 'missing-author', kind: 'INVOICE' } }
        ]
      })
      t.equal(res.status, 200)
      t.equal(res.body.status, 'PARTIAL')
      t.strictSame(res.body.operations.map((o: { result: { status: string } }) => o.result.status), ['SUCCEEDED', 'FAILED', 'FAILED'])
      t.match(res.body.operations[1].result.context, [{ code: 'INPUT_BLANK', field: 'operations[1].entity.name' }])
      t.match(res.body.operations[2].result.context, [{ code: 'REFERENCE_NOT_FOUND' }])
      t.equal(await count(), before + 1)
    })

    t.test('ISOLATED: a value the store cannot hold (year 0000, U+0000) fails its own operation, never the request', async t => {
      const before = await count()
      const res = await call('PATCH', '/v1/documents', {
        operations: [
          { action: 'CREATE', entity: { name: 'store-ok', authorId: annId, kind: 'INVOICE' } },
          { action: 'CREATE', entity: { name: 'year-0', authorId: annId, kind: 'INVOICE', effectiveDate: '0000-06-01' } },
          { action: 'CREATE', entity: { name: 'year-0-dt', authorId: annId, kind: 'INVOICE', publishedDateTime: '0000-01-01T00:00:00Z' } },
          { action: 'CREATE', entity: { name: 'nul\u0000name', authorId: annId, kind: 'INVOICE', tags: ['a\u0000'] } },
          { action: 'DELETE', entity: { id: 'gone\u0000id' } }
        ]
      })
      t.equal(res.status, 200, 'answered per operation')
      t.equal(res.body.status, 'PARTIAL')
      t.strictSame(res.body.operations.map((o: { result: { status: string } }) => o.result.status), ['SUCCEEDED', 'FAILED', 'FAILED', 'FAILED', 'FAILED'])
      t.match(res.body.operations[1].result.context, [{ code: 'INPUT_INVALID', field: 'operations[1].entity.effectiveDate' }])
      t.match(res.body.operations[2].result.context, [{ code: 'INPUT_INVALID', field: 'operations[2].entity.publishedDateTime' }])
      t.match(res.body.operations[3].result.context, [{ code: 'INPUT_INVALID', field: 'operations[3].entity.name' }, { code: 'INPUT_INVALID', field: 'operations[3].entity.tags[0]' }])
      t.match(res.body.operations[4].result.context, [{ code: 'INPUT_INVALID', field: 'operations[4].entity.id' }])
      t.equal(await count(), before + 1, 'the good operation is stored')
      const envelope = await call('PATCH', '/v1/documents', { operations: [{ operationId: 'op\u0000', action: 'DELETE', entity: { id: 'x' } }] })
      t.equal(envelope.status, 400, 'a NUL in the envelope itself still refuses the request')
      t.match(envelope.body.context, [{ code: 'INPUT_INVALID', field: 'operations[0].operationId' }])
      const single = await call('POST', '/v1/documents', { name: 'year-0-single', authorId: annId, kind: 'INVOICE', effectiveDate: '0000-06-01' })
      t.equal(single.status, 400, 'not a 500 from the store')
      t.match(single.body.context, [{ code: 'INPUT_INVALID', field: 'effectiveDate', source: 'body' }])
    })

    t.test('request-level refusals: more than 100 operations, duplicate ids', async t => {
      const many = await call('PATCH', '/v1/authors', { operations: Array.from({ length: 101 }, (_, i) => ({ action: 'CREATE', entity: { name: `n${i}`, email: `n${i}@example.com` } })) })
      t.equal(many.status, 400)
      t.equal(many.body.title, 'Invalid Data')
      t.match(many.body.detail, /100/)
      const query = await call('PATCH', '/v1/authors?dryRun=true', { operations: [{ action: 'DELETE', entity: { id: annId } }] })
      t.equal(query.status, 400, 'a query parameter is refused, not ignored')
      t.match(query.body.context, [{ field: 'dryRun', source: 'query', code: 'INPUT_INVALID' }])
      t.equal((await call('GET', `/v1/authors/${annId}`)).status, 200, 'and nothing was deleted')
      const dup = await call('PATCH', '/v1/authors', {
        operations: [
          { action: 'DELETE', entity: { id: annId } },
          { action: 'DELETE', entity: { id: annId } }
        ]
      })
      t.equal(dup.status, 400)
    })
  })
}
