import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { SKIP, author, call, load, sql, freshDatabase, startService, type Service } from './helper.js'

// SIGKILL in the middle of ATOMIC bulks (reference-service.md, Bulk; conventions: "Bulk
// endpoint", ATOMIC is all or nothing): after a restart every bulk is there whole or not at
// all, every bulk that was answered SUCCEEDED is there, and the service serves again.

const WORKERS = 6
const CREATES = 19
// Kill timings after the load starts: early, while warm, and later.
const KILL_AFTER_MS = [150, 450, 900]

interface Worker { docId: string, etag: string, marker: string | null }

t.test('SIGKILL during ATOMIC bulks leaves each bulk all or nothing', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  let svc: Service = await startService(t, db.url)
  const authorId = await author(svc.base)

  // Each worker owns one document that each of its bulks also replaces (UPDATE, If-Match),
  // so a bulk both creates and updates, and concurrent workers never touch the same row.
  const workers: Worker[] = []
  for (let w = 0; w < WORKERS; w++) {
    const doc = await call(svc.base, 'POST', '/v1/documents', { name: `owned-${w}`, authorId, kind: 'INVOICE' })
    t.equal(doc.status, 201)
    workers.push({ docId: doc.body.id, etag: doc.body.etag, marker: null })
  }

  const parent = t
  const acknowledged = new Set<string>()
  let cutOff = 0
  let inFlight = 0
  for (const [round, delay] of KILL_AFTER_MS.entries()) {
    await t.test(`round ${round + 1}: SIGKILL ${delay} ms into the load`, async t => {
      const base = svc.base
      // A kill may have cut off a bulk's answer or the read of its new ETag: read them afresh.
      for (const own of workers) own.etag = (await call(base, 'GET', `/v1/documents/${own.docId}`)).body.etag
      const traffic = load(WORKERS, async (w, i) => {
        const own = workers[w] as Worker
        const marker = `r${round}-w${w}-b${i}`
        const operations = [
          ...Array.from({ length: CREATES }, (_, j) => ({ action: 'CREATE', entity: { name: `${marker}-d${j}`, authorId, kind: 'CONTRACT', description: marker } })),
          { action: 'UPDATE', ifMatch: own.etag, entity: { id: own.docId, name: `owned-${w}`, authorId, kind: 'INVOICE', description: marker } }
        ]
        inFlight++
        const res = await call(base, 'PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations }).finally(() => { inFlight-- })
        if (res.status !== 200 || res.body.status !== 'SUCCEEDED') throw new Error(`bulk ${marker}: ${res.status} ${res.text}`)
        acknowledged.add(marker)
        own.marker = marker
        // The next UPDATE needs the new ETag: read it back (the bulk result has none).
        const now = await call(base, 'GET', `/v1/documents/${own.docId}`)
        own.etag = now.body.etag
      })
      await sleep(delay)
      // No new bulk after the kill: the loops end as their requests fail.
      const stopped = traffic.stop()
      const pending = inFlight
      svc.child.kill('SIGKILL')
      const { signal } = await svc.exited
      t.equal(signal, 'SIGKILL', 'killed')
      await stopped
      const errors = traffic.results.filter((r): r is Error => r instanceof Error)
      t.strictSame(errors.filter(e => e.message.startsWith('bulk ')).map(e => e.message), [], 'no bulk failed before the kill')
      cutOff += pending
      t.comment(`${traffic.results.length - errors.length} bulks answered, ${pending} in flight at the kill`)
      // Torn down with the parent test: the next round uses it.
      svc = await startService(parent, db.url)
    })
  }
  t.ok(cutOff > 0, `some bulks were in flight at a kill (${cutOff})`)

  // By SQL: per bulk marker, the created rows are all there or none.
  const rows = await sql<{ marker: string, n: number }>(db.url,
    "SELECT description AS marker, count(*)::int AS n FROM documents WHERE name LIKE 'r%-w%-b%-d%' GROUP BY description")
  const partial = rows.filter(r => r.n !== CREATES)
  t.strictSame(partial, [], 'no bulk is there in part')
  const stored = new Set(rows.map(r => r.marker))
  t.strictSame([...acknowledged].filter(m => !stored.has(m)), [], 'every bulk answered SUCCEEDED is stored')
  t.comment(`${stored.size} bulks stored, ${acknowledged.size} of them acknowledged before a kill`)

  // The UPDATE of each worker's document went with its bulk's creates: the document shows the
  // last stored bulk of that worker (bulks of one worker run one after the other).
  const last = new Map<number, string>()
  for (const m of [...stored].sort((a, b) => order(a) - order(b))) last.set(Number(/-w(\d+)-/.exec(m)?.[1]), m)
  const owned = await sql<{ name: string, description: string }>(db.url, "SELECT name, description FROM documents WHERE name LIKE 'owned-%' ORDER BY name")
  t.strictSame(owned.map(o => o.description), workers.map((_, w) => last.get(w) ?? null), 'each owned document holds its last stored bulk\'s update')

  // The restarted service serves bulks again.
  const after = await call(svc.base, 'PATCH', '/v1/documents', {
    transactionMode: 'ATOMIC',
    operations: [{ action: 'CREATE', entity: { name: 'after-the-kills', authorId, kind: 'INVOICE' } }]
  })
  t.equal(after.status, 200)
  t.equal(after.body.status, 'SUCCEEDED')
})

/** Round, then bulk number, of a marker `r<round>-w<worker>-b<bulk>`. */
function order (marker: string): number {
  const [, r, b] = /^r(\d+)-w\d+-b(\d+)$/.exec(marker) ?? []
  return Number(r) * 1e6 + Number(b)
}
