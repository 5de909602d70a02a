// `npm run bench`: every case beside its baseline, in one run, as ONE table (stdout and
// bench/results/latest.md); progress goes to stderr. The cases on PostgreSQL share one database
// (a throwaway server, or a database of its own on BENCH_DATABASE_URL's server), its schema made
// by the service as it first starts, then seeded with BENCH_DOCUMENTS documents. Exits 1 when a
// guard fails or a server process warns. bench/README.md lists the variables.
import os from 'node:os'
import { mkdirSync, writeFileSync } from 'node:fs'
import pg from 'pg'
import { benchDatabase } from './lib/admin.js'
import { fmt, median, pinning, ratios, serverWarningLines, settings, summary } from './lib/harness.js'
import { startService } from './lib/service.js'
import { runTrivial } from './trivial.js'
import { runCollection } from './collection.js'
import { runCsv } from './csv.js'
import { runResource } from './resource.js'
import { runBulk } from './bulk.js'
import { runJob } from './job.js'
import { runFiles } from './files.js'
import { runEvents } from './events.js'
import { seed } from './seed.js'

const ALL = ['trivial', 'pages', 'csv', 'item', 'bulk', 'job', 'files', 'events']
const cases = (process.env.BENCH_CASES ?? ALL.join(',')).split(',').map((c) => c.trim())
for (const c of cases) if (!ALL.includes(c)) throw new Error(`BENCH_CASES: unknown case ${c} (known: ${ALL.join(', ')})`)
const documents = Number(process.env.BENCH_DOCUMENTS ?? 1_000_000)
const bulkRounds = Number(process.env.BENCH_BULK_ROUNDS ?? 20)
const jobRounds = Number(process.env.BENCH_JOB_ROUNDS ?? 5)
// Settings below the defaults: the table says so.
const smoke = settings.rounds < 10 || settings.duration < 2 || settings.processes < 5 || documents < 1_000_000 || bulkRounds < 20 || jobRounds < 5
const started = Date.now()
const loadBefore = os.loadavg()
const log = (line) => process.stderr.write(line + '\n')
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`

const rows = []
const spreads = []
const failed = []

function row (what, way, s, ratio = '', guard = '') {
  rows.push(`| ${what} | ${way} | ${s.rate ?? fmt(s.rps)} | ${fmt(s.p50, 1)} | ${fmt(s.p99, 1)} | ${fmt(s.cpu, 1)} | ${fmt(s.rss)} | ${ratio} | ${guard} |`)
}

/**
 * A guarded row: the median of the rounds' ratios against `threshold`, at least (or, `atMost`,
 * at most); their spread goes to the footnote, under `spread` (default `what`).
 */
function guarded (what, way, s, roundRatios, threshold, { of = ' of the baseline', digits = 3, unit = '', atMost = false, spread = what } = {}) {
  const ratio = median(roundRatios)
  const met = atMost ? ratio <= threshold : ratio >= threshold
  const guard = `${atMost ? '≤' : '≥'} ${fmt(threshold, Number.isInteger(threshold) ? 0 : 2)}${unit}`
  if (!met) failed.push(`${what}, ${way}: ${fmt(ratio, digits)}${of}, guard ${guard}`)
  spreads.push(`${spread} ${fmt(Math.min(...roundRatios), digits)} to ${fmt(Math.max(...roundRatios), digits)} (${plural(roundRatios.length, 'round')})`)
  row(what, way, s, `${fmt(ratio, digits)}${of}`, `${guard}: ${met ? 'met' : '**failed**'}`)
}

/** A row of one measurement against `threshold` (`atMost`: the figure may not exceed it). */
function checked (what, way, s, figure, threshold, { ratio = '', guard, atMost = false }) {
  const met = atMost ? figure <= threshold : figure >= threshold
  if (!met) failed.push(`${what}, ${way}: ${ratio === '' ? fmt(figure) : ratio}, guard ${guard}`)
  row(what, way, s, ratio, `${guard}: ${met ? 'met' : '**failed**'}`)
}

/** Each round's ratio of the server CPU per request of case `of` to case `to`. */
const cpuRatios = (results, of, to) => results[of].map((r, i) => r.cpu / results[to][i].cpu)

/** A row of CPU per request alone (`cpu`, µs). */
const cpuOnly = (cpu) => ({ rate: '', p50: NaN, p99: NaN, cpu, rss: NaN })

if (cases.includes('trivial')) {
  log('trivial route: bare Fastify, the floor, the suite')
  const r = await runTrivial({ log })
  const what = 'trivial route `GET /ping`'
  row(what, 'bare Fastify (reference)', summary(r.bare))
  row(what, 'the floor: its rules by hand, one hook', summary(r.floor), '1 (baseline)')
  guarded(what, 'suite (conventions core)', summary(r.suite), ratios(r, 'suite', 'floor'), 0.9, { of: ' of the floor' })
}

let postgres = null
if (cases.some((c) => c !== 'trivial')) {
  const database = await benchDatabase('svc_bench', process.env.BENCH_DATABASE_URL)
  const url = database.url
  try {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    postgres = (await client.query('SHOW server_version')).rows[0].server_version
    await client.end()
    const service = await startService(url)
    await service.stop()
    log(`seeding ${fmt(documents)} documents`)
    await seed({ url, count: documents, log })

    // Pages first: the other cases write to the table.
    if (cases.includes('pages')) {
      log('pages')
      const { results: r, depth } = await runCollection({ url, count: documents, log })
      const first = `first page, ${fmt(documents)} documents`
      row(first, 'bare Fastify + pg, same query by hand', summary(r['first bare']), '1 (baseline)')
      guarded(first, 'reference service', summary(r.first), ratios(r, 'first', 'first bare'), 0.95, { of: ' of bare' })
      guarded(`page ${fmt(depth)} deep by cursor`, 'reference service', summary(r.deep), ratios(r, 'deep', 'first'), 0.85, { of: ' of the first page' })
      const ordered = 'filtered page, ordered by an index'
      row(ordered, 'bare Fastify + pg, same query by hand', summary(r['ordered bare']), '1 (baseline)')
      guarded(ordered, 'reference service', summary(r.ordered), ratios(r, 'ordered', 'ordered bare'), 0.95, { of: ' of bare' })
      const unindexed = 'filtered page, ordering no index serves'
      row(unindexed, 'bare Fastify + pg, same query by hand', summary(r['unindexed bare']), '1 (baseline)')
      guarded(unindexed, 'reference service', summary(r.unindexed), ratios(r, 'unindexed', 'unindexed bare'), 0.95, { of: ' of bare' })
    }
    // Reads only, before the cases that write.
    if (cases.includes('csv')) {
      log('a page of 100 documents: CSV vs JSON')
      const r = await runCsv({ url, log })
      const what = 'a page of 100 documents'
      row(what, 'reference service, JSON', summary(r.json), '1 (baseline)')
      guarded(what, 'reference service, CSV (`Accept: text/csv`)', summary(r.csv), ratios(r, 'csv', 'json'), 0.9, { of: ' of JSON' })
    }
    if (cases.includes('item')) {
      log('single documents: GET, POST, PATCH, webhook delivery')
      const r = await runResource({ url, log })
      const get = 'GET item `/v1/documents/{id}`'
      row(get, 'bare Fastify + pg: one named SELECT', summary(r['get bare']), '1 (baseline)')
      guarded(get, 'reference service', summary(r['get service']), ratios(r, 'get service', 'get bare'), 1.1, { of: ' of bare' })
      const post = 'POST `/v1/documents`'
      row(post, 'bare Fastify + pg: one named INSERT … RETURNING', summary(r['post bare']), '1 (baseline)')
      guarded(post, 'reference service', summary(r['post service']), ratios(r, 'post service', 'post bare'), 0.9, { of: ' of bare' })
      guarded(`${post}: server CPU per request`, 'reference service over bare', cpuOnly(summary(r['post service']).cpu), cpuRatios(r, 'post service', 'post bare'), 1.5, { of: '× bare\'s', unit: '×', atMost: true })
      const patch = 'PATCH `/v1/documents/{id}` with `If-Match`'
      row(patch, 'bare Fastify + pg: one named UPDATE … WHERE etag = $ RETURNING', summary(r['patch bare']), '1 (baseline)')
      guarded(patch, 'reference service', summary(r['patch service']), ratios(r, 'patch service', 'patch bare'), 0.9, { of: ' of bare' })
      const webhook = 'webhook delivery (signed, new id each)'
      row(webhook, 'bare Fastify + pg: HMAC, then one named statement recording the id and updating the document', summary(r['webhook bare']), '1 (baseline)')
      guarded(webhook, 'reference service', summary(r['webhook service']), ratios(r, 'webhook service', 'webhook bare'), 0.9, { of: ' of bare' })
    }
    if (cases.includes('files')) {
      log('document content: a 5 MiB download; ten concurrent 10 MiB uploads')
      const { rounds: r, uploads } = await runFiles({ url, log })
      const get = 'GET content, a 5 MiB file'
      row(get, 'bare Fastify + pg, the same bytes from the same table', summary(r['download bare']), '1 (baseline)')
      guarded(get, 'reference service', summary(r['download service']), ratios(r, 'download service', 'download bare'), 0.8, { of: ' of bare' })
      // Peak RSS over rest, the kernel's figure: a guard on memory, not on throughput.
      const what = 'ten concurrent 10 MiB uploads'
      const met = uploads.max <= 250
      if (!met) failed.push(`${what}: peak RSS ${fmt(uploads.max)} MB over rest, guard ≤ 250 MB`)
      rows.push(`| ${what} | reference service, fresh process${uploads.count === 1 ? '' : ` (${uploads.count} rounds, the largest rise)`} | | | | | ${fmt(uploads.peak)} | peak RSS ${fmt(uploads.max)} MB over ${fmt(uploads.rest)} MB at rest | ≤ 250 MB: ${met ? 'met' : '**failed**'} |`)
    }
    if (cases.includes('bulk')) {
      log('100 documents: one ATOMIC bulk vs 100 POSTs; 50 creations and 50 replacements in turns: one ATOMIC bulk vs 50 POSTs and 50 PUTs')
      const { creations: c, mixed: m } = await runBulk({ url, rounds: bulkRounds, log })
      const of = (s) => ({ rate: `${fmt(median(s.ms), 1)} ms/op`, p50: median(s.ms), p99: Math.max(...s.ms), cpu: median(s.cpu), rss: s.rss })
      const what = '100 documents created'
      row(what, '100 sequential POSTs', of(c.posts), '1 (baseline)')
      guarded(what, 'one bulk PATCH, ATOMIC', of(c.bulk), c.posts.ms.map((ms, i) => ms / c.bulk.ms[i]), 10, { of: '× as fast', digits: 1, unit: '×' })
      const turns = '100 operations in turns: 50 documents created, 50 replaced'
      row(turns, '50 POSTs and 50 PUTs with `If-Match`, sequential, in the same turns', of(m.requests), '1 (baseline)')
      guarded(turns, 'one bulk PATCH, ATOMIC', of(m.bulk), m.requests.ms.map((ms, i) => ms / m.bulk.ms[i]), 8, { of: '× as fast', digits: 1, unit: '×' })
    }
    if (cases.includes('job')) {
      log('10,000 documents: one asynchronous ATOMIC bulk vs 100 bulks of 100')
      const r = await runJob({ url, rounds: jobRounds, log })
      const of = (s) => ({ rate: `${fmt(10_000 / (median(s.ms) / 1000), 0)} documents/s`, p50: median(s.ms), p99: Math.max(...s.ms), cpu: median(s.cpu), rss: s.rss })
      const what = '10,000 documents created'
      row(what, '100 ATOMIC bulks of 100, one after another', of(r.bulks), '1 (baseline)')
      guarded(what, 'one asynchronous ATOMIC bulk (a job)', of(r.job), r.bulks.ms.map((ms, i) => ms / r.job.ms[i]), 0.8, { of: ' of the entity rate' })
      const monitor = `GET a job's monitor, its result of 10,000 operations (${fmt(r.monitorBytes / 1048576, 1)} MB)`
      row(monitor, 'bare Fastify + pg: the job\'s row, its result sent as stored', summary(r.monitor['monitor bare']), '1 (baseline)')
      guarded(monitor, 'reference service', summary(r.monitor['monitor service']), ratios(r.monitor, 'monitor service', 'monitor bare'), 0.8, { of: ' of bare' })
    }
    if (cases.includes('events')) {
      log('outgoing events: delivery throughput, POST with a subscription, commit to delivery')
      const r = await runEvents({ url, log })
      const what = 'events delivered to a subscriber answering 204'
      const t = r.throughput
      const f = r.floorThroughput
      const perEvent = (x, who) => `CPU per event: ${who}; PostgreSQL's ${fmt(x.pg)}, the subscriber's ${fmt(x.subscriber)}, the whole machine's ${fmt(x.machine)} µs`
      row(what, `the floor: its bare deliverer draining as many from its bare outbox table (${perEvent(f, 'the deliverer\'s')})`, f, '1 (baseline)')
      checked(what, `reference service, default settings (${perEvent(t, 'the service\'s')})`, t, t.eventsPerSecond, 3000,
        { ratio: `${fmt(t.eventsPerSecond / f.eventsPerSecond, 3)} of the floor's rate`, guard: '≥ 3,000 events/s' })
      // The whole machine's: the suite's dispatcher and the floor's deliverer make PostgreSQL and the subscriber work differently.
      const machine = t.machine / f.machine
      checked(`${what}: CPU per event, whole machine`, `reference service over the floor (${fmt(t.machine)} µs over ${fmt(f.machine)})`, cpuOnly(t.machine), machine, 1.5,
        { ratio: `${fmt(machine, 3)}× the floor's`, guard: '≤ 1.50× the floor\'s', atMost: true })
      const post = 'POST `/v1/documents`'
      row(post, 'its context\'s one subscription switched off, on an instance that delivers none', summary(r.written.without), '1 (baseline)')
      guarded(post, 'the subscription on, on an instance that delivers none (`WEBHOOK_DELIVERY=false`): the outbox write alone', summary(r.written['with a subscription']),
        ratios(r.written, 'with a subscription', 'without'), 0.9, { of: ' of none', spread: `${post} with a subscription, the outbox write alone` })
      // Information: what the least outbox costs those POSTs on this machine.
      row(post, 'the floor, in the same rounds: the subscription off, a trigger writing each event to a bare outbox table, none delivered',
        summary(r.written.floor), `${fmt(median(ratios(r.written, 'floor', 'without')), 3)} of none; the suite ${fmt(median(ratios(r.written, 'with a subscription', 'floor')), 3)} of this`)
      row(post, 'the subscription switched off', summary(r.rounds.without), '1 (baseline)')
      // On a small machine delivery takes its CPU from the POSTs, the floor's as much: guarded
      // against the floor's rounds beside it, as none's ratio cannot be on two cores.
      guarded(post, 'the subscription on, its events delivered meanwhile by the same instance', summary(r.rounds['with a subscription']),
        ratios(r.rounds, 'with a subscription', 'floor'), 0.65,
        { of: ` of the floor's (below); ${fmt(median(ratios(r.rounds, 'with a subscription', 'without')), 3)} of none`, spread: `${post} with a subscription delivered by the same instance, over the floor's` })
      row(post, 'the floor, in the same rounds: the subscription off, a trigger writing each event to a bare outbox table, a bare process delivering them (no outcome recorded, no retry)',
        summary(r.rounds.floor), `${fmt(median(ratios(r.rounds, 'floor', 'without')), 3)} of none; the suite ${fmt(median(ratios(r.rounds, 'with a subscription', 'floor')), 3)} of this`)
      // Where each POST's CPU went, the machine's cores being shared by all.
      const split = (rounds) => Object.fromEntries(['cpu', 'pg', 'subscriber', 'generator', 'machine'].map((k) => [k, median(rounds.map((x) => x[k]))]))
      const none = split(r.rounds.without)
      const one = split(r.rounds['with a subscription'])
      const least = split(r.rounds.floor)
      const by = (s) => `service ${fmt(s.cpu)}, PostgreSQL ${fmt(s.pg)}, subscriber ${fmt(s.subscriber)}, load generator ${fmt(s.generator)} µs`
      const cpuRow = `${post}: CPU per request, whole machine`
      row(cpuRow, `subscription off: ${by(none)}`, cpuOnly(none.machine), '1 (baseline)')
      checked(cpuRow, `subscription on: ${by(one)}`, cpuOnly(one.machine), one.machine / least.machine, 1.5,
        { ratio: `${fmt(none.machine / one.machine, 3)}: none's over this; ${fmt(one.machine / least.machine, 3)}× the floor's (below)`, guard: '≤ 1.50× the floor\'s', atMost: true })
      row(cpuRow, `the floor: ${by(least)} (its deliverer: the rest of the machine's)`, cpuOnly(least.machine), `${fmt(none.machine / least.machine, 3)}: none's over this`)
      row(post, 'its context\'s subscriptions all off, on an instance that delivers none (rounds of their own)', summary(r.crowd.without), '1 (baseline)')
      guarded(post, 'the same, 2,000 of them on, each wanting only author events', summary(r.crowd.beside),
        ratios(r.crowd, 'beside', 'without'), 0.95, { of: ' of none', spread: `${post} beside 2,000 subscriptions to other events` })
      const lagMet = r.latency.p50 <= 1000 && r.latency.p99 <= 5000
      if (!lagMet) failed.push(`commit to delivery: p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, guard p50 ≤ 1 s and p99 ≤ 5 s`)
      row('commit to delivery, under that load', `${fmt(r.latency.count)} events`, { rate: '', p50: r.latency.p50, p99: r.latency.p99, cpu: NaN, rss: NaN }, '', `p50 ≤ 1,000 ms, p99 ≤ 5,000 ms: ${lagMet ? 'met' : '**failed**'}`)
      row('commit to delivery, under that load', `the floor's, ${fmt(r.floorLatency.count)} events`, { rate: '', p50: r.floorLatency.p50, p99: r.floorLatency.p99, cpu: NaN, rss: NaN })
    }
  } finally {
    await database.close()
  }
}

const { lines: warnings, failing } = serverWarningLines()
for (const w of failing) failed.push(`a server warned: ${w}`)

const cpus = os.cpus()
const minutes = (Date.now() - started) / 60000
const text = [
  `${smoke ? '**Smoke run** (settings below the defaults: figures not to be quoted). ' : ''}Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}${postgres === null ? '' : `, PostgreSQL ${postgres} (${process.env.BENCH_DATABASE_URL === undefined ? 'throwaway, `fsync=off`' : 'BENCH_DATABASE_URL'})`}, load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} at the start; ${settings.connections} connections; ${plural(settings.rounds, 'paired round')} of ${settings.duration} s per case over ${plural(Math.min(settings.processes, settings.rounds), 'fresh set')} of server processes, ${settings.warmup} s of warm-up per case and set; ${cases.includes('bulk') ? `${bulkRounds} bulk rounds; ` : ''}${!cases.includes('trivial') ? '' : pinning === null ? 'no CPU pinning; ' : `trivial route pinned (servers on CPU ${pinning.server}, autocannon on CPU ${pinning.client}), the cases on PostgreSQL not; `}whole run ${fmt(minutes, 1)} min (\`npm run bench\`).`,
  '',
  '| case | server / way | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | ratio | guard |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  ...rows,
  '',
  `Figures are medians over the rounds; a ratio compares throughput (or, in a row of CPU, the CPU per request or event) with the baseline row above it, and is the median of the ratios of the rounds, each measured with the baseline in the same round. Spread of the rounds' ratios: ${spreads.join('; ')}.${cases.includes('bulk') ? ' `ms/op` rows are sequential, one client: one operation of 100 documents created or replaced (p99: the slowest round; CPU per document).' : ''} Peak RSS is the server process's over its life.`,
  '',
  warnings.length === 0 ? 'No server process emitted a warning.' : `Warnings of the server processes (a run with any but an ExperimentalWarning fails):\n\n${warnings.map((w) => `- ${w}`).join('\n')}`
].join('\n')
console.log(`# svc-conventions benchmarks\n\n${text}`)
const dir = new URL('./results/', import.meta.url)
mkdirSync(dir, { recursive: true })
writeFileSync(new URL('latest.md', dir), text + '\n')
log('written to bench/results/latest.md')
if (failed.length > 0) {
  log(`guards failed:\n${failed.map((f) => `- ${f}`).join('\n')}`)
  process.exitCode = 1
}
