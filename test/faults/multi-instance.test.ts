import t from 'tap'
import { randomUUID } from 'node:crypto'
import { SKIP, author, call, deliver, sql, freshDatabase, startService, unique, type Answer } from './helper.js'

// Two service instances on one database (what PGlite cannot show: test/resource/concurrency
// skips it there). Svc-Idempotency-Key (conventions: Headers) and webhook delivery ids
// (reference-service.md, Webhooks) are kept in the database with the change they guard, so
// they hold exactly across instances.

const N = 10

const count = (answers: readonly Answer[], status: number): number => answers.filter(a => a.status === status).length
const key = (): string => randomUUID()

t.test('two instances on one database', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  // Started together: the migrations of both meet on the same empty database.
  const [a, b] = await Promise.all([startService(t, db.url), startService(t, db.url)])
  const bases = [a.base, b.base]
  const on = (i: number): string => bases[i % 2] as string
  const authorId = await author(a.base)

  t.test('the same key on POST, concurrently on both: one entity, every repeat a 409 naming it', async t => {
    // Authors have no unique field: only the key can stop a second creation.
    const k = key()
    const email = `${unique('idem')}@example.com`
    const body = { name: 'Idempotent Author', email }
    const answers = await Promise.all(Array.from({ length: N }, async (_, i) => await call(on(i), 'POST', '/v1/authors', body, { 'svc-idempotency-key': k })))
    t.equal(count(answers, 201), 1, 'one 201')
    t.equal(count(answers, 409), N - 1, 'the others 409')
    const created = answers.find(x => x.status === 201) as Answer
    const location = created.headers.get('location')
    t.equal(location, `/v1/authors/${created.body.id as string}`)
    for (const x of answers.filter(y => y.status === 409)) {
      t.match(x.headers.get('content-type'), /^application\/problem\+json/)
      t.equal(x.body.instance, location, 'the 409 names the entity the key created')
    }
    // And sequentially, on one instance after the other.
    for (const base of [...bases, ...bases]) {
      const again = await call(base, 'POST', '/v1/authors', body, { 'svc-idempotency-key': k })
      t.equal(again.status, 409)
      t.equal(again.body.instance, location)
    }
    const rows = await sql(db.url, 'SELECT id FROM authors WHERE email = $1', [email])
    t.strictSame(rows.map(r => r.id), [created.body.id], 'exactly one author in the database')
  })

  t.test('the same key on PATCH, concurrently on both: applied once, every answer 204', async t => {
    const doc = await call(a.base, 'POST', '/v1/documents', { name: unique('idem-patch'), authorId, kind: 'INVOICE' })
    t.equal(doc.status, 201)
    const k = key()
    // If-Match on the first ETag: a second application would fail it (412), not replay.
    const answers = await Promise.all(Array.from({ length: N }, async (_, i) =>
      await call(on(i), 'PATCH', `/v1/documents/${doc.body.id as string}`, { pageCount: 7 }, { 'svc-idempotency-key': k, 'if-match': doc.body.etag, 'content-type': 'application/merge-patch+json' })))
    t.strictSame(answers.map(x => x.status), Array(N).fill(204), 'a repeated PATCH answers 2xx (an idempotent action)')
    const now = await call(b.base, 'GET', `/v1/documents/${doc.body.id as string}`)
    t.equal(now.body.pageCount, 7)
    t.not(now.body.etag, doc.body.etag)
  })

  t.test('the same webhook id, concurrently on both: applied once, every answer 204', async t => {
    // Counts every change of a document row: the effect of a delivery, seen by the database.
    await sql(db.url, `CREATE TABLE scan_effects (doc text NOT NULL, fingerprint text);
      CREATE FUNCTION scan_effect() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO scan_effects VALUES (NEW.id, NEW.fingerprint); RETURN NEW; END $$;
      CREATE TRIGGER scan_effect AFTER UPDATE ON documents FOR EACH ROW EXECUTE FUNCTION scan_effect()`)
    const ids: string[] = []
    for (let d = 0; d < 4; d++) {
      const doc = await call(on(d), 'POST', '/v1/documents', { name: unique('scanned'), authorId, kind: 'CONTRACT' })
      ids.push(doc.body.id)
    }
    const messages = ids.map(() => `msg_${randomUUID()}`)
    const answers = await Promise.all(ids.flatMap((id, d) => Array.from({ length: N }, async (_, i) =>
      await deliver(on(i), messages[d] as string, { documentId: id, pageCount: 3 + d, fingerprint: `sha256:${d}` }))))
    t.strictSame([...new Set(answers.map(x => x.status))], [204], 'every delivery and replay is acknowledged with 204')
    const effects = await sql<{ doc: string, n: number }>(db.url, 'SELECT doc, count(*)::int AS n FROM scan_effects GROUP BY doc ORDER BY doc')
    t.strictSame(effects, [...ids].sort().map(doc => ({ doc, n: 1 })), 'each delivery changed its document exactly once')
    const recorded = await sql<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM webhook_deliveries WHERE delivery_id = ANY($1)', [messages])
    t.equal(recorded[0]?.n, messages.length, 'each delivery id recorded once')
    for (const [d, id] of ids.entries()) {
      const now = await call(on(d + 1), 'GET', `/v1/documents/${id}`)
      t.match(now.body, { pageCount: 3 + d, fingerprint: `sha256:${d}` })
    }
  })
})
