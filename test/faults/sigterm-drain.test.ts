import t from 'tap'
import http from 'node:http'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { SKIP, author, call, exitOf, headers, load, sql, freshDatabase, startService, type Service } from './helper.js'

// SIGTERM under load (reference-service.md, Running it: "stops accepting, finishes requests in
// flight, closes the store, exits 0"). The service logs every request it accepts ("incoming
// request", by X-Request-ID at info level): each of those must be answered with a success,
// new connections are refused once draining starts, and every write acknowledged is stored.

const WORKERS = 6
const BULK = 20
const LOAD_MS = 800
const SLOW = 3
const MIN_ANSWERS = 30

interface Sent { id: string, status: number | Error, writes: number }

/** A POST whose body arrives in two parts: accepted by the service, finished when told to. */
function slowPost (base: string, id: string, body: unknown): { finish: () => void, answer: Promise<{ status: number, connection: string | undefined }> } {
  const raw = Buffer.from(JSON.stringify(body))
  const half = Math.floor(raw.length / 2)
  const req = http.request(`${base}/v1/documents`, {
    method: 'POST',
    agent: new http.Agent({ keepAlive: true }),
    headers: { ...headers({ 'x-request-id': id }), 'content-type': 'application/json', 'content-length': String(raw.length) }
  })
  const answer = new Promise<{ status: number, connection: string | undefined }>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume()
      res.once('end', () => { resolve({ status: res.statusCode as number, connection: res.headers.connection }) })
    })
    req.once('error', reject)
  })
  req.write(raw.subarray(0, half))
  return { finish: () => { req.end(raw.subarray(half)) }, answer }
}

/** Resolves with the error code of a fresh TCP connection attempt, or 'connected'. */
async function tryConnect (port: number): Promise<string> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve('connected') })
    s.once('error', (err: NodeJS.ErrnoException) => { resolve(err.code ?? err.message) })
  })
}

/** The request ids the service logged as accepted. */
function accepted (svc: Service): Set<string> {
  const ids = new Set<string>()
  for (const line of svc.output().split('\n')) {
    if (!line.includes('"incoming request"')) continue
    try { ids.add((JSON.parse(line) as { reqId: string }).reqId) } catch {}
  }
  return ids
}

t.test('SIGTERM under load drains the requests in flight and loses none', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  // A shutdown timeout a starved machine cannot reach: the drain must end because its
  // connections close, which exit code 0 shows.
  const svc = await startService(t, db.url, { LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT: '60000' })
  const port = Number(new URL(svc.base).port)
  const authorId = await author(svc.base)

  const sent: Sent[] = []
  const traffic = load(WORKERS, async (w, i) => {
    const id = `drain-${w}-${i}`
    const h = { 'x-request-id': id }
    let status: number | Error
    let writes = 0
    try {
      if (i % 3 === 0) {
        const res = await call(svc.base, 'POST', '/v1/documents', { name: id, authorId, kind: 'INVOICE' }, h)
        status = res.status
        if (res.status === 201) writes = 1
      } else if (i % 3 === 1) {
        const operations = Array.from({ length: BULK }, (_, j) => ({ action: 'CREATE', entity: { name: `${id}-${j}`, authorId, kind: 'CONTRACT' } }))
        const res = await call(svc.base, 'PATCH', '/v1/documents', { transactionMode: 'ATOMIC', operations }, h)
        status = res.status
        if (res.status === 200 && res.body.status === 'SUCCEEDED') writes = BULK
      } else {
        status = (await call(svc.base, 'GET', '/v1/documents?limit=100', undefined, h)).status
      }
    } catch (err) {
      status = err as Error
      // Once nothing listens, stop knocking (the load ends with the process anyway).
      await sleep(20)
    }
    sent.push({ id, status, writes })
  })
  t.teardown(traffic.stop)

  const slow = Array.from({ length: SLOW }, (_, k) => slowPost(svc.base, `slow-${k}`, { name: `drain-slow-${k}`, authorId, kind: 'INVOICE' }))
  // Some load first (however slow the machine), bounded in time.
  const start = Date.now()
  while ((sent.length < MIN_ANSWERS || Date.now() - start < LOAD_MS) && Date.now() - start < 60_000) await sleep(20)
  // The slow requests are in: their headers were read and logged.
  const seen = accepted(svc)
  t.ok(Array.from({ length: SLOW }, (_, k) => `slow-${k}`).every(id => seen.has(id)), 'the slow requests were accepted before SIGTERM')
  const before = sent.length
  t.ok(before >= MIN_ANSWERS, `load before SIGTERM (${before} answers)`)

  svc.child.kill('SIGTERM')
  // While the slow requests still hold the drain open, nothing new gets in.
  let refused = ''
  for (let n = 0; n < 100 && refused !== 'ECONNREFUSED'; n++) {
    refused = await tryConnect(port)
    if (refused !== 'ECONNREFUSED') await sleep(20)
  }
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused once draining started')
  t.equal(svc.child.exitCode, null, 'still draining: the slow requests are not finished')

  for (const s of slow) s.finish()
  const slowAnswers = await Promise.all(slow.map(async s => await s.answer))
  t.strictSame(slowAnswers.map(a => a.status), Array(SLOW).fill(201), 'the requests in flight complete with success')
  t.strictSame(slowAnswers.map(a => a.connection), Array(SLOW).fill('close'), 'and close their kept-alive connections, so the drain ends')

  // Well before the 72 s kept-alive connections would take to time out.
  const { code, signal } = await exitOf(svc, 60_000)
  t.equal(code, 0, 'exit code 0')
  t.equal(signal, null, 'not killed by a signal')
  await traffic.stop()

  const ids = accepted(svc)
  const byId = new Map(sent.map(s => [s.id, s]))
  const unanswered = [...ids].filter(id => id.startsWith('drain-') && !(typeof byId.get(id)?.status === 'number'))
  t.strictSame(unanswered, [], `every accepted request got an answer (${ids.size} accepted)`)
  const failed = sent.filter(s => typeof s.status === 'number' && (s.status < 200 || s.status >= 300)).map(s => `${s.id}: ${String(s.status)}`)
  t.strictSame(failed, [], 'every answer is a success')
  const errors = sent.filter(s => s.status instanceof Error)
  t.strictSame(errors.filter(s => ids.has(s.id)).map(s => s.id), [], 'no accepted request was reset')
  t.comment(`${sent.length - errors.length} answered, ${errors.length} never reached the service (refused after the drain began)`)

  const acknowledged = sent.reduce((n, s) => n + s.writes, 0) + SLOW
  const rows = await sql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM documents WHERE name LIKE 'drain-%'")
  t.equal(rows[0]?.n, acknowledged, `writes acknowledged = rows stored (${acknowledged})`)
})
