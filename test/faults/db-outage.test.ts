import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { SKIP_OWN_SERVER, author, call, eventually, load, startDatabase, startService, unique, type Answer } from './helper.js'

// The PostgreSQL server stops under load (reference service behind DATABASE_URL): every
// answer meanwhile is a 503 (or 500) problem body that tells nothing of the database
// (conventions: Errors, rules 1, 3, 4, 7), /health says the store is not ready, and once the
// server is back on the same port the service serves again by itself, never having exited.

const BURST_MS = 1200
const RECOVERY_MS = 15_000
/** Answers each phase of the load must have, however slowly a loaded machine gives them. */
const PHASE_ANSWERS = 21
/** A generous bound on waiting for them: only a service that stopped answering meets it. */
const PHASE_MS = 30_000

// A request that spans two phases counts as 'transition': it may go either way.
type Phase = 'before' | 'stopping' | 'down' | 'starting' | 'after' | 'transition'
interface Seen { phase: Phase, what: string, answer: Answer }

/** What a problem body must never show: the driver, the database, the SQL, the code. */
const INTERNAL = /ECONN|EPIPE|ETIMEDOUT|socket|postgres|pg_|sqlstate|SELECT |INSERT |UPDATE |DELETE FROM|relation |\bstack\b|\.ts:\d+|node_modules|127\.0\.0\.1|terminat/i

t.test('the database server stops under load and comes back', { skip: SKIP_OWN_SERVER }, async t => {
  const db = await startDatabase(t)
  const svc = await startService(t, db.url)
  const authorId = await author(svc.base)
  const item = await call(svc.base, 'POST', '/v1/documents', { name: unique('outage-item'), authorId, kind: 'INVOICE' })
  t.equal(item.status, 201)
  const itemPath = `/v1/documents/${item.body.id as string}`

  let phase: Phase = 'before'
  const seen: Seen[] = []
  const requests: Array<[string, () => Promise<Answer>]> = [
    ['GET item', async () => await call(svc.base, 'GET', itemPath)],
    ['GET collection', async () => await call(svc.base, 'GET', '/v1/documents?limit=5')],
    ['POST', async () => await call(svc.base, 'POST', '/v1/documents', { name: unique('outage'), authorId, kind: 'CONTRACT' })],
    ['GET /health', async () => await call(svc.base, 'GET', '/health')]
  ]
  const traffic = load(8, async (w, i) => {
    const [what, send] = requests[(w + i) % requests.length] as [string, () => Promise<Answer>]
    const at = phase
    const answer = await send()
    seen.push({ phase: at === phase ? at : 'transition', what, answer })
  })
  /** The answers of `phase` seen since `from`, once there are PHASE_ANSWERS (or PHASE_MS passed): a count, not a window of time. */
  const answersOf = async (phase: Phase, from: number): Promise<Seen[]> => {
    const of = (): Seen[] => seen.slice(from).filter(s => s.phase === phase)
    const deadline = performance.now() + PHASE_MS
    while (of().length < PHASE_ANSWERS && performance.now() < deadline) await sleep(50)
    return of()
  }

  for (const mode of ['fast', 'immediate'] as const) {
    await t.test(`pg_ctl stop -m ${mode}`, async t => {
      phase = 'before'
      await sleep(BURST_MS / 2)
      phase = 'stopping'
      await db.pause({ mode })
      phase = 'down'
      const down = await answersOf('down', seen.length)
      t.ok(down.length >= PHASE_ANSWERS, `load during the outage (${down.length} answers)`)
      const health = await call(svc.base, 'GET', '/health')
      t.equal(health.status, 503, '/health reports the outage')
      t.equal(health.body?.status, 503)
      phase = 'starting'
      await db.resume()
      // Recovered: each kind of request succeeds again, without restarting the service.
      const took = await eventually(async () => {
        const answers = await Promise.all(requests.map(async ([, send]) => await send()))
        return answers.every(a => a.status === 200 || a.status === 201)
      }, RECOVERY_MS, 'the service recovers')
      t.comment(`recovered ${took} ms after the server was back`)
      phase = 'after'
      const after = await answersOf('after', seen.length)
      t.ok(after.length >= PHASE_ANSWERS, `load after the recovery (${after.length} answers)`)
      t.strictSame(after.filter(s => s.answer.status >= 400).map(s => `${s.what}: ${s.answer.status}`), [], 'every request after the recovery succeeds')
    })
  }
  await traffic.stop()

  t.equal(svc.child.exitCode, null, 'the service never exited')
  t.equal(svc.child.signalCode, null)
  const thrown = traffic.results.filter(r => r instanceof Error)
  t.strictSame(thrown.map(e => (e as Error).message), [], 'no connection was reset or refused')

  const before = seen.filter(s => s.phase === 'before')
  t.strictSame(before.filter(s => s.answer.status >= 400).map(s => `${s.what}: ${s.answer.status}`), [], `everything succeeds before the outage (${before.length} answers)`)
  const down = seen.filter(s => s.phase === 'down')
  t.strictSame(down.filter(s => s.answer.status < 500).map(s => `${s.what}: ${s.answer.status}`), [], 'nothing succeeds while the database is down')

  const failures = seen.filter(s => s.answer.status >= 400)
  t.ok(failures.length >= down.length)
  const wrong: string[] = []
  for (const { what, answer } of failures) {
    const b = answer.body
    const problems = [
      answer.status === 503 || answer.status === 500 ? null : 'status',
      answer.headers.get('content-type')?.startsWith('application/problem+json') === true ? null : 'content-type',
      b !== null && typeof b === 'object' ? null : 'body',
      b?.status === answer.status ? null : 'status field',
      typeof b?.title === 'string' && b.title !== '' ? null : 'title',
      typeof b?.requestId === 'string' && b.requestId !== '' ? null : 'requestId',
      INTERNAL.test(answer.text) || answer.text.includes(`:${db.port}`) ? 'internal detail' : null,
      answer.status === 503 && answer.headers.get('retry-after') === null ? 'retry-after' : null
    ].filter(p => p !== null)
    if (problems.length > 0) wrong.push(`${what} ${answer.status} (${problems.join(', ')}): ${answer.text}`)
  }
  t.strictSame(wrong.slice(0, 5), [], `every failure is a 503/500 problem body with nothing internal (${failures.length} failures)`)
  t.comment(`${seen.length} answers, ${failures.length} failed: ${[...new Set(failures.map(f => f.answer.status))].join(', ')}`)
})
