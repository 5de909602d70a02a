import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import Fastify from 'fastify'
import idempotency, { claimed, fingerprintOf, replayStatus, type IdempotencyClaim } from '../../plugins/idempotency/index.js'
import { IdempotencyKeys } from '../../store/idempotency-keys.js'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import queryPlugin from '../../plugins/query/index.js'
import resource from '../../plugins/resource/index.js'
import bulk from '../../plugins/bulk/index.js'
import { defineResource } from '../../plugins/resource/define.js'
import { databases, pglite } from '../support/databases.js'
import { CURSOR_SECRET, build, client, idemKey, json, token, unique } from '../resource/helper.js'

function thrown (fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

const notes = defineResource({ name: 'note', collection: 'notes', path: '/v1/notes', idParam: 'noteId', fields: { title: Type.String({ minLength: 1, maxLength: 50 }) } })

/** A clock the test moves: keys expire by it, not by the time the machine takes. */
class Clock {
  private at = Date.parse('2030-01-01T00:00:00.000Z')
  readonly now = (): Date => new Date(this.at)
  advance (ms: number): void { this.at += ms }
}

function claimOf (over: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return { ctx: 'prod', caller: 'u1', resource: 'documents', key: idemKey(), method: 'PUT', target: '/v1/documents/1', fingerprint: 'f', instance: '/v1/documents/1', status: 204, ...over }
}

t.test('replayStatus: 2xx for a retried idempotent request, 409 otherwise', async t => {
  const first = claimOf()
  t.equal(replayStatus(first, { ...first }), 204)
  const table: Array<[string, Partial<IdempotencyClaim>, string]> = [
    ['another method', { method: 'PATCH' }, 'already used for PUT /v1/documents/1'],
    ['another path', { target: '/v1/documents/2' }, 'already used for PUT /v1/documents/1'],
    ['another body', { fingerprint: 'g' }, 'another body']
  ]
  for (const [name, change, detail] of table) {
    t.match(thrown(() => replayStatus(first, { ...first, ...change })), { statusCode: 409, instance: '/v1/documents/1', detail: new RegExp(detail) }, name)
  }
  const post = claimOf({ method: 'POST', target: '/v1/documents', instance: '/v1/documents/9', status: 201 })
  t.match(thrown(() => replayStatus(post, { ...post })), { statusCode: 409, instance: '/v1/documents/9', detail: /already used to create \/v1\/documents\/9/ })
  // An action made nothing: its 409 names the request and the entity it changed.
  const action = claimOf({ method: 'POST', target: '/v1/documents/9/archive', instance: '/v1/documents/9', status: 200 })
  t.match(thrown(() => replayStatus(action, { ...action })), { statusCode: 409, instance: '/v1/documents/9', detail: 'The Svc-Idempotency-Key was already used for POST /v1/documents/9/archive; GET /v1/documents/9 to see what it did instead of sending it again.' })
})

t.test('fingerprintOf: equal JSON, equal fingerprint', async t => {
  t.equal(fingerprintOf({ a: 1 }), fingerprintOf({ a: 1 }))
  t.not(fingerprintOf({ a: 1 }), fingerprintOf({ a: 2 }))
  t.equal(fingerprintOf({ a: 1, b: { c: [1, { e: 2, d: 3 }], 10: 0, 9: 1 } }), fingerprintOf({ b: { 9: 1, c: [1, { d: 3, e: 2 }], 10: 0 }, a: 1 }), 'the order of object members does not count')
  t.not(fingerprintOf({ a: [1, 2] }), fingerprintOf({ a: [2, 1] }), 'the order of array items does')
  t.not(fingerprintOf({ a: { b: 1 } }), fingerprintOf({ a: { b: 1, c: null } }), 'a null member is a member')
  t.equal(fingerprintOf(undefined), fingerprintOf(undefined))
  t.not(fingerprintOf(undefined), fingerprintOf(null))
})

t.test('option validation names the option', async t => {
  const store = await pglite.create(t)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /store must be a Store/],
    [{ store, ttl: 0 }, /ttl must be a positive integer/],
    [{ store, ttl: 1.5 }, /ttl must be/],
    [{ store, purgeInterval: -1 }, /purgeInterval must be 0 \(never\) or a positive integer of milliseconds/],
    // Node takes a longer timer delay as 1 ms: the purge would run every millisecond.
    [{ store, purgeInterval: 2147483648 }, /^idempotency plugin: purgeInterval must be 0 \(never\) or a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ store, ttl: 0 }, /^idempotency plugin: ttl must be a positive integer of milliseconds, got 0$/],
    [{ store, now: 5 }, /^idempotency plugin: now must be a function returning a Date, got 5$/],
    [{ store, table: 'Bad-Name' }, /table must be a lowercase SQL name/],
    [{ store, ttL: 5 }, /^idempotency plugin: unknown option ttL \(did you mean ttl\?\); the options are store, ttl, purgeInterval, table, now$/]
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(idempotency, opts as never); await app.ready() }, { name: 'TypeError', message }, JSON.stringify(Object.keys(opts)))
  }
  // The longest a timer waits is taken; the ttl, only added to timestamps, has no such bound.
  for (const opts of [{ purgeInterval: 2147483647 }, { ttl: 2147483648 * 10 }]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.resolves(async () => { await app.register(idempotency, { store, ...opts }); await app.ready() }, JSON.stringify(opts))
  }
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('claim: the first claim wins, a live key returns the first record, an expired key is taken over', async t => {
      const clock = new Clock()
      const keys = new IdempotencyKeys('idem_direct', 100, { now: clock.now })
      for (const m of keys.migrations()) await store.exec(m.sql as string)
      const claim = claimOf()
      t.equal(await store.transaction(tx => keys.claim(tx, claim)), null)
      t.strictSame(await keys.claim(store, { ...claim, target: '/other' }), { method: 'PUT', target: '/v1/documents/1', fingerprint: 'f', instance: '/v1/documents/1', status: 204, etag: null })
      t.equal(await keys.claim(store, claimOf({ key: 'with-an-etag-000000000', etag: '"e1"' })), null)
      t.equal((await keys.claim(store, claimOf({ key: 'with-an-etag-000000000' })))?.etag, '"e1"', 'the first answer\'s ETag is kept')
      t.equal(await keys.claim(store, { ...claim, ctx: 'preprod' }), null, 'keys are scoped by execution context')
      t.equal(await keys.claim(store, { ...claim, resource: 'authors' }), null, 'and by resource')
      t.equal(await keys.claim(store, { ...claim, caller: 'u2' }), null, 'and by caller')
      await t.rejects(store.transaction(async tx => {
        t.equal(await keys.claim(tx, claimOf({ key: 'rolled-back-key-0000000' })), null)
        throw new Error('the change failed')
      }))
      t.equal(await keys.claim(store, claimOf({ key: 'rolled-back-key-0000000' })), null, 'a rolled back claim leaves the key free')
      clock.advance(99)
      t.ok(await keys.claim(store, { ...claim, target: '/new' }), 'live until its ttl has passed')
      t.strictSame(await keys.purge(store), { deleted: 0, skipped: false }, 'and not purged')
      clock.advance(1)
      t.equal(await keys.claim(store, { ...claim, target: '/new' }), null, 'expired: taken over')
      t.equal((await keys.claim(store, claim))?.target, '/new')
      clock.advance(100)
      t.strictSame(await keys.purge(store), { deleted: 6, skipped: false }, 'expired rows are purged')
      t.strictSame(await keys.purge(store), { deleted: 0, skipped: false })
    })

    t.test('claimed: a change and its key in one transaction; a retry gets the first answer, or the refusal asked for', async t => {
      const keys = new IdempotencyKeys('idem_claimed', 60_000)
      for (const m of keys.migrations()) await store.exec(m.sql as string)
      const claim = claimOf({ etag: '"first"' })
      let runs = 0
      const change = async (): Promise<string> => { runs++; return 'changed' }
      t.strictSame(await claimed(store, keys, claim, change), { value: 'changed' }, 'the first request makes the change')
      t.strictSame(await claimed(store, keys, { ...claim, etag: '"second"' }, change), { replay: 204, etag: '"first"' }, 'a retry: the first answer\'s status and ETag')
      const refused = await claimed(store, keys, claim, change, () => 'not run twice').catch((err: unknown) => err)
      t.match(refused, { statusCode: 409, detail: 'not run twice' }, 'or the refusal asked for')
      t.strictSame(await claimed(store, keys, null, change), { value: 'changed' }, 'no key: the change alone')
      t.equal(runs, 2, 'changed by the first request and the one without a key alone')
    })

    t.test('purge: in batches, and by one instance at a time', async t => {
      const clock = new Clock()
      const keys = new IdempotencyKeys('idem_batches', 10, { now: clock.now, purgeBatchSize: 3 })
      for (const m of keys.migrations()) await store.exec(m.sql as string)
      for (let i = 0; i < 8; i++) await keys.claim(store, claimOf())
      clock.advance(10)
      if (db.sibling !== undefined) {
        // Another instance purging the table holds its lock: this one skips it.
        const other = await db.sibling(t, store)
        let release: () => void = () => {}
        const held = new Promise<void>((resolve) => { release = resolve })
        let locked: () => void = () => {}
        const taken = new Promise<void>((resolve) => { locked = resolve })
        const holder = other.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock(1398166528, hashtext(coalesce(current_schema(), '') || '.' || 'idem_batches'))")
          locked()
          await held
        })
        await taken
        t.strictSame(await keys.purge(store), { deleted: 0, skipped: true }, 'skipped while another instance purges')
        release()
        await holder
      }
      t.strictSame(await keys.purge(store), { deleted: 8, skipped: false }, 'eight rows in batches of three')
      t.equal((await store.query<{ n: number }>('SELECT count(*)::int AS n FROM idem_batches')).rows[0]?.n, 0)
    })

    t.test('the plugin purges expired keys on a timer', async t => {
      const clock = new Clock()
      const app = Fastify()
      await app.register(idempotency, { store, ttl: 20, purgeInterval: 30, table: 'idem_timer', now: clock.now })
      await app.ready()
      t.teardown(() => app.close())
      await app.idempotency.claim(store, claimOf())
      const rows = async (): Promise<number> => (await store.query('SELECT count(*)::int AS n FROM idem_timer')).rows[0]?.n as number
      t.equal(await rows(), 1)
      clock.advance(20)
      // However slow the machine, the timer comes round: only the bound on waiting is generous.
      for (let i = 0; i < 500 && await rows() > 0; i++) await sleep(20)
      t.equal(await rows(), 0, 'purged without any request')
    })

    t.test('a failing purge is logged, not thrown', async t => {
      const warnings: unknown[] = []
      const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(JSON.parse(line)) } } } })
      await app.register(idempotency, { store, ttl: 10, purgeInterval: 10, table: 'idem_dropped' })
      await app.ready()
      t.teardown(() => app.close())
      await store.exec('DROP TABLE idem_dropped')
      for (let i = 0; i < 500 && warnings.length === 0; i++) await sleep(10)
      t.match(warnings[0], { msg: /purging expired keys failed/ })
    })

    t.test('purgeInterval 0: no timer', async t => {
      const app = Fastify()
      await app.register(idempotency, { store, purgeInterval: 0, table: 'idem_manual' })
      await app.ready()
      await app.close()
      t.equal(app.idempotency.ttl, 24 * 60 * 60 * 1000, 'default ttl 24 h')
    })

    t.test('over HTTP', async t => {
      const app = await build(t, store)
      const api = client(app)
      const a = json(await api.post('/v1/authors', { name: 'Ann', email: 'ann@example.com' }))

      t.test('a repeated POST: 409 naming the first resource, nothing created twice', async t => {
        const key = idemKey()
        const body = { name: unique(), authorId: a.id, kind: 'INVOICE' }
        const first = await api.post('/v1/documents', body, { 'svc-idempotency-key': key })
        t.equal(first.statusCode, 201)
        const again = await api.post('/v1/documents', body, { 'svc-idempotency-key': `"${key}"` })
        t.equal(again.statusCode, 409)
        t.equal(json(again).instance, first.headers.location)
        t.match(json(again).detail, 'already used to create')
        const other = await api.post('/v1/documents', { ...body, name: unique() }, { 'svc-idempotency-key': key })
        t.equal(other.statusCode, 409, 'another body with a used key')
        t.equal(json(other).instance, first.headers.location)
        const pre = await api.post('/v1/documents', { ...body, name: unique() }, { 'svc-idempotency-key': key, 'svc-execution-context': 'preprod' })
        t.equal(pre.statusCode, 409, 'the author is not in preprod: the key is free there, the reference is not')
        t.equal(json(pre).context[0].code, 'REFERENCE_NOT_FOUND')
      })

      t.test('a key is the caller\'s own: another caller\'s same key is a new request, and learns nothing', async t => {
        const key = idemKey()
        const body = { name: unique(), authorId: a.id, kind: 'INVOICE' }
        const first = await api.post('/v1/documents', body, { 'svc-idempotency-key': key })
        t.equal(first.statusCode, 201)
        const other = client(app, { authorization: `Bearer ${token('user-2')}` })
        const theirs = await other.post('/v1/documents', { ...body, name: unique() }, { 'svc-idempotency-key': key })
        t.equal(theirs.statusCode, 201, 'created: not a 409 naming the first caller\'s document')
        t.not(theirs.headers.location, first.headers.location)
        const replay = await other.post('/v1/documents', { ...body, name: unique() }, { 'svc-idempotency-key': key })
        t.equal(replay.statusCode, 409, 'the second caller\'s own replay is still caught')
        t.equal(json(replay).instance, theirs.headers.location)
      })

      t.test('the same JSON with its members in another order is the same body', async t => {
        const key = idemKey()
        const first = await api.put('/v1/authors/idem-order', { name: 'Ord', email: 'ord@example.com' }, { 'svc-idempotency-key': key })
        t.equal(first.statusCode, 204)
        const again = await api.put('/v1/authors/idem-order', '{"email":"ord@example.com","name":"Ord"}', { 'svc-idempotency-key': key })
        t.equal(again.statusCode, 204, 'a retried PUT: 2xx, not 409 "another body"')
      })

      t.test('a failed POST does not keep its key', async t => {
        const key = idemKey()
        const bad = await api.post('/v1/documents', { name: unique(), authorId: 'nobody', kind: 'INVOICE' }, { 'svc-idempotency-key': key })
        t.equal(bad.statusCode, 409)
        const good = await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })
        t.equal(good.statusCode, 201)
      })

      t.test('PUT, PATCH and DELETE replays answer 2xx without applying twice', async t => {
        const d = json(await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }))
        const url = `/v1/documents/${d.id as string}`
        const putKey = idemKey()
        const putBody = { name: d.name, authorId: a.id, kind: 'CONTRACT' }
        const put = await api.put(url, putBody, { 'if-match': d.etag, 'svc-idempotency-key': putKey })
        t.equal(put.statusCode, 204)
        const afterPut = json(await api.get(url))
        t.equal(put.headers.etag, afterPut.etag, 'the new ETag')
        const putAgain = await api.put(url, putBody, { 'if-match': d.etag, 'svc-idempotency-key': putKey })
        t.equal(putAgain.statusCode, 204, 'replayed although the If-Match is now stale')
        t.equal(putAgain.headers.etag, afterPut.etag, 'with the first answer\'s ETag')
        await store.query('UPDATE idempotency_keys SET etag = NULL WHERE key = $1', [putKey])
        const kept = await api.put(url, putBody, { 'if-match': d.etag, 'svc-idempotency-key': putKey })
        t.equal(kept.statusCode, 204, 'a key kept before keys held their answer\'s ETag')
        t.equal(kept.headers.etag, undefined, 'answers without one')
        t.equal(json(await api.get(url)).etag, afterPut.etag, 'not applied again')

        const patchKey = idemKey()
        t.equal((await api.patch(url, { pageCount: 1 }, { 'if-match': afterPut.etag, 'svc-idempotency-key': patchKey })).statusCode, 204)
        const afterPatch = json(await api.get(url))
        // Changed by another request meanwhile: the retry still answers with its own write's ETag.
        const other = await api.patch(url, { pageCount: 2 }, { 'if-match': afterPatch.etag })
        t.equal(other.statusCode, 204)
        const patchAgain = await api.patch(url, { pageCount: 1 }, { 'if-match': afterPut.etag, 'svc-idempotency-key': patchKey })
        t.equal(patchAgain.statusCode, 204)
        t.equal(patchAgain.headers.etag, afterPatch.etag, 'the ETag its first answer gave, so a write on it is refused 412, not lost')
        t.equal(json(await api.get(url)).etag, other.headers.etag, 'not applied again')
        const elsewhere = await api.patch(`/v1/documents/${unique('x')}`, { pageCount: 1 }, { 'if-match': '*', 'svc-idempotency-key': patchKey })
        t.equal(elsewhere.statusCode, 409, 'a key reused on another resource')
        t.equal(json(elsewhere).instance, url)

        const deleteKey = idemKey()
        const current = other.headers.etag as string
        t.equal((await api.delete(url, { 'if-match': current, 'svc-idempotency-key': deleteKey })).statusCode, 204)
        const deleteAgain = await api.delete(url, { 'if-match': current, 'svc-idempotency-key': deleteKey })
        t.equal(deleteAgain.statusCode, 204)
        t.equal(deleteAgain.headers.etag, undefined, 'a DELETE answers no ETag, nor does its retry')
        // Documents are soft-deleted: the deletion shows, made once.
        const deleted = json(await api.get(url))
        t.match(deleted, { deletedDateTime: String })
        t.not(deleted.etag, current)
      })

      t.test('a DELETE that finds nothing to do keeps its key: its retry is answered as it was, once the entity is back too', async t => {
        const d = json(await api.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }))
        const url = `/v1/documents/${d.id as string}`
        t.equal((await api.delete(url, { 'if-match': d.etag })).statusCode, 204)
        // The ETag weakened on its way back (a proxy that compressed the answer): the entity is
        // read to decide, and deleting it again changes nothing, whatever its conditions.
        const key = idemKey()
        const weak = `W/${d.etag as string}`
        t.equal((await api.delete(url, { 'if-match': weak, 'svc-idempotency-key': key })).statusCode, 204)
        const restored = await api.post(`${url}/restore`, {})
        t.equal(restored.statusCode, 200)
        const again = await api.delete(url, { 'if-match': weak, 'svc-idempotency-key': key })
        t.equal(again.statusCode, 204, 'the first answer, not the 412 of a weak tag on the entity restored')
        t.match(json(await api.get(url)), { deletedDateTime: null, etag: json(restored).etag }, 'not deleted by the retry')
        const elsewhere = await api.delete(`/v1/documents/${unique('x')}`, { 'if-match': weak, 'svc-idempotency-key': key })
        t.equal(elsewhere.statusCode, 409, 'the key is used: a DELETE of another entity is refused')
        t.equal(json(elsewhere).instance, url)
      })

      t.test('a key expires and can then be used again', async t => {
        const clock = new Clock()
        const short = client(await build(t, store, { idempotencyTtl: 1000, idempotencyNow: clock.now }))
        const key = idemKey()
        t.equal((await short.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })).statusCode, 201)
        clock.advance(999)
        t.equal((await short.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })).statusCode, 409, 'live until the ttl has passed')
        clock.advance(1)
        t.equal((await short.post('/v1/documents', { name: unique(), authorId: a.id, kind: 'INVOICE' }, { 'svc-idempotency-key': key })).statusCode, 201, 'free again once it has')
      })
    })
  })
}

t.test('without auth every caller is the same one: a key is still remembered (items and bulk)', async t => {
  const store = await pglite.create(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(queryPlugin, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [notes] })
  await app.register(bulk)
  await app.ready()
  const send = async (method: 'POST' | 'PATCH', url: string, payload: unknown, key: string): Promise<number> =>
    (await app.inject({ method, url, payload: payload as Record<string, unknown>, headers: { 'user-agent': 'idem-test/1', 'svc-idempotency-key': key } })).statusCode
  const key = idemKey()
  t.equal(await send('POST', '/v1/notes', { title: 'a' }, key), 201)
  t.equal(await send('POST', '/v1/notes', { title: 'a' }, key), 409, 'the anonymous caller\'s retry is caught')
  const bulkKey = idemKey()
  const ops = { operations: [{ action: 'CREATE', entity: { title: 'b' } }] }
  t.equal(await send('PATCH', '/v1/notes', ops, bulkKey), 200)
  t.equal(await send('PATCH', '/v1/notes', ops, bulkKey), 409)
  const query = await app.inject({ method: 'PATCH', url: '/v1/notes?dry=1', payload: ops, headers: { 'user-agent': 'idem-test/1' } })
  t.equal(query.statusCode, 400, 'bulk takes no query parameters')
  t.match(JSON.parse(query.body).context, [{ field: 'dry', source: 'query', code: 'INPUT_INVALID' }])
})
