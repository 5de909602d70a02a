import t from 'tap'
import { databases } from '../support/databases.js'
import { idemKey, leaksNothing, token, unique } from '../resource/helper.js'
import { serviceClient, startService } from './service.js'

// Black-box over real HTTP: the reference contract's asynchronous bulk ("Bulk", `/v1/jobs`).

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const { base } = await startService(t, store)
    const { call, bodies } = serviceClient(base, { patchType: 'application/json' })
    const author = (await call('POST', '/v1/authors', { name: 'Job Author', email: 'jobs@example.com' })).body
    const creates = (n: number, prefix = unique('async')): unknown[] => Array.from({ length: n }, (_, i) => ({ operationId: `c${i}`, action: 'CREATE', entity: { name: `${prefix}-${i}`, authorId: author.id, kind: 'INVOICE' } }))
    const async = { prefer: 'respond-async' }
    async function ended (id: string, sub = 'user-1'): Promise<any> {
      const deadline = Date.now() + 120_000
      for (;;) {
        const job = (await call('GET', `/v1/jobs/${id}`, undefined, {}, sub)).body
        if (job.status === 'SUCCEEDED' || job.status === 'FAILED') return job
        if (Date.now() > deadline) throw new Error(`job ${id} still ${String(job.status)}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    t.test('Prefer: respond-async: 202, Preference-Applied, the monitor in Link, no Location, the job; readable at once', async t => {
      const prefix = unique('accepted')
      const res = await call('PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations: creates(250, prefix) }, { ...async, 'x-request-id': 'bulk-async-1' })
      t.equal(res.status, 202)
      t.equal(res.headers.get('preference-applied'), 'respond-async')
      t.equal(res.headers.get('link'), `</v1/jobs/${res.body.id as string}>; rel="monitor"`)
      t.equal(res.headers.get('location'), null)
      t.equal(res.headers.get('x-request-id'), 'bulk-async-1')
      t.match(res.body, { ref: `svc:job::${res.body.id as string}`, kind: 'BULK', collection: 'documents', operationCount: 250, createdBy: 'user-1', result: null, problem: null })
      t.ok(['PENDING', 'RUNNING', 'SUCCEEDED'].includes(res.body.status))
      const now = await call('GET', `/v1/jobs/${res.body.id as string}`)
      t.equal(now.status, 200, 'readable as soon as the 202 arrives')
      const queried = await call('GET', `/v1/jobs/${res.body.id as string}?status=SUCCEEDED`)
      t.equal(queried.status, 400, 'a query parameter on the monitor is refused, not ignored')
      t.strictSame(queried.body.context.map((c: { field: string, source: string }) => [c.field, c.source]), [['status', 'query']])
      t.ok(['PENDING', 'RUNNING', 'SUCCEEDED'].includes(now.body.status))
      const done = await ended(res.body.id)
      t.match(done, { status: 'SUCCEEDED', completedCount: 250, result: { status: 'SUCCEEDED' }, problem: null })
      t.equal(done.result.operations.length, 250)
      t.strictSame(done.result.operations[0], { operationId: 'c0', action: 'CREATE', entityId: done.result.operations[0].entityId, entityRef: `svc:document::${done.result.operations[0].entityId as string}`, result: { status: 'SUCCEEDED', detail: null, context: null } })
      const listed = await call('GET', `/v1/documents?filter=name==${prefix}-*&limit=1&offset=0&totalCount=true`)
      t.equal(listed.body.paging.totalCount, 250, 'every document created')
      t.notOk(done.completedDateTime === null)
    })

    t.test('ISOLATED: each operation on its own (PARTIAL); ATOMIC: all or nothing', async t => {
      const prefix = unique('iso')
      const ops = [...creates(3, prefix), { action: 'UPDATE', ifMatch: '"0"', entity: { id: 'missing', name: 'x', authorId: author.id, kind: 'INVOICE' } }]
      const iso = await ended((await call('PATCH', '/v1/documents', { operations: ops }, async)).body.id)
      t.match(iso, { status: 'SUCCEEDED', result: { status: 'PARTIAL' } })
      t.strictSame(iso.result.operations.map((o: any) => o.result.status), ['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED'])
      t.equal(iso.result.operations[3].result.context[0].code, 'ENTITY_NOT_FOUND')
      const atomicPrefix = unique('atomic')
      const atomic = await ended((await call('PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations: [...creates(3, atomicPrefix), ops[3]] }, async)).body.id)
      t.match(atomic, { status: 'SUCCEEDED', result: { status: 'FAILED' } }, 'the job ran to its end; the bulk failed')
      t.equal(atomic.result.operations[0].result.context[0].code, 'ROLLED_BACK')
      t.equal((await call('GET', `/v1/documents?filter=name==${atomicPrefix}-*`)).body.results.length, 0, 'nothing stored')
      const invalid = await ended((await call('PATCH', '/v1/documents', { operations: [{ action: 'CREATE', entity: { name: '' } }] }, async)).body.id)
      t.match(invalid, { status: 'SUCCEEDED', result: { status: 'FAILED', operations: [{ result: { status: 'FAILED' } }] } }, 'an entity breaking its rules fails its operation in the job')
      const surrogate = await ended((await call('PATCH', '/v1/documents', { operations: [{ action: 'CREATE', entity: { name: 'half \ud800 a pair', authorId: author.id, kind: 'INVOICE' } }] }, async)).body.id)
      t.match(surrogate, { status: 'SUCCEEDED', result: { status: 'FAILED', operations: [{ result: { status: 'FAILED', context: [{ code: 'INPUT_INVALID' }] } }] } }, 'a string the database cannot hold is kept as sent, and fails its operation')
    })

    t.test('limits: 100 at once, 10,000 as a job; the 400s say which', async t => {
      const sync = await call('PATCH', '/v1/authors', { operations: Array.from({ length: 101 }, (_, i) => ({ action: 'CREATE', entity: { name: `a${i}`, email: 'a@example.com' } })) })
      t.equal(sync.status, 400)
      t.match(sync.body.detail, /at most 100 operations.*Prefer: respond-async/)
      const tooMany = await call('PATCH', '/v1/authors', { operations: Array.from({ length: 10_001 }, () => ({ action: 'DELETE', entity: { id: 'x' } })) }, async)
      t.equal(tooMany.status, 400)
      t.match(tooMany.body.detail, /at most 10000 operations/)
      t.strictSame(tooMany.body.context, [{ code: 'INPUT_MAX_VALUE', message: 'must hold at most 10000 operations', field: 'operations', source: 'body', value: '10001' }], 'the count as the value, worded as a synchronous one is')
      const duplicate = await call('PATCH', '/v1/authors', { operations: [{ action: 'DELETE', entity: { id: 'same' } }, { action: 'DELETE', entity: { id: 'same' } }] }, async)
      t.equal(duplicate.status, 400, 'a whole-request refusal is given at once, no job made')
    })

    t.test('a job is its creator\'s, in its execution context; the list needs a read scope', async t => {
      const job = (await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Listed', email: 'l@example.com' } }] }, async, 'lister')).body
      await ended(job.id, 'lister')
      t.equal((await call('GET', `/v1/jobs/${job.id as string}`, undefined, {}, 'someone-else')).status, 404)
      t.equal((await call('GET', `/v1/jobs/${job.id as string}`, undefined, { 'svc-execution-context': 'preprod' }, 'lister')).status, 404)
      const documentsOnly = await call('GET', `/v1/jobs/${job.id as string}`, undefined, { authorization: `Bearer ${token('lister', ['documents:read'])}` }, 'lister')
      t.equal(documentsOnly.status, 403, 'a job on authors needs authors:read')
      const second = (await call('PATCH', '/v1/documents', { operations: creates(1) }, async, 'lister')).body
      await ended(second.id, 'lister')
      const all = await call('GET', '/v1/jobs', undefined, {}, 'lister')
      t.strictSame(all.body.results.map((j: any) => j.id), [second.id, job.id], 'newest first')
      const authorsOnly = await call('GET', '/v1/jobs', undefined, { authorization: `Bearer ${token('lister', ['authors:read'])}` }, 'lister')
      t.strictSame(authorsOnly.body.results.map((j: any) => j.id), [job.id], 'the collections it may read')
      t.equal((await call('GET', '/v1/jobs?status=FAILED', undefined, {}, 'lister')).body.results.length, 0)
      const none = await call('GET', '/v1/jobs', undefined, { authorization: `Bearer ${token('lister', ['documents:write'])}` }, 'lister')
      t.equal(none.status, 403, 'neither authors:read nor documents:read')
    })

    t.test('Svc-Idempotency-Key: a second request with the key is a 409 naming the job, and starts nothing', async t => {
      const key = idemKey()
      const first = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Once', email: 'once@example.com' } }] }, { ...async, 'svc-idempotency-key': key })
      t.equal(first.status, 202)
      const again = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Once', email: 'once@example.com' } }] }, { ...async, 'svc-idempotency-key': key })
      t.equal(again.status, 409)
      t.equal(again.body.instance, `/v1/jobs/${first.body.id as string}`)
      t.match(again.body.detail, /already used to start \/v1\/jobs\//)
      const sync = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Once', email: 'once@example.com' } }] }, { 'svc-idempotency-key': key })
      t.equal(sync.status, 409, 'the same key without respond-async')
      t.match(sync.body.detail, /already used to start \/v1\/jobs\//, 'names the job too')
      await ended(first.body.id)
      t.equal((await call('GET', '/v1/authors?name=Once')).body.results.length, 1, 'created once')
      const syncKey = idemKey()
      const ran = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Sync once', email: 'sync@example.com' } }] }, { 'svc-idempotency-key': syncKey })
      t.equal(ran.status, 200)
      const late = await call('PATCH', '/v1/authors', { operations: [{ action: 'CREATE', entity: { name: 'Sync once', email: 'sync@example.com' } }] }, { ...async, 'svc-idempotency-key': syncKey })
      t.equal(late.status, 409, 'a key a synchronous bulk used, sent again asynchronously')
      t.match(late.body.detail, /already used for a bulk request; a bulk PATCH is not idempotent/, 'no job is named: none was started')
    })

    t.test('nothing of the store leaks in any answer', async t => {
      for (const body of bodies) t.ok(leaksNothing(body), body.slice(0, 200))
    })
  })
}
