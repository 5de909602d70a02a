import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { bulk, conventions, defineResource, idempotency, jobs, problem, query, resource, validation, type Store, type Tx } from '../../index.js'
import { Unavailable } from '../../store/index.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { countStatements, transactionsOf } from '../support/count-statements.js'
import { databases } from '../support/databases.js'
import { CURSOR_SECRET, headers, json, unique, type Json } from '../resource/helper.js'

// Asynchronous bulk in the plugins alone: a job taken up again after a run that applied part
// of it (its steps recorded beside that work) applies nothing twice; without monitor routes a
// job has no Link; without the auth plugin a job has no creator.

/** The plugins the bulk and jobs plugins need, no auth, the jobs' own options. */
async function build (t: Test, store: Store, jobOptions: Record<string, unknown>, bulkOptions: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [authors, documents], withoutAuth: true })
  await app.register(jobs, { store, pollMillis: 20, ...jobOptions })
  await app.register(bulk, bulkOptions)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** The job once it has ended, read from its table (no monitor routes needed). */
async function ended (app: FastifyInstance, store: Store, id: string, subject = ''): Promise<Json> {
  for (let i = 0; ; i++) {
    const job = await app.jobs.table.get(store, 'prod', subject, id)
    if (job !== null && (job.status === 'SUCCEEDED' || job.status === 'FAILED')) return job as unknown as Json
    // Generous: nothing here races the clock, it only bounds a hang.
    if (i > 6000) throw new Error(`job ${id} never ended`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await build(t, store, { path: false })
    const author = json(await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json' }), payload: { name: unique('author'), email: 'jobs@example.com' } }))

    t.test('accepted without monitor routes and without auth: no Link, no creator', async t => {
      const res = await app.inject({
        method: 'PATCH',
        url: '/v1/authors',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        payload: { operations: [{ action: 'CREATE', entity: { name: unique('a'), email: 'a@example.com' } }] }
      })
      t.equal(res.statusCode, 202)
      t.equal(res.headers.link, undefined, 'no monitor to link to')
      t.equal(json(res).createdBy, null)
      t.match(await ended(app, store, json(res).id), { status: 'SUCCEEDED', result: { status: 'SUCCEEDED' } })
    })

    t.test('taken up again: the operations a run recorded are not applied twice', async t => {
      const names = [unique('resumed'), unique('resumed'), unique('resumed')]
      const operations = names.map(name => ({ action: 'CREATE', entity: { name, authorId: author.id, kind: 'INVOICE' } }))
      const earlier = { id: randomUUID(), outcome: { status: 'SUCCEEDED', detail: null, context: null } }
      const id = randomUUID()
      // What a run that died after its first operation leaves: the job, that operation's step.
      // The job and its step commit together, so no run sees one without the other.
      await store.transaction(async (tx) => {
        await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'BULK', collection: 'documents', subject: 'user-1', input: { transactionMode: 'ISOLATED', operations }, operationCount: 3, requestId: null })
        await app.jobs.table.recordSteps(tx, 'prod', id, [{ step: 0, outcome: earlier }])
      })
      app.jobs.wake()
      const job = await ended(app, store, id, 'user-1')
      t.match(job, { status: 'SUCCEEDED', completedCount: 3, result: { status: 'SUCCEEDED' } })
      const results = (job.result as Json).operations as Json[]
      t.equal(results[0]?.entityId, earlier.id, 'the first operation as the earlier run recorded it')
      const listed = json(await app.inject({ url: `/v1/documents?filter=name==${names[0] as string}`, headers: headers() }))
      t.equal(listed.results.length, 0, 'and not applied again (the earlier run\'s own write is not in this store)')
      for (const name of names.slice(1)) {
        t.equal(json(await app.inject({ url: `/v1/documents?filter=name==${name}`, headers: headers() })).results.length, 1, `${name}: applied once`)
      }
    })

    t.test('ATOMIC rolled back: all or nothing, its outcome written once, as the job\'s result', async t => {
      const names = [unique('atomic'), unique('atomic')]
      const res = await app.inject({
        method: 'PATCH',
        url: '/v1/documents',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        payload: { transactionMode: 'ATOMIC', operations: [...names.map(name => ({ action: 'CREATE', entity: { name, authorId: author.id, kind: 'INVOICE' } })), { action: 'CREATE', entity: { name: names[0], authorId: author.id, kind: 'INVOICE' } }] }
      })
      t.equal(res.statusCode, 202)
      const job = await ended(app, store, json(res).id)
      t.match(job, { status: 'SUCCEEDED', result: { status: 'FAILED' } })
      t.strictSame(((job.result as Json).operations as Json[]).map(o => o.result.context?.[0]?.code), ['ROLLED_BACK', 'ROLLED_BACK', 'UNIQUE_NAME_VIOLATION'])
      t.equal((await app.jobs.table.stepsOf(store, 'prod', json(res).id)).size, 0, 'no step: the transaction that ends the job holds the outcome')
      for (const name of names) t.equal(json(await app.inject({ url: `/v1/documents?filter=name==${name}`, headers: headers() })).results.length, 0, 'nothing stored')
    })

    t.test('an ATOMIC job whose kinds go out of request order names the failure that comes first in it', async t => {
      const post = async (name: string): Promise<Json> => json(await app.inject({ method: 'POST', url: '/v1/documents', headers: headers({ 'content-type': 'application/json' }), payload: { name, authorId: author.id, kind: 'INVOICE' } }))
      const [a, b] = [await post(unique('doc')), await post(unique('doc'))] as [Json, Json]
      const fresh = unique('doc')
      // The CREATEs are written first, by one statement, which the second one's name breaks; the
      // UPDATE between them, whose author does not exist, is the first to fail in request order.
      const operations = [
        { action: 'CREATE', entity: { name: fresh, authorId: author.id, kind: 'INVOICE' } },
        { action: 'UPDATE', ifMatch: b.etag, entity: { id: b.id, name: b.name, authorId: 'nobody', kind: 'INVOICE' } },
        { action: 'CREATE', entity: { name: a.name, authorId: author.id, kind: 'INVOICE' } }
      ]
      const res = await app.inject({ method: 'PATCH', url: '/v1/documents', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, payload: { transactionMode: 'ATOMIC', operations } })
      t.equal(res.statusCode, 202)
      const job = await ended(app, store, json(res).id)
      t.equal(job.result.status, 'FAILED')
      t.strictSame((job.result.operations as Json[]).map(o => [o.result.status, o.result.context[0].code]), [['FAILED', 'ROLLED_BACK'], ['FAILED', 'REFERENCE_NOT_FOUND'], ['FAILED', 'ROLLED_BACK']])
      const { rows } = await store.query('SELECT 1 FROM documents WHERE ctx = $1 AND name = $2', ['prod', fresh])
      t.equal(rows.length, 0, 'nothing written')
    })

    t.test('the statements of a job\'s transaction: its work, and the job\'s record or end, which checks its claim', async t => {
      // Each statement of a job's transaction, by what it does; the claim of the job is checked
      // by the record of the steps and count (ISOLATED) or by the job's end (ATOMIC).
      const kinds: Array<[RegExp, string]> = [
        [/^SAVEPOINT/, 'savepoint'],
        [/^RELEASE/, 'release'],
        [/INSERT INTO "jobs_steps".*UPDATE "jobs" SET completed_count = \$\d+.*lease_owner = \$3 AND attempts = \$4/s, 'steps, count and claim'],
        [/^UPDATE "jobs" SET status = 'SUCCEEDED'.*lease_owner = \$\d+ AND attempts = \$\d+/s, 'end and claim'],
        [/FROM "authors".*FOR UPDATE/s, 'locked read'],
        [/^(WITH w AS \()?(INSERT INTO|UPDATE) "authors"/, 'write']
      ]
      const kindOf = (text: string): string => kinds.find(([pattern]) => pattern.test(text))?.[1] ?? text.slice(0, 60)
      const expected = {
        ISOLATED: ['locked read', 'savepoint', 'write', 'release', 'savepoint', 'write', 'release', 'steps, count and claim'],
        // Its operations decided before it, on rows read without a lock. On the embedded store,
        // no locked read: its writes guarded by the ETags read, in a savepoint that undoes them
        // should one miss. On a server, the locked read, which takes the rows in one order.
        ATOMIC: store.kind === 'pglite'
          ? ['savepoint', 'savepoint', 'write', 'release', 'write', 'release', 'end and claim']
          : ['locked read', 'savepoint', 'write', 'release', 'write', 'end and claim']
      }
      // The same operations in turns (CREATE, UPDATE, CREATE): each kind's in one statement all
      // the same, as authors have no unique field for an order to matter to. ATOMIC, in a
      // savepoint of their own, which undoes them to run again in request order should one fail.
      const inTurns = {
        ISOLATED: expected.ISOLATED,
        ATOMIC: store.kind === 'pglite'
          ? ['savepoint', 'savepoint', 'write', 'write', 'release', 'release', 'end and claim']
          : ['locked read', 'savepoint', 'write', 'write', 'release', 'end and claim']
      }
      for (const [mode, turns] of [['ISOLATED', false], ['ATOMIC', false], ['ISOLATED', true], ['ATOMIC', true]] as const) {
        const existing = json(await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json' }), payload: { name: unique('existing'), email: 'e@example.com' } }))
        const update = { action: 'UPDATE', ifMatch: existing.etag, entity: { id: existing.id, name: unique('updated'), email: 'u@example.com' } }
        const create = (): Json => ({ action: 'CREATE', entity: { name: unique('created'), email: 'c@example.com' } })
        const operations = turns ? [create(), update, create()] : [create(), create(), update]
        const sql = countStatements(store)
        const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, payload: { transactionMode: mode, operations } })
        t.equal(res.statusCode, 202, mode)
        const job = await ended(app, store, json(res).id)
        sql.restore()
        t.match(job, { status: 'SUCCEEDED', completedCount: 3, result: { status: 'SUCCEEDED' } }, `${mode}: applied`)
        t.equal(json(await app.inject({ method: 'GET', url: `/v1/authors/${existing.id as string}`, headers: headers() })).name, update.entity.name, `${mode}: updated`)
        // Not the test's own reads of the job while it waits for its end: on a server they come
        // from another connection, and may be sent while the transaction runs.
        const sent = sql.texts().filter(text => !/FROM "jobs" WHERE ctx = \$1 AND subject = \$2 AND id = \$3/.test(text))
        const work = transactionsOf(sent).filter(x => x.statements.some(text => /"authors"/.test(text)))
        t.equal(work.length, 1, `${mode}: one transaction of work (one slice)`)
        t.ok(work[0]?.committed, `${mode}: committed`)
        t.strictSame(work[0]?.statements.map(kindOf), (turns ? inTurns : expected)[mode], `${mode}${turns ? ', in turns' : ''}: its statements`)
        t.notOk(sql.texts().some(text => /^SELECT 1 AS held/.test(text)), `${mode}: no lock of the job of its own`)
      }
    })
  })
}

t.test('an ATOMIC job taken up again after its outcome was recorded answers that outcome; one whose database fails is retried, then FAILED', async t => {
  const real = await databases[0]?.create(t) as Store
  let failInserts = false
  // The store as the plugins see it: while failInserts, creating documents finds the database gone.
  const guard = (tx: Tx): Tx => new Proxy(tx, {
    get (target, key, receiver) {
      if (key !== 'query') return Reflect.get(target, key, receiver)
      return async (text: string, ...rest: unknown[]) => {
        if (failInserts && /^(WITH w AS \()?INSERT INTO "documents"/.test(text)) throw new Unavailable('The database is unavailable.')
        return await (target.query as (...args: unknown[]) => Promise<unknown>)(text, ...rest)
      }
    }
  })
  const store = new Proxy(real, {
    get (target, key, receiver) {
      if (key !== 'transaction') return Reflect.get(target, key, receiver)
      return async (fn: (tx: Tx) => Promise<unknown>, opts?: unknown) => await target.transaction(async (tx) => await fn(guard(tx)), opts as never)
    }
  })
  const app = await build(t, store, { path: false, maxAttempts: 2 })
  const author = json(await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json' }), payload: { name: unique('author'), email: 'atomic@example.com' } }))

  const recorded = { status: 'SUCCEEDED', operations: [{ operationId: '0', action: 'CREATE', entityId: 'made-before', entityRef: 'svc:document::made-before', result: { status: 'SUCCEEDED', detail: null, context: null } }] }
  const id = randomUUID()
  await real.transaction(async (tx) => {
    await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'BULK', collection: 'documents', subject: '', input: { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name: unique('never'), authorId: author.id, kind: 'INVOICE' } }] }, operationCount: 1, requestId: null })
    await app.jobs.table.recordSteps(tx, 'prod', id, [{ step: 0, outcome: recorded }])
  })
  app.jobs.wake()
  t.strictSame((await ended(app, real, id)).result, recorded, 'the recorded outcome, nothing applied again')

  failInserts = true
  const name = unique('away')
  const res = await app.inject({
    method: 'PATCH',
    url: '/v1/documents',
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    payload: { transactionMode: 'ATOMIC', operations: [{ action: 'CREATE', entity: { name, authorId: author.id, kind: 'INVOICE' } }] }
  })
  t.equal(res.statusCode, 202)
  const failed = await ended(app, real, json(res).id)
  t.match(failed, { status: 'FAILED', problem: { status: 503, title: 'Service Unavailable' }, result: null }, 'tried maxAttempts times, then FAILED')
  failInserts = false
  t.equal(json(await app.inject({ url: `/v1/documents?filter=name==${name}`, headers: headers() })).results.length, 0, 'nothing stored')
})

t.test('an ATOMIC job that applies: its writes and its end in one transaction, the outcome written once', async t => {
  const store = await databases[0]?.create(t) as Store
  const app = await build(t, store, { path: false })
  const author = json(await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json' }), payload: { name: unique('author'), email: 'atomic@example.com' } }))
  const names = [unique('kept'), unique('kept'), unique('kept')]
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  const res = await app.inject({
    method: 'PATCH',
    url: '/v1/documents',
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    payload: { transactionMode: 'ATOMIC', operations: names.map(name => ({ action: 'CREATE', entity: { name, authorId: author.id, kind: 'INVOICE' } })) }
  })
  t.equal(res.statusCode, 202)
  const job = await ended(app, store, json(res).id)
  sql.restore()
  t.match(job, { status: 'SUCCEEDED', completedCount: 3, result: { status: 'SUCCEEDED' } })
  const created = ((job.result as Json).operations as Json[]).map(o => o.entityId)
  for (const [i, name] of names.entries()) {
    t.strictSame(json(await app.inject({ url: `/v1/documents?filter=name==${name}`, headers: headers() })).results.map((d: Json) => d.id), [created[i]], `${name}: stored, as the result says`)
  }
  const writes = sql.texts().filter(text => /INSERT INTO "documents"/.test(text))
  t.equal(writes.length, 1, 'the creations: one statement')
  // What the statement answers: the last SELECT after its CTEs, or what the write alone returns.
  const write = writes[0] ?? ''
  const alone = !write.startsWith('WITH ')
  const returning = write.indexOf('RETURNING ')
  const answer = !alone ? write.slice(write.lastIndexOf('\nSELECT ')) : returning < 0 ? '' : write.slice(returning)
  t.strictSame([...answer.matchAll(/\."([^"]+)"/g)].map(m => m[1]), [], 'answering no row: each has the id and ETag the job gave it')
  t.match(answer, alone ? /^$/ : /count\(\*\) FROM w\)::integer AS "svc:count"/, 'but how many it wrote')
  const ending = transactionsOf(sql.texts()).filter(x => x.statements.some(text => /SET status = 'SUCCEEDED'/.test(text)))
  t.equal(ending.length, 1, 'the job ended once')
  t.ok(ending[0]?.committed === true && ending[0].statements.some(text => /INSERT INTO "documents"/.test(text)), 'in the transaction of its writes')
  // The result the writes were presumed to give, written before the transaction opened, under
  // the job's claim: the transaction only marks the job SUCCEEDED.
  const texts = sql.texts()
  const staged = texts.findIndex(text => /^UPDATE "jobs" SET result = \$3 WHERE .*lease_owner = \$4 AND attempts = \$5/.test(text))
  t.ok(staged >= 0 && staged < texts.indexOf('BEGIN'), 'its result written ahead, outside the transaction')
  t.notMatch(ending[0]?.statements.find(text => /SET status = 'SUCCEEDED'/.test(text)), /result =/, 'not written again by its end')
  t.notOk(sql.texts().some(text => /"jobs_steps"/.test(text) && /^INSERT/.test(text)), 'no step recorded beside it')
  t.equal((await app.jobs.table.stepsOf(store, 'prod', json(res).id)).size, 0)
})

t.test('an ATOMIC job whose entity changed after its result was written ahead: its end writes the result it gave', async t => {
  const store = await databases[0]?.create(t) as Store
  // Soft-deleted, and deleted without If-Match: a deletion of what is deleted already succeeds.
  const notes = defineResource({ name: 'note', collection: 'notes', path: '/v1/notes', idParam: 'noteId', fields: { text: Type.String() }, softDelete: true })
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [notes], withoutAuth: true })
  await app.register(jobs, { store, pollMillis: 20, path: false })
  await app.register(bulk)
  t.teardown(() => app.close())
  await app.ready()
  const note = json(await app.inject({ method: 'POST', url: '/v1/notes', headers: headers({ 'content-type': 'application/json' }), payload: { text: 'moved' } }))
  // Another request deletes the note after the job read it, before its transaction.
  const transaction = store.transaction.bind(store)
  store.transaction = async (fn, opts) => {
    store.transaction = transaction
    await store.query('UPDATE "notes" SET "deletedDateTime" = now(), etag = $2 WHERE id = $1', [note.id, '"deleted-meanwhile"'])
    return await transaction(fn, opts)
  }
  t.teardown(() => { store.transaction = transaction })
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  const res = await app.inject({
    method: 'PATCH',
    url: '/v1/notes',
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    // The second names no note: its outcome known ahead, nothing to delete.
    payload: { transactionMode: 'ATOMIC', operations: [{ action: 'DELETE', entity: { id: note.id } }, { action: 'DELETE', entity: { id: randomUUID() } }] }
  })
  t.equal(res.statusCode, 202)
  const job = await ended(app, store, json(res).id)
  sql.restore()
  t.ok(sql.texts().some(text => /^UPDATE "jobs" SET result = /.test(text)), 'a result written ahead: the deletion presumed')
  t.match(job, { status: 'SUCCEEDED', result: { status: 'SUCCEEDED', operations: [{ entityId: note.id, result: { status: 'SUCCEEDED', detail: /deleted already/ } }, { result: { status: 'SUCCEEDED', detail: /deleted already/ } }] } }, 'the deletion found it deleted already, and says so')
  const end = sql.texts().find(text => /SET status = 'SUCCEEDED'/.test(text))
  t.match(end, /result = \$3/, 'its end wrote that result')
})

t.test('an ATOMIC job whose statements answer their rows: no result written ahead, its end writes it', async t => {
  const store = await databases[0]?.create(t) as Store
  const app = await build(t, store, { path: false })
  const author = json(await app.inject({ method: 'POST', url: '/v1/authors', headers: headers({ 'content-type': 'application/json' }), payload: { name: unique('removed'), email: 'removed@example.com' } }))
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  // An author's deletion removes its row, which answers the ETag it had.
  const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, payload: { transactionMode: 'ATOMIC', operations: [{ action: 'DELETE', entity: { id: author.id } }] } })
  t.equal(res.statusCode, 202)
  const job = await ended(app, store, json(res).id)
  sql.restore()
  t.match(job, { status: 'SUCCEEDED', result: { status: 'SUCCEEDED', operations: [{ entityId: author.id, result: { status: 'SUCCEEDED', detail: null } }] } })
  t.notOk(sql.texts().some(text => /^UPDATE "jobs" SET result = /.test(text)), 'nothing written ahead')
  t.match(sql.texts().find(text => /SET status = 'SUCCEEDED'/.test(text)), /result = \$3/, 'its end writes the result')
})

t.test('accepting a job is its one insert; with a key, the key\'s claim is a CTE of that insert', async t => {
  const store = await databases[0]?.create(t) as Store
  const app = await build(t, store, { path: false, worker: false })
  const operations = [{ action: 'CREATE', entity: { name: unique('accepted'), email: 'accepted@example.com' } }]
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  for (const [name, key, insert] of [['no key', null, /^INSERT INTO "jobs"/], ['a key', randomUUID(), /^WITH k AS \(INSERT INTO "idempotency_keys"[^]*\n\s*INSERT INTO "jobs"[^]*WHERE EXISTS \(SELECT 1 FROM k\)/]] as const) {
    sql.reset()
    const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async', ...(key === null ? {} : { 'svc-idempotency-key': key }) }, payload: { operations } })
    t.equal(res.statusCode, 202, name)
    const sent = sql.texts()
    t.equal(sent.length, 1, `${name}: one statement`, { sent })
    t.match(sent[0], insert, `${name}: the job written`)
    t.match(await app.jobs.table.get(store, 'prod', '', json(res).id), { status: 'PENDING' }, `${name}: and there`)
  }
})

for (const db of databases) {
  t.test(`${db.label}: a key starts one job while it is kept, and another once it expired`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    let now = new Date('2026-01-01T00:00:00Z')
    const app = Fastify()
    await app.register(problem)
    await app.register(validation)
    await app.register(conventions, { userAgent: false })
    await app.register(query, { cursorSecret: CURSOR_SECRET })
    await app.register(idempotency, { store, ttl: 60_000, now: () => now })
    await app.register(resource, { store, resources: [authors], withoutAuth: true })
    await app.register(jobs, { store, path: false, worker: false })
    await app.register(bulk)
    t.teardown(() => app.close())
    await app.ready()
    const key = randomUUID()
    const operations = [{ action: 'CREATE', entity: { name: unique('keyed'), email: 'keyed@example.com' } }]
    const send = async (): Promise<{ statusCode: number, body: Json }> => {
      const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async', 'svc-idempotency-key': key }, payload: { operations } })
      return { statusCode: res.statusCode, body: json(res) }
    }
    const jobCount = async (): Promise<number> => Number((await store.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE kind = 'BULK'")).rows[0]?.n)
    const before = await jobCount()

    // Sent at once: the second claim waits on the first's key, then finds it taken.
    const both = await Promise.all([send(), send()])
    t.strictSame(both.map(r => r.statusCode).sort(), [202, 409], 'one accepted, one refused')
    const first = both.find(r => r.statusCode === 202)?.body as Json
    const refused = both.find(r => r.statusCode === 409)?.body as Json
    t.match(refused.detail, /already used to start \/v1\/authors/, 'the 409 names what the key started')
    t.equal(await jobCount(), before + 1, 'one job written')

    now = new Date(now.getTime() + 59_000)
    t.equal((await send()).statusCode, 409, 'still kept just before it expires')
    t.equal(await jobCount(), before + 1)

    now = new Date(now.getTime() + 2000)
    const again = await send()
    t.equal(again.statusCode, 202, 'expired: the key starts a job again')
    t.not(again.body.id, first.id, 'a new one')
    t.equal(await jobCount(), before + 2)
  })
}

t.test('a job accepted while the database is away: a 503 the client may retry, with or without a key', async t => {
  const real = await databases[0]?.create(t) as Store
  let away = false
  const store = {
    ...real,
    query: async (...args: Parameters<Store['query']>) => {
      if (away && /INSERT INTO "jobs"/.test(args[0])) throw new Unavailable('down')
      return await real.query(...args)
    }
  } as Store
  const app = await build(t, store, { path: false, worker: false })
  const operations = [{ action: 'CREATE', entity: { name: unique('away'), email: 'away@example.com' } }]
  away = true
  for (const key of [null, randomUUID()]) {
    const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async', ...(key === null ? {} : { 'svc-idempotency-key': key }) }, payload: { operations } })
    t.equal(res.statusCode, 503, key === null ? 'no key' : 'a key')
    t.equal(res.headers['retry-after'], '1')
    t.match(json(res), { status: 503, title: 'Service Unavailable', detail: 'The database is unavailable; retry later.' })
  }
})

t.test('more operations than a job takes (here fewer than at once): a 400 stating that maximum', async t => {
  const store = await databases[0]?.create(t) as Store
  const app = await build(t, store, { path: false }, { maxOperations: 5, maxAsyncOperations: 2 })
  const operations = Array.from({ length: 3 }, () => ({ action: 'CREATE', entity: { name: unique('many'), email: 'many@example.com' } }))
  const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, payload: { operations } })
  t.equal(res.statusCode, 400)
  t.match(json(res).detail, /at most 2/)
  t.notMatch(json(res).detail, /respond-async/, 'nothing more to ask for')
})

t.test('a synchronous request over the maximum: its detail names a job, or several when one would take too few', async t => {
  const store = await databases[0]?.create(t) as Store
  const app = await build(t, store, { path: false, worker: false }, { maxOperations: 2, maxAsyncOperations: 5 })
  const table: Array<[number, string]> = [
    [5, 'A bulk request on this endpoint holds at most 2 operations, and this one has 5; split it into several requests, or send it with Prefer: respond-async, which takes up to 5 operations as a job.'],
    [6, 'A bulk request on this endpoint holds at most 2 operations, and this one has 6; split it into several requests, or into jobs of up to 5 operations each, sent with Prefer: respond-async.']
  ]
  for (const [n, detail] of table) {
    const operations = Array.from({ length: n }, () => ({ action: 'CREATE', entity: { name: unique('over'), email: 'over@example.com' } }))
    const res = await app.inject({ method: 'PATCH', url: '/v1/authors', headers: { 'content-type': 'application/json' }, payload: { operations } })
    t.equal(res.statusCode, 400, `${n} operations`)
    t.equal(json(res).detail, detail, `${n} operations`)
  }
})
