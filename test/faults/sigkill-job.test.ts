import t from 'tap'
import { SKIP, author, call, eventually, sql, freshDatabase, startService, type Service } from './helper.js'

// SIGKILL of the instance running an asynchronous ISOLATED bulk of 10,000 operations
// (reference contract, "Asynchronous bulk": "survives restarts of the service (a job whose
// instance died is taken up again, and no operation is applied twice)"). The restarted service
// takes the job up after its lease, finishes it, and every operation is applied exactly once.

const OPERATIONS = 10_000
// The killed instance's lease: short enough that the restarted instance takes the job up soon,
// long enough to be renewed in time. The restarted one keeps the default: its own lease plays no
// part here, and a long one cannot run out while it runs the job, whatever stalls it.
const LEASE = { JOB_LEASE_MILLIS: '3000' }

t.test('SIGKILL during a 10,000-operation ISOLATED job: taken up again, each operation applied once', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  let svc: Service = await startService(t, db.url, LEASE)
  const authorId = await author(svc.base)
  const operations = Array.from({ length: OPERATIONS }, (_, i) => ({ operationId: `op-${i}`, action: 'CREATE', entity: { name: `job-doc-${i}`, authorId, kind: 'INVOICE', pageCount: i % 100 } }))
  const accepted = await call(svc.base, 'PATCH', '/v1/documents', { operations }, { prefer: 'respond-async' })
  t.equal(accepted.status, 202, accepted.text.slice(0, 300))
  const job = accepted.body
  const monitor = `/v1/jobs/${job.id as string}`

  // Killed once some of the work has committed, and well before all of it has.
  await eventually(async () => (await sql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM documents WHERE name LIKE 'job-doc-%'"))[0]?.n as number > 0, 60_000, 'the job started')
  svc.child.kill('SIGKILL')
  await svc.exited
  // One statement, one snapshot: a COMMIT the killed instance sent may still land in between two.
  const [counted] = await sql<{ before: number, steps: number }>(db.url, `SELECT (SELECT count(*)::int FROM documents WHERE name LIKE 'job-doc-%') AS before,
    (SELECT count(*)::int FROM jobs_steps WHERE job_id = $1) AS steps`, [job.id])
  const before = counted?.before as number
  t.ok(before < OPERATIONS, `killed part-way (${before} of ${OPERATIONS} applied)`)
  t.equal(counted?.steps, before, 'every applied operation has its outcome recorded with it, and no other')

  svc = await startService(t, db.url)
  let done: any = null
  await eventually(async () => {
    done = (await call(svc.base, 'GET', monitor)).body
    return done?.status === 'SUCCEEDED' || done?.status === 'FAILED'
  }, 300_000, 'the job ended after the restart')
  t.match(done, { status: 'SUCCEEDED', operationCount: OPERATIONS, completedCount: OPERATIONS, problem: null })
  t.equal(done.result.status, 'SUCCEEDED')
  t.equal(done.result.operations.length, OPERATIONS)
  t.strictSame(done.result.operations.slice(0, 2).map((o: any) => o.operationId), ['op-0', 'op-1'], 'in request order')

  const rows = await sql<{ name: string, n: number }>(db.url, "SELECT name, count(*)::int AS n FROM documents WHERE name LIKE 'job-doc-%' GROUP BY name")
  t.equal(rows.length, OPERATIONS, 'every operation applied')
  t.strictSame(rows.filter(r => r.n !== 1), [], 'none twice')
  const ids = new Set(done.result.operations.map((o: any) => o.entityId))
  const stored = await sql<{ id: string }>(db.url, "SELECT id FROM documents WHERE name LIKE 'job-doc-%'")
  t.ok(stored.every(r => ids.has(r.id)), 'each stored document is the one its operation reports')
  const attempts = (await sql<{ attempts: number }>(db.url, 'SELECT attempts FROM jobs WHERE id = $1', [job.id]))[0]?.attempts
  t.equal(attempts, 2, 'claimed by the killed instance, then by the restarted one')
})
