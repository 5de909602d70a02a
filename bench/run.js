// `npm run bench`: builds, starts a throwaway PostgreSQL server, runs every benchmark side by
// side with its baseline and prints ONE table (also written to bench/results/latest.md, which
// `node bench/quote.js` copies into README.md and bench/README.md). Progress goes to stderr.
// BENCH_DURATION (s per round, default 10), BENCH_ROUNDS (default 2), BENCH_CONNECTIONS
// (default 50), BENCH_BULK_ROUNDS (default 20) and BENCH_DOCUMENTS (default 1,000,000) tune it.
import os from 'node:os'
import { mkdirSync, writeFileSync } from 'node:fs'
import pg from 'pg'
import { runTrivial } from './trivial.js'
import { runResource } from './resource.js'
import { runCollection, mean, spread } from './collection.js'
import { runBulk } from './bulk.js'
import { startPostgres } from '../scripts/postgres.js'
import { fmt, pinning } from './lib/harness.js'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const started = Date.now()
const loadBefore = os.loadavg()
const log = (line) => process.stderr.write(line + '\n')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] }

/** One row of the table: figures, and the ratio to its baseline with the issue's target. */
const rows = []
function row (c, way, r, { ratio = '1 (baseline)', target = '', met = null, rate = fmt(r.rps), cpu = fmt(r.cpu, 1) } = {}) {
  const verdict = met === null ? '' : met ? 'met' : '**MISSED**'
  rows.push(`| ${c} | ${way} | ${rate} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${cpu} | ${fmt(r.rss)} | ${ratio} | ${target} | ${verdict} |`)
}
function compared (c, way, r, base, target, what = 'baseline', ratio = r.rps / base.rps) {
  row(c, way, r, { ratio: `${fmt(ratio, 3)} of ${what}`, target: target === null ? 'none' : `≥ ${fmt(target, 2)}`, met: target === null ? null : ratio >= target })
}

log('trivial authenticated route: bare Fastify vs the conventions core')
const trivial = await runTrivial()
row('trivial route `GET /ping`', 'bare Fastify', trivial.bare)
// The median of paired short rounds (trivial.js), not the ratio of the means.
compared('trivial route `GET /ping`', 'full suite (conventions core)', trivial.suite, trivial.bare, 0.9, 'bare', trivial.ratio)

const pgServer = await startPostgres()
let postgresVersion = ''
let res, collection, bulk
try {
  const client = new pg.Client({ connectionString: pgServer.url })
  await client.connect()
  postgresVersion = (await client.query('SHOW server_version')).rows[0].server_version
  await client.end()
  log('documents on PostgreSQL: the service vs bare Fastify + pg (GET item, POST, webhook delivery)')
  res = await runResource({ pgUrl: pgServer.url })
  log('collections on 1,000,000 documents')
  collection = await runCollection({ pgUrl: pgServer.url })
  log('100-operation bulk vs 100 POSTs')
  bulk = await runBulk({ pgUrl: pgServer.url })
} finally {
  pgServer.stop()
}

const resource = (key) => mean(res[key])
for (const [scenario, target] of [['GET item', 0.85], ['POST', 0.85], ['webhook delivery', null]]) {
  const name = scenario === 'webhook delivery' ? 'webhook delivery (signed, new id each)' : scenario === 'GET item' ? 'GET item `/v1/documents/{id}`' : 'POST `/v1/documents`'
  const bare = resource(`${scenario}|bare`)
  row(name, 'bare Fastify + pg', bare)
  compared(name, 'reference service', resource(`${scenario}|service`), bare, target, 'bare')
}

const depth = fmt(collection.depth)
const docs = fmt(collection.count)
const first = mean(collection.cases.first)
row(`first page, ${docs} documents`, 'reference service', first)
compared(`page ${depth} deep by cursor`, 'reference service', mean(collection.cases.deep), first, 0.85, 'first page', collection.ratio.deep)
const offset = mean([collection.offset])
row(`page ${depth} deep by \`offset\` (contrast)`, `reference service, ${collection.offset.requests} sequential`, offset, {
  rate: `${fmt(1000 / offset.rps, 0)} ms/op`, ratio: `${fmt(offset.rps / first.rps, 5)} of first page`, target: 'none'
})
const bareFiltered = mean(collection.cases.bare)
row('filtered + ordered page', 'bare Fastify + pg (same SQL)', bareFiltered)
const filtered = mean(collection.cases.filtered)
compared('filtered + ordered page', 'reference service', filtered, bareFiltered, 0.9, 'bare', collection.ratio.filtered)
// The service prepares a statement that repeats; the hand-written route above does not. This
// one does: the ratio to it is the suite's own cost, without that gain.
const barePrepared = mean(collection.cases.barePrepared)
row('filtered + ordered page (contrast)', 'bare Fastify + pg, statement prepared', barePrepared, { ratio: `service ${fmt(collection.ratio.filteredPrepared, 3)} of it`, target: 'none' })
rows.push(`| five-clause FIQL parse + check + compile | in process | ${fmt(collection.compileMicros, 2)} µs/call | | | | | | < 20 µs | ${collection.compileMicros < 20 ? 'met' : '**MISSED**'} |`)

// Sequential, one client: ms per operation of 100 entities, CPU per entity.
const posts = median(bulk['100 × POST'].ms)
const ways = ['100 × POST', ...Object.keys(bulk).filter(k => k !== '100 × POST')]
for (const [name, s] of ways.map(k => [k, bulk[k]])) {
  const r = { p50: median(s.ms), p99: quantile(s.ms, 0.99), rss: s.peakRssMb }
  const cpu = `${fmt(median(s.cpu), 1)} /entity`
  const rate = `${fmt(median(s.ms), 1)} ms/op`
  if (name === '100 × POST') row('100 documents created', '100 sequential POSTs', r, { rate, cpu })
  else row('100 documents created', name === 'bulk ISOLATED, 1 failing' ? 'one bulk PATCH, ISOLATED, 1 op failing' : `one bulk PATCH, ${name.slice(5)}`, r, { rate, cpu, ratio: `${fmt(posts / r.p50, 1)}× the speed of 100 POSTs`, target: 'none' })
}

const cpus = os.cpus()
const minutes = (Date.now() - started) / 60000
const text = [
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${postgresVersion} (throwaway, \`fsync=off\`), load average ${loadBefore.map(l => l.toFixed(1)).join(' ')} at the start; ${pinning === null ? 'no CPU pinning' : `trivial route: servers pinned to CPU ${pinning.server}, autocannon to CPU ${pinning.client}; cases with PostgreSQL unpinned`}; ${connections} connections, ${rounds} × ${duration} s per case, alternating with its baseline (the trivial route as ${trivial.pairs} pairs of ${trivial.slice}-s rounds over ${trivial.processes} fresh pairs of server processes, the pages as ${collection.passes} passes of ${collection.slice}-s rounds over ${collection.processes} fresh sets of server processes); whole run ${fmt(minutes, 1)} min (\`npm run bench\`).`,
  '',
  '| case | server / way | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | ratio | target | |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |',
  ...rows,
  '',
  `Ratios compare throughput with the baseline row above them, measured in the same run; the trivial route's is the median of its ${trivial.pairs} pairs' ratios (they ranged from ${fmt(Math.min(...trivial.ratios), 3)} to ${fmt(Math.max(...trivial.ratios), 3)}; CPU per request, median of the pairs: ${fmt(trivial.cpuRatio, 2)} of bare's), the pages' the median of their ${collection.passes} passes' (deep page ${spread(collection.ratios.deep)}, filtered page ${spread(collection.ratios.filtered)}, against the prepared bare route ${spread(collection.ratios.filteredPrepared)}). \`ms/op\` rows are sequential (one client): the bulk rows time one operation creating 100 documents (p99 over the rounds; CPU per entity), the \`offset\` row one page. Peak RSS is the server process's, over its life.`
].join('\n')
console.log(`# svc-conventions benchmarks\n\n${text}`)
const dir = new URL('./results/', import.meta.url)
mkdirSync(dir, { recursive: true })
writeFileSync(new URL('latest.md', dir), text + '\n')
log('written to bench/results/latest.md; `node bench/quote.js` quotes it in README.md and bench/README.md')
