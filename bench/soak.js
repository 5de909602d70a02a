// `npm run soak`: a bounded mixed workload against the reference service, then an audit.
//
// A throwaway PostgreSQL server (or a database of its own on SOAK_DATABASE_URL's server), the
// service in a child process on 127.0.0.1, SOAK_DOCUMENTS seeded documents, then
// SOAK_CONNECTIONS connections (default 100) for SOAK_DURATION seconds (default 60) of:
// GET item, GET collection pages (filters, ordering, following `next` cursors), POST creates,
// PATCH merge patches, ATOMIC bulk creates and Standard Webhooks deliveries (with deliberate
// duplicates, some after the acknowledgement and some racing the original).
//
// Every write carries a key of its own (a document name, a description, a webhook id). A
// trigger installed after seeding records each row the service inserts or updates, in the
// writing transaction, so a rolled-back write leaves no trace. The audit then holds, per key:
// acknowledged (2xx) → applied exactly once; refused (answered, never 2xx) → not applied;
// never answered (in flight when the load stopped) → at most once, reported apart; and nothing
// applied that the client did not send. Exit 1 on any 5xx, any lost, duplicated, refused-but-
// applied or unknown write, or memory that keeps growing (see memoryVerdict).
import { createHmac, randomUUID } from 'node:crypto'
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import autocannon from 'autocannon'
import { createSigner } from 'fast-jwt'
import pg from 'pg'
import { benchDatabase } from './lib/admin.js'
import { startServer, fmt, serverWarningLines } from './lib/harness.js'
import { seed, authorIds } from './seed.js'

const DURATION = Number(process.env.SOAK_DURATION ?? 60)
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 100)
const DOCUMENTS = Number(process.env.SOAK_DOCUMENTS ?? 10_000)
const FROM_SOURCE = process.env.SOAK_FROM_SOURCE === '1'
const BULK_SIZE = 10
/** RSS may grow at most this fraction (plus MEMORY_SLACK_MB, for the GC sawtooth) from one window to the next. */
const MEMORY_GROWTH = 0.10
const MEMORY_SLACK_MB = 16
/** Shorter runs are still warming up (JIT, pools, caches): the memory verdict needs this many seconds. */
const MEMORY_MIN_SECONDS = 30

const SECRET = 'soak-secret-that-is-long-enough-0123456789'
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('soak-webhook-secret-0123456789ab').toString('base64')
const WEBHOOK_KEY = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64')
const RUN = `s${process.pid}`
// Signed here with fast-jwt as the service's signToken does, so this client loads none of the service's code.
const token = createSigner({ key: SECRET, algorithm: 'HS256', sub: 'soak', expiresIn: '2h' })({ scope: 'documents:read documents:write' })
const apiHeaders = { 'user-agent': 'soak/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
const log = (line) => process.stderr.write(line + '\n')

/** Collection queries of the workload; each is checked once before the load. */
const PAGES = [
  '/v1/documents?limit=20',
  '/v1/documents?status=PUBLISHED&limit=20',
  '/v1/documents?kind=INVOICE&filter=pageCount=ge=100;status==PUBLISHED&ordering=-pageCount&limit=20',
  '/v1/documents?filter=name==Invoice*&ordering=name&limit=20',
  '/v1/documents?tags=finance&ordering=-createdDateTime&limit=10'
]

/** Share of each operation in the mix (sums to 1). */
const MIX = [['get', 0.28], ['page', 0.22], ['create', 0.15], ['patch', 0.12], ['bulk', 0.05], ['webhook', 0.18]]
const WRITE_KINDS = ['create', 'bulk', 'patch', 'webhook']

const pick = (xs) => xs[Math.floor(Math.random() * xs.length)]
const mean = (xs) => xs.length === 0 ? NaN : xs.reduce((s, x) => s + x, 0) / xs.length
const quantile = (sorted, q) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]

function chooseKind () {
  let r = Math.random()
  for (const [kind, share] of MIX) {
    if (r < share) return kind
    r -= share
  }
  return 'get'
}

/** Standard Webhooks headers, signed here with node:crypto (not the service's code). */
function webhookHeaders (id, body) {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', WEBHOOK_KEY).update(`${id}.${timestamp}.${body}`).digest('base64')
  return { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` }
}

/** The workload's state: what was sent, what came back, and the pools requests draw from. */
function createWorkload (seededIds) {
  const stats = Object.fromEntries(MIX.map(([k]) => [k, { sent: 0, answered: 0, s2xx: 0, s4xx: 0, s5xx: 0, other: 0, latencies: [], statuses: {}, examples: [] }]))
  /** key → { kind, sent, ok, refused }: one per document name, description or webhook id. */
  const writes = new Map()
  /** bulk request → its names, to check ATOMIC all-or-none for unanswered ones. */
  const bulks = []
  const created = []
  const cursors = []
  const duplicates = []
  let seq = 0
  let duplicateSends = 0

  const track = (key, kind) => {
    const w = writes.get(key) ?? { kind, sent: 0, ok: 0, refused: 0 }
    w.sent++
    writes.set(key, w)
  }
  const docId = () => (created.length > 0 && Math.random() < 0.3 ? pick(created) : pick(seededIds))

  function build (kind) {
    const n = ++seq
    switch (kind) {
      case 'get':
        return { req: { method: 'GET', path: `/v1/documents/${docId()}`, headers: apiHeaders }, keys: [] }
      case 'page': {
        const path = cursors.length > 0 && Math.random() < 0.5 ? cursors.splice(Math.floor(Math.random() * cursors.length), 1)[0] : pick(PAGES)
        return { req: { method: 'GET', path, headers: apiHeaders }, keys: [] }
      }
      case 'create': {
        const name = `soak-${RUN}-${n}`
        return { req: { method: 'POST', path: '/v1/documents', headers: { ...apiHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ name, authorId: pick(authorIds(3)), kind: 'INVOICE', tags: ['soak'], amount: '12.50' }) }, keys: [name] }
      }
      case 'patch': {
        // If-Match: * merges into whatever version is current (no lost update, no 412 race).
        const description = `patch:${RUN}-${n}`
        return { req: { method: 'PATCH', path: `/v1/documents/${docId()}`, headers: { ...apiHeaders, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ description }) }, keys: [description] }
      }
      case 'bulk': {
        const names = Array.from({ length: BULK_SIZE }, (_, i) => `soakbulk-${RUN}-${n}-${i}`)
        const operations = names.map(name => ({ action: 'CREATE', entity: { name, authorId: pick(authorIds(3)), kind: 'CONTRACT', tags: [] } }))
        bulks.push(names)
        return { req: { method: 'PATCH', path: '/v1/documents', headers: { ...apiHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ transactionMode: 'ATOMIC', operations }) }, keys: names }
      }
      default: {
        // A duplicate resends an earlier delivery as a producer retries it: same id, same bytes, signed anew.
        let delivery = duplicates.length > 0 && Math.random() < 0.2 ? duplicates.shift() : null
        if (delivery !== null) duplicateSends++
        else {
          const id = `msg_${randomUUID()}`
          delivery = { id, body: JSON.stringify({ documentId: pick(seededIds), pageCount: n % 100_000, fingerprint: id }) }
          // A few race their original (resent before it is acknowledged).
          if (Math.random() < 0.03) duplicates.push(delivery)
        }
        return { req: { method: 'POST', path: '/_webhooks/scanner/document-scanned', headers: webhookHeaders(delivery.id, delivery.body), body: delivery.body }, keys: [delivery.id], delivery }
      }
    }
  }

  const request = {
    setupRequest (_req, context) {
      const kind = chooseKind()
      const op = build(kind)
      stats[kind].sent++
      for (const key of op.keys) track(key, kind)
      context.op = { kind, keys: op.keys, delivery: op.delivery, t0: performance.now() }
      return { ..._req, ...op.req }
    },
    onResponse (status, body, context) {
      const op = context.op
      const s = stats[op.kind]
      s.answered++
      s.latencies.push(performance.now() - op.t0)
      if (s.statuses[status] === undefined) {
        s.statuses[status] = 0
        // The first body of each status, to say what a 4xx or 5xx was.
        if (status >= 400) s.examples.push(`${status} ${body.slice(0, 300)}`)
      }
      s.statuses[status]++
      if (status >= 500) s.s5xx++
      else if (status >= 400) s.s4xx++
      else if (status >= 200 && status < 300) s.s2xx++
      else s.other++
      // An ATOMIC bulk answers 200 for a failed batch too: only SUCCEEDED applied it.
      const ok = status >= 200 && status < 300 && (op.kind !== 'bulk' || JSON.parse(body).status === 'SUCCEEDED')
      for (const key of op.keys) {
        const w = writes.get(key)
        if (ok) w.ok++
        else w.refused++
      }
      if (!ok) return
      if (op.kind === 'create') created.push(JSON.parse(body).id)
      else if (op.kind === 'page') {
        const next = JSON.parse(body).paging?.next
        if (next != null && cursors.length < 2000) {
          const url = new URL(next.url)
          cursors.push(url.pathname + url.search)
        }
      } else if (op.kind === 'webhook' && Math.random() < 0.1) duplicates.push(op.delivery)
    }
  }
  return { request, stats, writes, bulks, duplicateSends: () => duplicateSends }
}

// Runs in the writing transaction: an effect exists exactly when the write committed.
const TRIGGER = `
CREATE TABLE soak_effects (kind text NOT NULL, key text);
CREATE FUNCTION soak_effect() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN INSERT INTO soak_effects VALUES ('insert', NEW.name);
  ELSIF NEW."modifiedBy" = 'scanner' THEN INSERT INTO soak_effects VALUES ('webhook', NEW.fingerprint);
  ELSE INSERT INTO soak_effects VALUES ('patch', NEW.description);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER soak_effect AFTER INSERT OR UPDATE ON documents FOR EACH ROW EXECUTE FUNCTION soak_effect();`

function vmRssMb (pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? NaN : Number(m[1]) / 1024
}

/**
 * Levels off when the mean RSS of the last window is at most MEMORY_GROWTH (plus
 * MEMORY_SLACK_MB) above the mean of the window before; windows of 20 s, a third of shorter runs.
 */
export function memoryVerdict (samples, duration = DURATION) {
  const w = Math.max(1, Math.min(20, Math.floor(samples.length / 3)))
  const last = samples.slice(-w)
  const prev = samples.slice(-2 * w, -w)
  const tail = samples.slice(-2 * w)
  // Least squares slope over the last two windows, MB per minute.
  const xm = (tail.length - 1) / 2
  const ym = mean(tail)
  const slope = tail.reduce((s, y, x) => s + (x - xm) * (y - ym), 0) / tail.reduce((s, _, x) => s + (x - xm) ** 2, 0) * 60
  const limit = mean(prev) * (1 + MEMORY_GROWTH) + MEMORY_SLACK_MB
  const judged = duration >= MEMORY_MIN_SECONDS && prev.length > 0
  return { window: w, prev: mean(prev), last: mean(last), peak: Math.max(...samples), slope, limit, judged, ok: !judged || mean(last) <= limit }
}

/** Per key, what the database holds against what the client was told. */
export function audit (workload, effects) {
  const counts = new Map()
  const unknown = []
  for (const { kind, key, n } of effects) {
    const k = kind === 'insert' ? (key.startsWith('soakbulk-') ? 'bulk' : 'create') : kind
    const w = workload.writes.get(key)
    if (w === undefined || w.kind !== k) unknown.push(`${kind} ${key} ×${n}`)
    else counts.set(key, n)
  }
  const r = Object.fromEntries(WRITE_KINDS.map(k => [k, { acked: 0, refused: 0, unanswered: 0, unansweredApplied: 0, lost: [], duplicated: [], refusedApplied: [] }]))
  for (const [key, w] of workload.writes) {
    const n = counts.get(key) ?? 0
    const a = r[w.kind]
    const unanswered = w.sent - w.ok - w.refused
    if (n > 1) a.duplicated.push(`${key} ×${n}`)
    if (w.ok > 0) {
      a.acked++
      if (n === 0) a.lost.push(key)
    } else if (unanswered > 0) {
      a.unanswered++
      if (n > 0) a.unansweredApplied++
    } else {
      a.refused++
      if (n > 0) a.refusedApplied.push(key)
    }
  }
  // An ATOMIC bulk is all or none, answered or not.
  const partialBulks = workload.bulks.filter(names => {
    const applied = names.filter(name => counts.has(name)).length
    return applied !== 0 && applied !== names.length
  }).length
  return { kinds: r, unknown, partialBulks }
}

export async function runSoak () {
  const started = Date.now()
  const load = os.loadavg()
  const database = await benchDatabase(`svc_soak_${process.pid}`, process.env.SOAK_DATABASE_URL)
  const url = database.url
  let service = null
  const db = new pg.Client({ connectionString: url })
  try {
    // The service migrates the schema as it starts; its clock of RSS starts here too.
    service = await startServer('service.js', {
      DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET, TRUST_PROXY: '127.0.0.1', BENCH_FROM_SOURCE: FROM_SOURCE ? '1' : '0'
    })
    await seed({ url, count: DOCUMENTS, batch: 10_000, log })
    await db.connect()
    await db.query(TRIGGER)
    const seededIds = (await db.query("SELECT id FROM documents WHERE ctx = 'prod'")).rows.map(r => r.id)
    const base = `http://127.0.0.1:${service.port}`
    for (const path of PAGES) {
      const res = await fetch(base + path, { headers: apiHeaders })
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
    }

    const workload = createWorkload(seededIds)
    const rss = []
    const before = vmRssMb(service.child.pid)
    const sampler = setInterval(() => { rss.push(vmRssMb(service.child.pid)) }, 1000)
    log(`soak: ${CONNECTIONS} connections for ${DURATION} s on ${base} (service RSS ${fmt(before)} MB after seeding)`)
    const progress = setInterval(() => {
      const total = Object.values(workload.stats).reduce((s, k) => s + k.answered, 0)
      log(`  ${rss.length} s: ${fmt(total)} responses, RSS ${fmt(rss.at(-1) ?? before)} MB`)
    }, 10_000)
    let result
    try {
      result = await autocannon({ url: base, connections: CONNECTIONS, duration: DURATION, pipelining: 1, timeout: 30, requests: [workload.request] })
    } finally {
      clearInterval(sampler)
      clearInterval(progress)
    }
    // Let requests the server still holds finish, then stop it: whatever it had not committed is rolled back.
    await new Promise(resolve => setTimeout(resolve, 1000))
    await service.stop()
    service = null

    const { rows: effects } = await db.query('SELECT kind, key, count(*)::int AS n FROM soak_effects GROUP BY kind, key')
    const checks = audit(workload, effects)
    const ackedWebhooks = [...workload.writes].filter(([, w]) => w.kind === 'webhook' && w.ok > 0).map(([k]) => k)
    const { rows: [recorded] } = await db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE producer = 'scanner' AND delivery_id = ANY($1)", [ackedWebhooks])
    const ackedNames = [...workload.writes].filter(([, w]) => (w.kind === 'create' || w.kind === 'bulk') && w.ok > 0).map(([k]) => k)
    const { rows: [stored] } = await db.query('SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM documents WHERE name = ANY($1)', [ackedNames])
    const memory = memoryVerdict(rss)
    return { workload, result, checks, memory, rss, load, before, recorded: recorded.n, ackedWebhooks: ackedWebhooks.length, stored, ackedNames: ackedNames.length, seconds: (Date.now() - started) / 1000, warnings: serverWarningLines() }
  } finally {
    await db.end().catch(() => {})
    if (service !== null) await service.stop()
    await database.close()
  }
}

/** The summary as markdown lines, and the failures (none: the soak passed). */
export function soakReport (r) {
  const lines = []
  const failures = []
  const { stats } = r.workload
  const total = Object.values(stats).reduce((s, k) => s + k.answered, 0)
  const cpus = os.cpus()
  lines.push(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, load average ${r.load.map(l => l.toFixed(1)).join(' ')} at the start: ${CONNECTIONS} connections for ${DURATION} s on loopback, ${fmt(DOCUMENTS)} seeded documents; ${fmt(total)} responses (${fmt(total / DURATION)} req/s), ${r.result.errors} connection errors, ${r.result.timeouts} timeouts; whole run ${fmt(r.seconds)} s (\`npm run soak\`).`)
  lines.push('', '| operation | sent | 2xx | 4xx | 5xx | no response | p50 ms | p99 ms |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [kind, s] of Object.entries(stats)) {
    const sorted = [...s.latencies].sort((a, b) => a - b)
    const name = kind === 'webhook' ? `webhook (${fmt(r.workload.duplicateSends())} duplicates)` : kind === 'bulk' ? `bulk ATOMIC × ${BULK_SIZE}` : kind
    lines.push(`| ${name} | ${fmt(s.sent)} | ${fmt(s.s2xx)} | ${fmt(s.s4xx)} | ${fmt(s.s5xx)} | ${fmt(s.sent - s.answered)} | ${fmt(quantile(sorted, 0.5), 1)} | ${fmt(quantile(sorted, 0.99), 1)} |`)
    if (s.s5xx > 0) failures.push(`${kind}: ${s.s5xx} responses 5xx (${JSON.stringify(s.statuses)})`)
  }
  const examples = Object.entries(stats).flatMap(([kind, s]) => s.examples.map(e => `- ${kind} ×${s.statuses[e.slice(0, 3)]}: ${e}`))
  if (examples.length > 0) lines.push('', 'Statuses ≥ 400, first body of each:', '', ...examples)
  lines.push('', '| writes | acknowledged, applied once | refused, not applied | no response: applied / not | lost | duplicated | refused but applied |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [kind, a] of Object.entries(r.checks.kinds)) {
    lines.push(`| ${kind === 'bulk' ? 'bulk-created documents' : kind} | ${fmt(a.acked - a.lost.length)} | ${fmt(a.refused - a.refusedApplied.length)} | ${fmt(a.unansweredApplied)} / ${fmt(a.unanswered - a.unansweredApplied)} | ${a.lost.length} | ${a.duplicated.length} | ${a.refusedApplied.length} |`)
    if (a.lost.length > 0) failures.push(`${kind}: ${a.lost.length} acknowledged writes lost, e.g. ${a.lost.slice(0, 3).join(', ')}`)
    if (a.duplicated.length > 0) failures.push(`${kind}: ${a.duplicated.length} writes applied more than once, e.g. ${a.duplicated.slice(0, 3).join(', ')}`)
    if (a.refusedApplied.length > 0) failures.push(`${kind}: ${a.refusedApplied.length} refused writes applied, e.g. ${a.refusedApplied.slice(0, 3).join(', ')}`)
  }
  if (r.checks.unknown.length > 0) failures.push(`${r.checks.unknown.length} writes in the database the client never sent, e.g. ${r.checks.unknown.slice(0, 3).join(', ')}`)
  if (r.checks.partialBulks > 0) failures.push(`${r.checks.partialBulks} ATOMIC bulks applied in part`)
  if (r.recorded !== r.ackedWebhooks) failures.push(`${r.ackedWebhooks - r.recorded} acknowledged webhook ids missing from webhook_deliveries`)
  if (r.stored.n !== r.ackedNames || r.stored.names !== r.ackedNames) failures.push(`documents by acknowledged name: ${r.stored.n} rows, ${r.stored.names} names, for ${r.ackedNames} acknowledged`)
  const m = r.memory
  const verdict = !m.judged ? `not judged (runs under ${MEMORY_MIN_SECONDS} s are still warming up)` : m.ok ? 'levels off' : 'KEEPS GROWING'
  lines.push('', `Webhook ids recorded: ${fmt(r.recorded)} of ${fmt(r.ackedWebhooks)} acknowledged; documents by acknowledged name: ${fmt(r.stored.n)} rows for ${fmt(r.ackedNames)} names.`)
  lines.push(`Service RSS every 10 s (MB): ${r.rss.filter((_, i) => i % 10 === 9).map(x => fmt(x)).join(', ')}.`)
  lines.push(`Service RSS: ${fmt(r.before)} MB after seeding, peak ${fmt(m.peak)} MB; mean of the last ${m.window} s ${fmt(m.last, 1)} MB against ${fmt(m.prev, 1)} MB the ${m.window} s before (limit ${fmt(m.limit, 1)} MB: +${MEMORY_GROWTH * 100} % + ${MEMORY_SLACK_MB} MB), slope ${fmt(m.slope, 1)} MB/min over the last ${2 * m.window} s: ${verdict}.`)
  if (!m.ok) failures.push(`memory keeps growing: ${fmt(m.prev, 1)} → ${fmt(m.last, 1)} MB`)
  const { lines: warnings, failing } = r.warnings ?? { lines: [], failing: [] }
  lines.push(warnings.length === 0 ? 'The service emitted no warning.' : `The service's warnings: ${warnings.join('; ')}.`)
  for (const w of failing) failures.push(`the service warned: ${w}`)
  lines.push('', failures.length === 0 ? '**PASSED**: no 5xx, every acknowledged write applied exactly once, nothing refused applied.' : `**FAILED**:\n${failures.map(f => `- ${f}`).join('\n')}`)
  return { lines, failures }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runSoak()
  const { lines, failures } = soakReport(r)
  const text = ['# Soak', '', ...lines].join('\n')
  console.log(text)
  // SOAK_WRITE=0 (the smoke test) leaves the committed summary alone.
  if (process.env.SOAK_WRITE !== '0') {
    const dir = new URL('./results/', import.meta.url)
    mkdirSync(dir, { recursive: true })
    writeFileSync(new URL('soak.md', dir), text + '\n')
  }
  process.exitCode = failures.length === 0 ? 0 : 1
}
