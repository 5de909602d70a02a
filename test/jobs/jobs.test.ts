import t from 'tap'
import Fastify from 'fastify'
import fc from 'fast-check'
import { conventions, jobs, problem, problems, query, validation, type Store } from '../../index.js'
import { createFieldMap } from '../../plugins/query/index.js'
import { preferences } from '../../plugins/jobs/prefer.js'
import { quoteIdent, Unavailable } from '../../store/index.js'
import { countStatements, transactionsOf } from '../support/count-statements.js'
import { databases, pglite } from '../support/databases.js'
import { build, eventually, headers, json, token } from './helper.js'

const bearer = (sub: string, scope: string): string => token(sub, scope.split(' '))

t.test('Prefer: the preference names, case-insensitive (RFC 7240)', async t => {
  const table: Array<[string | string[] | undefined, string[]]> = [
    [undefined, []],
    ['respond-async', ['respond-async']],
    ['Respond-Async, wait=10', ['respond-async', 'wait']],
    ['return=minimal; foo="a;b", respond-async', ['return', 'respond-async']],
    // A comma or a name inside a quoted value is the value's: no preference is named there.
    ['foo="a,respond-async,b"', ['foo']],
    ['foo="a\\",respond-async"', ['foo']],
    ['foo="a\\\\", respond-async', ['foo', 'respond-async']],
    ['handling=lenient; x="1,2", respond-async', ['handling', 'respond-async']],
    [['wait=5', 'respond-async'], ['wait', 'respond-async']],
    [' , ;x', []],
    ['"respond-async", res pond', []]
  ]
  for (const [header, names] of table) t.strictSame([...preferences(header)], names, JSON.stringify(header))
})

t.test('Prefer, property: the names of any list of preferences, whatever their quoted values hold', async t => {
  const tchar = fc.constantFrom(...'!#$%&\'*+-.^_`|~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''))
  const token = fc.string({ unit: tchar, minLength: 1, maxLength: 12 })
  // Quoted values with commas, semicolons, equals signs, a preference's name and quoted-pairs in them.
  const quoted = fc.string({ unit: fc.constantFrom(...'ab,;= respond-async'.split(''), '\\"', '\\\\'), maxLength: 10 }).map(v => `"${v}"`)
  const word = fc.oneof(token, quoted)
  const parameter = fc.tuple(token, fc.option(word)).map(([n, v]) => v === null ? n : `${n}=${v}`)
  const preference = fc.tuple(token, fc.option(word), fc.array(parameter, { maxLength: 3 }))
  fc.assert(fc.property(fc.array(preference, { minLength: 1, maxLength: 5 }), fc.constantFrom(',', ', ', ' ,'), (list, comma) => {
    const header = list.map(([name, value, params]) => [value === null ? name : `${name}=${value}`, ...params].join('; ')).join(comma)
    const got = [...preferences(header)].sort()
    const want = [...new Set(list.map(([name]) => name.toLowerCase()))].sort()
    return JSON.stringify(got) === JSON.stringify(want)
  }), { numRuns: 1000 })
  t.pass('1,000 headers')
})

t.test('options that cannot work are refused at registration, naming the option', async t => {
  const store = await pglite.create(t)
  const table: Array<[Record<string, unknown>, RegExp]> = [
    [{ store: null }, /^jobs plugin: store must be a Store/],
    [{ store, path: 'jobs' }, /^jobs plugin: path must be an absolute path/],
    [{ store, worker: 'yes' }, /^jobs plugin: worker must be a boolean/],
    [{ store, leaseMillis: 0 }, /^jobs plugin: leaseMillis must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 0$/],
    [{ store, pollMillis: 1.5 }, /pollMillis must be a positive integer/],
    [{ store, concurrency: -1 }, /concurrency must be a positive integer/],
    [{ store, maxAttempts: '3' }, /maxAttempts must be a positive integer/],
    [{ store, retryMillis: -1 }, /^jobs plugin: retryMillis must be 0 \(at once\) or a positive integer of milliseconds/],
    [{ store, table: 'Jobs' }, /^jobs plugin: table must be a lowercase SQL name/],
    [{ store, readScopes: { things: 'things:read' } }, /^jobs plugin: readScopes must be an object of scope lists/],
    [{ store, retention: 0 }, /^jobs plugin: retention must be a positive integer, got 0/],
    [{ store, purgeInterval: -1 }, /^jobs plugin: purgeInterval must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got -1$/],
    [{ store, purgeInterval: 1.5 }, /purgeInterval must be 0 \(never\) or a positive integer of milliseconds/],
    [{ store, leaseMilis: 5 }, /^jobs plugin: unknown option leaseMilis \(did you mean leaseMillis\?\)/]
  ]
  for (const [opts, message] of table) {
    const app = Fastify()
    await app.register(problem)
    await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
    await t.rejects(async () => { await app.register(jobs, opts as never); await app.ready() }, { message }, JSON.stringify(Object.keys(opts)))
    await app.close()
  }
  // The monitor reads a job in the request's execution context: without the conventions plugin
  // there is none, and every job would be a 404.
  const bare = Fastify()
  await bare.register(problem)
  await bare.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await t.rejects(async () => { await bare.register(jobs, { store, worker: false }); await bare.ready() },
    { message: /^The jobs plugin needs the conventions plugin registered before it: await app\.register\(conventions\) first/ }, 'monitor routes need the conventions plugin')
  await bare.close()
  const app = Fastify()
  await app.register(problem)
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await app.register(jobs, { store, worker: false, path: false })
  t.throws(() => { app.jobs.define('bulk', async () => ({ result: null, completedCount: 0 })) }, /kind must be UPPER_SNAKE_CASE/)
  t.throws(() => { app.jobs.define('BULK', 'no' as never) }, /handler of BULK must be an async function/)
  app.jobs.define('BULK', async () => ({ result: null, completedCount: 0 }))
  t.throws(() => { app.jobs.define('BULK', async () => ({ result: null, completedCount: 0 })) }, /BULK has a handler already/)
  t.equal(app.jobs.monitorPath('x'), null, 'no monitor routes: no monitor path')
  await app.close()
})

// Node takes a longer timer delay as 1 ms: a lease renewed, or a poll made, every millisecond.
t.test('milliseconds that reach a timer: up to 2147483647, the longest a timer waits', async t => {
  const store = await pglite.create(t)
  const rule = 'a positive integer of milliseconds up to 2147483647 (about 24.8 days, the longest a timer waits)'
  const table: Array<[string, string]> = [
    ['leaseMillis', rule],
    ['pollMillis', rule],
    ['purgeInterval', `0 (never) or ${rule}`]
  ]
  for (const [option, wanted] of table) {
    for (const [value, refusal] of [[2147483647, null], [2147483648, `jobs plugin: ${option} must be ${wanted}, got 2147483648`]] as const) {
      const app = Fastify()
      await app.register(problem)
      await app.register(conventions)
      await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
      const ready = async (): Promise<void> => { await app.register(jobs, { store, path: false, [option]: value }); await app.ready() }
      if (refusal === null) await t.resolves(ready, `${option}: ${value}`)
      else await t.rejects(ready, { name: 'TypeError', message: refusal }, `${option}: ${value}`)
      await app.close()
    }
  }
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    let ran = 0
    const app = await build(t, store, { leaseMillis: 60_000 }, {
      ECHO: async (run) => {
        ran++
        const steps = await run.steps()
        await run.transaction(async (tx) => {
          await run.record(tx, [{ step: steps.size, outcome: { ran } }])
          await run.progress(tx, 1)
        })
        return { result: { echo: run.job.input, steps: steps.size + 1 }, completedCount: 1 }
      },
      REFUSE: async () => { throw problems.conflict('The thing cannot be done now.', { instance: '/things/1', context: [{ code: 'THING_BUSY', message: 'is busy' }] }) },
      CRASH: async () => { throw new Error('secret internal detail at /var/db.sql') },
      AWAY: async () => { throw new Unavailable('down') }
    }, (app) => {
      app.post('/things', { config: { auth: { scopes: [] } } }, async (request, reply) => {
        const kind = (request.body as { kind?: string } | undefined)?.kind ?? 'ECHO'
        const job = await store.transaction(async (tx) => await app.jobs.enqueue(tx, {
          ctx: request.executionContext, id: crypto.randomUUID(), kind, collection: 'things', subject: request.principal?.sub ?? '', input: request.body, operationCount: 1, requestId: request.requestId
        }))
        app.jobs.wake()
        return reply.accepted(job)
      })
    })
    const h = (extra: Record<string, string> = {}, sub = 'user-1', scope = 'things:read'): Record<string, string> =>
      ({ ...headers({ 'content-type': 'application/json', ...extra }, sub), authorization: `Bearer ${bearer(sub, scope)}` })
    const start = async (body: Record<string, unknown>, extra: Record<string, string> = {}, sub = 'user-1') => await app.inject({ method: 'POST', url: '/things', headers: h(extra, sub), payload: body })
    const ended = async (id: string, sub = 'user-1', extra: Record<string, string> = {}): Promise<Record<string, any>> => await eventually(async () => {
      const job = json(await app.inject({ url: `/jobs/${id}`, headers: h(extra, sub) }))
      return job.status === 'SUCCEEDED' || job.status === 'FAILED' ? job : null
    })

    t.test('accepted: 202, the monitor in Link, Preference-Applied when asked, the job; it runs on this instance', async t => {
      const res = await start({ n: 1 }, { prefer: 'respond-async', 'x-request-id': 'req-accept-1' })
      t.equal(res.statusCode, 202)
      const job = json(res)
      t.equal(res.headers.link, `</jobs/${job.id as string}>; rel="monitor"`)
      t.equal(res.headers['preference-applied'], 'respond-async')
      t.notOk(res.headers.location, 'Location is for 201 and 3xx')
      t.match(job, { ref: `svc:job::${job.id as string}`, kind: 'ECHO', collection: 'things', status: 'PENDING', operationCount: 1, completedCount: 0, createdBy: 'user-1', completedDateTime: null, result: null, problem: null })
      const done = await ended(job.id)
      t.match(done, { status: 'SUCCEEDED', completedCount: 1, result: { echo: { n: 1 }, steps: 1 }, problem: null })
      t.ok(Date.parse(done.completedDateTime) >= Date.parse(done.createdDateTime))
      const plain = await start({ n: 2 })
      t.notOk(plain.headers['preference-applied'], 'no preference, none applied')
    })

    t.test('a problem thrown by the handler ends the job FAILED with it; any other fault with a 500 naming nothing', async t => {
      const refused = await ended(json(await start({ kind: 'REFUSE' }, { 'x-request-id': 'req-refuse' })).id)
      t.match(refused, { status: 'FAILED', result: null, problem: { title: 'Conflict', status: 409, detail: 'The thing cannot be done now.', instance: '/things/1', requestId: 'req-refuse', context: [{ code: 'THING_BUSY' }] } })
      const crashed = await ended(json(await start({ kind: 'CRASH' })).id)
      t.match(crashed, { status: 'FAILED', problem: { title: 'Internal Server Error', status: 500 } })
      t.notMatch(JSON.stringify(crashed), /secret|var\/db/, 'the fault is logged, never shown')
    })

    t.test('an unavailable database gives the job back to be tried again, up to maxAttempts', async t => {
      const away = await ended(json(await start({ kind: 'AWAY' })).id)
      t.match(away, { status: 'FAILED', problem: { status: 503, title: 'Service Unavailable' } })
      const { rows } = await store.query<{ attempts: number }>('SELECT attempts FROM jobs WHERE id = $1', [away.id])
      t.equal(rows[0]?.attempts, 5, 'claimed maxAttempts times')
    })

    t.test('an unavailable database: the job waits retryMillis before it is claimed again, twice as long each time, at most leaseMillis', async t => {
      // A table of its own: the app above runs AWAY jobs of its table with waits of 5 ms.
      const waiting = await build(t, store, { path: false, table: 'jobs_wait', retryMillis: 60_000, leaseMillis: 100_000, maxAttempts: 3 }, { AWAY: async () => { throw new Unavailable('down') } })
      const id = crypto.randomUUID()
      await store.transaction(async (tx) => await waiting.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'AWAY', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }))
      // The wait, read from the database's own clock: the lease's end less the release's time.
      const given = async (attempts: number): Promise<{ owner: string | null, seconds: number, status: string }> => await eventually(async () => {
        const { rows } = await store.query<{ owner: string | null, seconds: number, status: string, attempts: number }>(
          'SELECT lease_owner AS owner, extract(epoch FROM lease_until - modified_at)::integer AS seconds, status, attempts FROM jobs_wait WHERE id = $1', [id])
        const row = rows[0]
        return row !== undefined && row.attempts === attempts && row.owner === null ? row : null
      })
      waiting.jobs.wake()
      t.match(await given(1), { status: 'RUNNING', seconds: 60 }, 'given back after the first claim, to wait retryMillis')
      t.equal(await waiting.jobs.table.claim(store, ['AWAY'], { owner: 'another', millis: 1000 }), null, 'no claim takes it meanwhile')
      await store.query('UPDATE jobs_wait SET lease_until = now() - interval \'1 second\' WHERE id = $1', [id])
      waiting.jobs.wake()
      t.match(await given(2), { status: 'RUNNING', seconds: 100 }, 'the second wait doubled, cut to leaseMillis')
      await store.query('UPDATE jobs_wait SET lease_until = now() - interval \'1 second\' WHERE id = $1', [id])
      waiting.jobs.wake()
      const failed = await eventually(async () => (await store.query<{ status: string }>('SELECT status FROM jobs_wait WHERE id = $1', [id])).rows[0]?.status === 'FAILED')
      t.ok(failed, 'FAILED at maxAttempts, with no wait after the last')
    })

    t.test('a job whose instance died is taken up again after its lease, and its recorded steps are kept', async t => {
      // A RUNNING job of a dead instance: its lease has run out, one step of its work committed.
      const id = crypto.randomUUID()
      await store.transaction(async (tx) => {
        await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'ECHO', collection: 'things', subject: 'user-1', input: { resumed: true }, operationCount: 1, requestId: null })
        await tx.query("UPDATE jobs SET status = 'RUNNING', lease_owner = 'dead', lease_until = now() - interval '1 second', attempts = 1 WHERE id = $1", [id])
        await tx.query('INSERT INTO jobs_steps (ctx, job_id, step, outcome) VALUES ($1, $2, 0, $3::jsonb)', ['prod', id, '{"before": true}'])
      })
      app.jobs.wake()
      const done = await ended(id)
      t.match(done, { status: 'SUCCEEDED', result: { echo: { resumed: true }, steps: 2 } }, 'the handler saw the step done before')
      const { rows } = await store.query<{ attempts: number, lease_owner: string | null }>('SELECT attempts, lease_owner FROM jobs WHERE id = $1', [id])
      t.strictSame(rows[0], { attempts: 2, lease_owner: null })
    })

    t.test('a job held by a live instance is not taken, and work of a lost lease does not commit', async t => {
      const id = crypto.randomUUID()
      await store.transaction(async (tx) => {
        await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'ECHO', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null })
        await tx.query("UPDATE jobs SET status = 'RUNNING', lease_owner = 'alive', lease_until = now() + interval '1 hour' WHERE id = $1", [id])
      })
      app.jobs.wake()
      const claimed = await app.jobs.table.claim(store, ['ECHO'], { owner: 'other', millis: 1000 })
      t.not(claimed?.id, id, 'not claimable while its lease runs')
      t.equal(await app.jobs.table.hold(store, 'prod', id, 'other', 0), false, 'another owner cannot hold it')
      t.equal(await app.jobs.table.renew(store, 'prod', id, { owner: 'other', millis: 1000 }, 0), false, 'nor renew it')
      const { rows } = await store.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [id])
      t.equal(rows[0]?.status, 'RUNNING')
      await store.query("UPDATE jobs SET status = 'FAILED' WHERE id = $1", [id])
    })

    t.test('the monitor: a job is its creator\'s, in its execution context, with its collection\'s read scope', async t => {
      const job = json(await start({ n: 3 }))
      await ended(job.id)
      const other = await app.inject({ url: `/jobs/${job.id as string}`, headers: h({}, 'user-2') })
      t.equal(other.statusCode, 404, 'another subject')
      t.match(json(other), { title: 'Not Found', instance: `/jobs/${job.id as string}` })
      t.equal((await app.inject({ url: `/jobs/${job.id as string}`, headers: h({ 'svc-execution-context': 'preprod' }) })).statusCode, 404, 'another execution context')
      const noScope = await app.inject({ url: `/jobs/${job.id as string}`, headers: { ...h(), authorization: `Bearer ${bearer('user-1', 'others:read')}` } })
      t.equal(noScope.statusCode, 403, 'without things:read')
      t.match(json(noScope).detail, 'things:read')
      // Conventions, Common errors: a 403's detail names the path.
      t.match(json(noScope).detail, `GET /jobs/${job.id as string}`)
      t.equal((await app.inject({ url: '/jobs/not%20an%20id', headers: h() })).statusCode, 400, 'an id that is none')
    })

    t.test('the monitor sends the result as stored, whatever it holds; the list shows the same job without it', async t => {
      const input = { text: '"result":null', quoted: '\\"result\\":null', nul: '\u0000', lone: '\ud800', emoji: '\u{1F600}', nested: { result: null, problem: { result: 1 } }, list: [1, 'two', null, { a: [] }] }
      const job = json(await start(input))
      await ended(job.id)
      const res = await app.inject({ url: `/jobs/${job.id as string}`, headers: h() })
      t.equal(res.statusCode, 200)
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      const body = json(res)
      t.strictSame(body.result, { echo: input, steps: 1 }, 'the result as the handler returned it')
      const list = await app.inject({ url: '/jobs?limit=100', headers: h() })
      const listed = (json(list).results as Array<Record<string, unknown>>).find(j => j.id === job.id)
      const { result: _result, ...summary } = body
      t.strictSame(listed, summary, 'the list shows a summary: every member but the result (conventions: items are summaries)')
      // The page's ETag is the hash of what is sent: the same again, and a 304 for it.
      const etag = list.headers.etag as string
      t.ok(etag, 'the page has an ETag')
      t.equal((await app.inject({ url: '/jobs?limit=100', headers: h() })).headers.etag, etag, 'the same page, the same ETag')
      t.equal((await app.inject({ url: '/jobs?limit=100', headers: h({ 'if-none-match': etag }) })).statusCode, 304)
      const headOfPage = await app.inject({ method: 'HEAD', url: '/jobs?limit=100', headers: h() })
      t.equal(headOfPage.headers['content-length'], String(Buffer.byteLength(list.body)), 'HEAD of the page: the same length')
      // As read back and parsed by the store.
      const stored = await app.jobs.table.get(store, 'prod', 'user-1', job.id)
      t.strictSame(body.result, stored?.result, 'the result as stored, parsed')
      const fields = createFieldMap([{ path: 'id', type: 'string' }, { path: 'createdDateTime', type: 'date-time', sortable: true }])
      const newest = { filter: null, ordering: [{ field: 'createdDateTime', direction: 'desc' as const }, { field: 'id', direction: 'desc' as const }], paging: { kind: 'cursor' as const, limit: 100 } }
      const page = await app.jobs.table.page(store, newest, fields, { ctx: 'prod', subject: 'user-1', collections: ['things'] })
      const read = page.items.find(j => j.id === job.id)
      t.equal(read?.status, 'SUCCEEDED', 'a page of the store reads it')
      t.notOk(read !== undefined && 'result' in read, 'without its result, not read from the table')
      const head = await app.inject({ method: 'HEAD', url: `/jobs/${job.id as string}`, headers: h() })
      t.equal(head.statusCode, 200)
      t.equal(head.headers['content-length'], String(Buffer.byteLength(res.body)), 'HEAD: the same length')
    })

    t.test('the list: the caller\'s jobs, newest first, by status, cursor paging; 403 without any read scope', async t => {
      const sub = `lister-${db.kind}`
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push(json(await start({ i }, {}, sub)).id)
      for (const id of ids) await ended(id, sub)
      await ended(json(await start({ kind: 'REFUSE' }, {}, sub)).id, sub)
      const first = json(await app.inject({ url: '/jobs?limit=2', headers: h({}, sub) }))
      t.equal(first.results.length, 2)
      t.equal(first.results[0].status, 'FAILED', 'newest first')
      const next = json(await app.inject({ url: first.paging.next.url.replace(/^http:\/\/[^/]+/, ''), headers: h({}, sub) }))
      t.strictSame(next.results.map((j: any) => j.id), [ids[1], ids[0]])
      t.equal(next.paging.next, null)
      const succeeded = json(await app.inject({ url: '/jobs?status=SUCCEEDED', headers: h({}, sub) }))
      t.strictSame(succeeded.results.map((j: any) => j.id).sort(), [...ids].sort())
      t.strictSame(json(await app.inject({ url: '/jobs', headers: h({}, sub, 'others:read') })).results, [], 'none of the collections it may read')
      const none = await app.inject({ url: '/jobs', headers: h({}, sub, 'nothing:read') })
      t.equal(none.statusCode, 403)
      t.match(json(none).detail, /things:read or others:read/)
      t.match(json(none).detail, 'GET /jobs', 'the detail names the path')
      t.equal((await app.inject({ url: '/jobs?offset=0', headers: h({}, sub) })).statusCode, 400, 'cursor paging only')
    })

    t.test('stopping gives a running job back at once', async t => {
      let release: () => void = () => {}
      const started = new Promise<void>((resolve) => { release = resolve })
      const slow = await build(t, store, { leaseMillis: 60_000, path: false }, {
        SLOW: async (run) => {
          release()
          await new Promise((resolve) => setTimeout(resolve, 200))
          await run.transaction(async () => {})
          return { result: {}, completedCount: 0 }
        }
      })
      const id = crypto.randomUUID()
      await store.transaction(async (tx) => { await slow.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'SLOW', collection: 'things', subject: '', input: {}, operationCount: 0, requestId: null }) })
      slow.jobs.wake()
      await started
      await slow.close()
      const { rows } = await store.query<{ status: string, lease_owner: string | null }>('SELECT status, lease_owner FROM jobs WHERE id = $1', [id])
      t.strictSame(rows[0], { status: 'RUNNING', lease_owner: null }, 'RUNNING, held by no one: the next instance takes it at once')
    })
  })
}

t.test('a database that fails under a running job and under the monitor: 503s, the job left to be taken up again', async t => {
  const real = await pglite.create(t)
  let broken = false
  let refused = 0
  /** The job's end, refused: the statement that records it. */
  let refusedEnds = 0
  const fail = async (): Promise<never> => {
    refused++
    throw new Unavailable('The database is unavailable.')
  }
  // The store as the plugin sees it, failing every statement while `broken`.
  const store = {
    kind: real.kind,
    location: real.location,
    query: async (text: string, params?: unknown[]) => {
      if (!broken) return await real.query(text, params)
      if (/SET status = 'FAILED'/.test(text)) refusedEnds++
      return await fail()
    },
    transaction: async (fn: Parameters<Store['transaction']>[0]) => broken ? await fail() : await real.transaction(fn),
    ready: async () => { await real.ready() },
    listen: real.listen,
    close: async () => {}
  } as unknown as Store
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const app = await build(t, store, { leaseMillis: 30, pollMillis: 10_000 }, {
    STALL: async () => {
      broken = true
      await held
      throw new Error('the work failed while the database was away')
    }
  })
  const id = crypto.randomUUID()
  await real.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'STALL', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  app.jobs.wake()
  await eventually(async () => broken)
  const h = { ...headers({}, 'user-1'), authorization: `Bearer ${bearer('user-1', 'things:read')}` }
  const one = await app.inject({ url: `/jobs/${id}`, headers: h })
  t.equal(one.statusCode, 503, 'the monitor of a job')
  t.equal(json(one).title, 'Service Unavailable')
  t.equal((await app.inject({ url: '/jobs', headers: h })).statusCode, 503, 'the list')
  // Renewals of the lease fail meanwhile (every leaseMillis / 3).
  const before = refused
  await eventually(async () => refused >= before + 3)
  release()
  // Recording the job's end fails too: nothing is written, the lease runs out.
  await eventually(async () => refusedEnds > 0)
  broken = false
  const row = await app.jobs.table.get(real, 'prod', 'user-1', id)
  t.equal(row?.status, 'RUNNING', 'still RUNNING, under a lease that runs out: another run takes it up')
})

t.test('a renewal of the lease that waits (behind the job\'s own transaction, on the embedded store) is not sent again meanwhile', async t => {
  const store = await pglite.create(t)
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let finish: () => void = () => {}
  const finished = new Promise<void>((resolve) => { finish = resolve })
  const app = await build(t, store, { leaseMillis: 30, pollMillis: 10_000 }, {
    // One long transaction, as an ATOMIC bulk is.
    LONG: async (run) => {
      await run.transaction(async () => { await finished })
      return { result: null, completedCount: 1 }
    }
  })
  // A renewal waits for the job's transaction on the embedded store (one connection), and on a
  // server for its last statement to its end; here it waits for the gate.
  let sent = 0
  let waiting = 0
  let most = 0
  app.jobs.table.renew = async () => {
    sent++
    most = Math.max(most, ++waiting)
    await gate
    waiting--
    return true
  }
  const id = crypto.randomUUID()
  await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'LONG', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  app.jobs.wake()
  await eventually(async () => sent > 0)
  // Ten renewal periods: timers of one duration fire in the order they were set, so each tick
  // of this one comes after a tick of the runner's renewal timer (leaseMillis / 3), set before it.
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 10)
  t.teardown(() => { clearInterval(timer) })
  await eventually(async () => ticks >= 10)
  t.equal(most, 1, `one renewal waiting at a time (${sent} sent)`)
  open()
  t.ok(await eventually(async () => sent > 1), 'renewed again once the one waiting answered')
  finish()
  t.ok(await eventually(async () => (await app.jobs.table.get(store, 'prod', 'user-1', id))?.status === 'SUCCEEDED'), 'the job ends as it would have')
})

t.test('a renewal that finds the job held by another instance ends the run: nothing more of it commits', async t => {
  const store = await pglite.create(t)
  let committed = false
  let renewals = 0
  const app = await build(t, store, { leaseMillis: 30, pollMillis: 10_000 }, {
    LOSE: async (run) => {
      // The second renewal is sent once the first has answered that the job is not held any more.
      await eventually(async () => renewals >= 2)
      await run.transaction(async () => { committed = true })
      return { result: null, completedCount: 1 }
    }
  })
  app.jobs.table.renew = async (_db, _ctx, jobId) => {
    renewals++
    // Another instance holds the job now, for long: this one cannot claim it again either, once its
    // run has ended (which on a slow machine could come before the app closes).
    await store.query(`UPDATE ${quoteIdent(app.jobs.table.table)} SET lease_owner = 'another-instance', lease_until = now() + interval '1 hour' WHERE id = $1`, [jobId])
    return false
  }
  const id = crypto.randomUUID()
  await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'LOSE', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  app.jobs.wake()
  await eventually(async () => renewals >= 2)
  await app.close()
  t.notOk(committed, 'the work after the lease was lost does not run')
  t.equal((await app.jobs.table.get(store, 'prod', 'user-1', id))?.status, 'RUNNING', 'left to the instance that holds it')
})

t.test('a run whose job another instance took before its end, with no renewal between: the end is not written', async t => {
  const store = await pglite.create(t)
  let returned = false
  const app = await build(t, store, { pollMillis: 10_000 }, {
    TAKEN: async (run) => {
      // Another instance's claim, straight to the table, before the lease would be renewed.
      await store.query(`UPDATE ${quoteIdent(app.jobs.table.table)} SET lease_owner = 'another-instance', attempts = attempts + 1, lease_until = now() + interval '1 hour' WHERE id = $1`, [run.job.id])
      returned = true
      return { result: 'not mine to write', completedCount: 1 }
    }
  })
  const id = crypto.randomUUID()
  await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'TAKEN', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  const sql = countStatements(store)
  t.teardown(() => { sql.restore() })
  app.jobs.wake()
  await eventually(async () => returned && sql.texts().some(text => /SET status = 'SUCCEEDED'/.test(text)))
  const job = await app.jobs.table.get(store, 'prod', 'user-1', id)
  t.match(job, { status: 'RUNNING', result: null }, 'left to the instance that holds it, its result not written')
})

t.test('ended jobs go after their retention, with their steps; open ones stay', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store, { retention: 1, purgeInterval: 20 }, {
    ECHO: async (run) => {
      await run.transaction(async (tx) => { await run.record(tx, [{ step: 0, outcome: 'done' }]) })
      return { result: 'done', completedCount: 1 }
    }
  })
  const ended = crypto.randomUUID()
  const open = crypto.randomUUID()
  await store.transaction(async (tx) => {
    await app.jobs.enqueue(tx, { ctx: 'prod', id: ended, kind: 'ECHO', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null })
    // A kind no handler of this instance runs: it stays PENDING.
    await app.jobs.enqueue(tx, { ctx: 'prod', id: open, kind: 'ELSEWHERE', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null })
  })
  app.jobs.wake()
  await eventually(async () => (await app.jobs.table.get(store, 'prod', 'user-1', ended)) === null)
  t.strictSame([...(await app.jobs.table.stepsOf(store, 'prod', ended)).keys()], [], 'its steps too')
  t.equal((await app.jobs.table.get(store, 'prod', 'user-1', open))?.status, 'PENDING', 'an open job stays, however old')
  t.strictSame(await app.jobs.table.purge(store, new Date(Date.now() + 365 * 24 * 3600 * 1000)), { deleted: 0, skipped: false }, 'nothing else to delete, even a year on')
})

t.test('a handler that ends its job in its last transaction (run.finish): the end commits with the work, written once', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store, {}, {
    // The end in the transaction of the work, beside a step: the handler's return is not written.
    ENDS: async (run) => {
      await run.transaction(async (tx) => {
        await run.record(tx, [{ step: 0, outcome: 'work' }])
        await run.finish(tx, 'ended with the work', 7)
      })
      return { result: 'returned', completedCount: 1 }
    },
    // An end in a transaction that rolled back did not happen: the runner writes the return.
    UNDONE: async (run) => {
      await run.transaction(async (tx) => {
        await run.finish(tx, 'rolled back', 7)
        throw new Error('undo')
      }).catch(() => {})
      return { result: 'returned', completedCount: 1 }
    },
    PLAIN: async () => ({ result: 'returned', completedCount: 1 })
  })
  // For each kind: the job's end, its steps, the transactions that ended it (whether each
  // committed, whether it holds the step), the runner's own ends (one statement each, outside
  // any transaction, under the job's lease), and how many transactions held the job: none
  // after the one that ended it. A transaction's statements that check the claim: the step's
  // record and the end, each its own check, and no lock of the job besides.
  const cases = [
    { kind: 'ENDS', result: 'ended with the work', completedCount: 7, steps: 1, ends: [{ committed: true, withStep: true }], alone: 0, held: 1 },
    { kind: 'UNDONE', result: 'returned', completedCount: 1, steps: 0, ends: [{ committed: false, withStep: false }], alone: 1, held: 1 },
    { kind: 'PLAIN', result: 'returned', completedCount: 1, steps: 0, ends: [], alone: 1, held: 0 }
  ]
  /** Whether a statement applies only under the run's claim of the job. */
  const underLease = (text: string): boolean => /lease_owner = \$\d+ AND attempts = \$\d+ AND status = 'RUNNING'/.test(text)
  /** The statements among `texts` sent outside any transaction. */
  const outside = (texts: readonly string[]): string[] => {
    let open = false
    return texts.filter(text => {
      if (/^BEGIN\b/.test(text)) open = true
      else if (open && (text === 'COMMIT' || text === 'ROLLBACK')) open = false
      else return !open
      return false
    })
  }
  for (const c of cases) {
    const id = crypto.randomUUID()
    await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: c.kind, collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
    const sql = countStatements(store)
    app.jobs.wake()
    const job = await eventually(async () => {
      const row = await app.jobs.table.get(store, 'prod', 'user-1', id)
      return row?.status === 'SUCCEEDED' ? row : null
    })
    sql.restore()
    t.match(job, { result: c.result, completedCount: c.completedCount }, `${c.kind}: the job's end`)
    t.equal((await app.jobs.table.stepsOf(store, 'prod', id)).size, c.steps, `${c.kind}: its steps`)
    const transactions = transactionsOf(sql.texts())
    const ending = transactions.filter(x => x.statements.some(text => /SET status = 'SUCCEEDED'/.test(text)))
    t.strictSame(ending.map(x => ({ committed: x.committed, withStep: x.statements.some(text => /INSERT INTO "jobs_steps"/.test(text)) })), c.ends, `${c.kind}: the transactions that ended it`)
    const alone = outside(sql.texts()).filter(text => /SET status = 'SUCCEEDED'/.test(text))
    t.equal(alone.length, c.alone, `${c.kind}: the runner's own ends`)
    t.ok(alone.every(underLease), `${c.kind}: each under the job's lease`, { alone })
    const holding = transactions.filter(x => x.statements.some(underLease))
    t.equal(holding.length, c.held, `${c.kind}: the transactions that held the job`)
    t.strictSame(holding.map(x => x.statements.length), c.ends.map(e => e.withStep ? 2 : 1), `${c.kind}: each of them its work's statements, the claim checked by them`, { holding })
    t.notOk(sql.texts().some(text => /^SELECT 1 AS held/.test(text)), `${c.kind}: no lock of the job of its own`)
  }
})

t.test('a purge that fails is tried again later', async t => {
  const real = await pglite.create(t)
  let attempts = 0
  const store = {
    kind: real.kind,
    location: real.location,
    query: async (text: string, params?: unknown[]) => await real.query(text, params),
    transaction: async (fn: Parameters<Store['transaction']>[0]) => {
      // Migrations first; then every purge fails.
      if (!purging) return await real.transaction(fn)
      attempts++
      throw new Unavailable('The database is unavailable.')
    },
    ready: async () => { await real.ready() },
    listen: real.listen,
    close: async () => {}
  } as unknown as Store
  let purging = false
  await build(t, store, { worker: false, purgeInterval: 20 }, {}, () => { purging = true })
  await eventually(async () => attempts >= 2)
  t.ok(attempts >= 2, 'again, on the next tick')
})

t.test('a job of a collection the read scopes do not name is not read by its id either (403), as the list leaves it out', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store, { worker: false }, {}, (app) => {
    app.post('/reports', { config: { auth: { scopes: [] } } }, async (request, reply) => {
      const job = await store.transaction(async (tx) => await app.jobs.enqueue(tx, {
        ctx: request.executionContext, id: crypto.randomUUID(), kind: 'REPORT', collection: 'reports', subject: request.principal?.sub ?? '', input: {}, operationCount: 1, requestId: request.requestId
      }))
      return reply.accepted(job)
    })
  })
  const h = { ...headers({ 'content-type': 'application/json' }, 'user-1'), authorization: `Bearer ${bearer('user-1', 'things:read others:read')}` }
  const job = json(await app.inject({ method: 'POST', url: '/reports', headers: h, payload: {} }))
  t.match(job, { collection: 'reports', createdBy: 'user-1' })
  const read = await app.inject({ url: `/jobs/${job.id as string}`, headers: h })
  t.equal(read.statusCode, 403)
  t.match(json(read), { status: 403, instance: `/jobs/${job.id as string}`, detail: `No read scopes are set for reports (the jobs plugin's readScopes, or its resource's), so GET /jobs/${job.id as string}, a job on reports, cannot be read.` })
  t.strictSame(json(await app.inject({ url: '/jobs', headers: h })).results, [], 'the list leaves it out')
})

t.test('without the auth plugin a job has no subject, and a collection whose read scopes are none shows it', async t => {
  const store = await pglite.create(t)
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await app.register(jobs, { store, worker: false, readScopes: { things: [] } })
  app.post('/things', async (request, reply) => {
    const job = await store.transaction(async (tx) => await app.jobs.enqueue(tx, {
      ctx: request.executionContext, id: crypto.randomUUID(), kind: 'ECHO', collection: 'things', subject: '', input: {}, operationCount: 1, requestId: request.requestId
    }))
    return reply.accepted(job)
  })
  t.teardown(() => app.close())
  const job = (await app.inject({ method: 'POST', url: '/things' })).json()
  const read = await app.inject({ url: `/jobs/${job.id as string}` })
  t.equal(read.statusCode, 200)
  t.match(read.json(), { id: job.id, collection: 'things', createdBy: null })
  t.strictSame((await app.inject({ url: '/jobs' })).json().results.map((j: { id: string }) => j.id), [job.id])
})

t.test('without readScopes and without the resource plugin no collection\'s jobs can be read', async t => {
  const store = await pglite.create(t)
  const app = await build(t, store, { readScopes: undefined, worker: false })
  const res = await app.inject({ url: '/jobs', headers: { ...headers({}, 'user-1'), authorization: `Bearer ${bearer('user-1', 'things:read')}` } })
  t.equal(res.statusCode, 403)
  t.match(json(res).detail, /grants none of the scopes that GET \/jobs requires/)
})
