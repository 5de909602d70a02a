// Issue 4's benchmark: collections of 1,000,000 documents on a PostgreSQL server. In one run,
// cases alternating with their baseline:
// - the first page vs a page 500,000 items deep by cursor (keyset paging: target ≥ 0.85 of
//   the first page's throughput), and the same depth by OFFSET for contrast;
// - a filtered and ordered page through the service vs bare Fastify + pg running the same SQL
//   (target ≥ 0.90), and, for contrast, vs the same bare route with its statement prepared (the
//   service prepares a text that repeats, store/prepared.ts; a hand-written route does not);
// - parsing, checking and compiling a five-clause FIQL filter, in µs per call (target < 20).
//
// As for the trivial route, the BENCH_ROUNDS × BENCH_DURATION of load per case is cut into five
// times as many short rounds; each pass runs every case once, in an order reversed every other
// pass, and a ratio is the median of the passes' ratios, so a burst of the machine's noise moves
// one pass, not the verdict. The passes are spread over BENCH_PROCESSES fresh sets of server
// processes (each warmed up 2 s per case): how V8 compiles one process moves its CPU per page by
// up to 10 %, and one set of processes would carry that luck into every pass. Table figures are
// means over the rounds.
//
// The deep cursor is made with the service's own cursor codec and CURSOR_SECRET (the benchmark
// sets the secret), for the keyset of the row at that depth; it is checked first against the
// cursor the service itself gives for the first page, so it is the cursor a client paging that
// far would hold.
import os from 'node:os'
import pg from 'pg'
import { benchDatabase } from './lib/admin.js'
import { signToken } from '../dist/index.js'
import { createCursorCodec, queryFingerprint } from '../dist/plugins/query/cursor.js'
import { parseFilter } from '../dist/plugins/query/fiql-check.js'
import { fieldMapOf } from '../dist/plugins/resource/collection.js'
import { compileSql } from '../dist/store/sql-query.js'
import { documents } from '../dist/routes/v1/documents.js'
import { startServer, load, measure, median, fmt } from './lib/harness.js'
import { seed } from './seed.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const CURSOR_SECRET = 'bench-cursor-secret-that-is-long-enough'
const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const processes = Number(process.env.BENCH_PROCESSES ?? 5)
const COUNT = Number(process.env.BENCH_DOCUMENTS ?? 1_000_000)
const DEPTH = Math.floor(COUNT / 2)
const OFFSET_REQUESTS = 5
const COMPILE_ITERATIONS = 100_000

/** The filtered and ordered page, through the service and the baseline. */
export const FILTERED = 'kind=INVOICE&filter=pageCount=ge=100;status==PUBLISHED&ordering=-pageCount'
/** The five-clause filter of the compile microbenchmark. */
export const FIVE_CLAUSES = 'status==PUBLISHED;kind=in=(INVOICE,CONTRACT);pageCount=ge=100;name==Inv*;createdDateTime=gt=2022-01-01T00:00:00Z'

const token = signToken({ secret: SECRET, sub: 'bench', scope: 'documents:read', expiresIn: '2h' })
const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
const log = (line) => process.stderr.write(line + '\n')

async function getJson (base, path) {
  const res = await fetch(base + path, { headers })
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
  return await res.json()
}

/** The deep page's cursor, sealed like the service's own (see the top of this file). */
async function deepCursor (base, db) {
  const codec = createCursorCodec({ secret: CURSOR_SECRET })
  // The query plugin's default scope for /v1/documents: route path, path parameters, execution context.
  const fingerprint = queryFingerprint('/v1/documents\u0000{}\u0000prod', [{ field: 'id', direction: 'asc' }], null)
  const first = await getJson(base, '/v1/documents?limit=20')
  const last = first.results[first.results.length - 1].id
  if (codec.encode({ direction: 'next', values: [last] }, fingerprint) !== first.paging.next.cursor) {
    throw new Error('the cursor made here differs from the service\'s own: the scope or the secret changed')
  }
  const { rows } = await db.query(`SELECT id FROM documents WHERE ctx = 'prod' ORDER BY id COLLATE "C" OFFSET ${DEPTH - 1} LIMIT 2`)
  const cursor = codec.encode({ direction: 'next', values: [rows[0].id] }, fingerprint)
  const deep = await getJson(base, `/v1/documents?limit=20&cursor=${cursor}`)
  if (deep.results[0]?.id !== rows[1].id) throw new Error('the deep page does not start after the boundary row')
  return cursor
}

/** `n` requests one after the other (a page by OFFSET takes seconds): latencies in ms. */
async function sequential (base, path, n) {
  const times = []
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint()
    await getJson(base, path)
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  times.sort((a, b) => a - b)
  const total = times.reduce((s, t) => s + t, 0)
  const at = (q) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]
  return { requests: n, rps: (n * 1000) / total, p50: at(0.5), p99: at(0.99), non2xx: 0, errors: 0 }
}

/** Mean µs of FIQL parse + check against the field map + compileSql, after a warm-up. */
export function compileMicros (iterations = COMPILE_ITERATIONS) {
  const fields = fieldMapOf(documents)
  const ordering = [{ field: 'pageCount', direction: 'desc' }, { field: 'id', direction: 'asc' }]
  const paging = { kind: 'cursor', limit: 20 }
  let sink = 0
  const once = () => { sink += compileSql({ filter: parseFilter(FIVE_CLAUSES, fields), ordering, paging }, fields, { paramStart: 2 }).where.length }
  for (let i = 0; i < 20_000; i++) once()
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) once()
  const micros = Number(process.hrtime.bigint() - start) / 1e3 / iterations
  if (sink === 0) throw new Error('nothing compiled')
  return micros
}

const DATABASE = 'svc_bench_collection'

/**
 * Runs every case; returns { cases: { name: [round results] }, offset, compileMicros, seedMs,
 * count, depth }. Starts a throwaway PostgreSQL server unless `pgUrl` names one; either way
 * the documents go to a database of their own, made for the run and dropped after it.
 */
export async function runCollection ({ pgUrl } = {}) {
  const database = await benchDatabase(DATABASE, pgUrl)
  const url = database.url
  let servers = []
  const stopAll = async () => { for (const s of servers) await s.stop(); servers = [] }
  const db = new pg.Client({ connectionString: url })
  const base = (s) => `http://127.0.0.1:${s.port}`
  /** A fresh service, bare route and bare route with its statement prepared. */
  const startAll = async () => {
    const service = await startServer(new URL('./servers/service.js', import.meta.url).pathname, { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, CURSOR_SECRET })
    servers.push(service)
    const bare = await startServer(new URL('./servers/pg-collection.js', import.meta.url).pathname, { DATABASE_URL: url, BENCH_QUERY: FILTERED })
    servers.push(bare)
    const barePrepared = await startServer(new URL('./servers/pg-collection.js', import.meta.url).pathname, { DATABASE_URL: url, BENCH_QUERY: FILTERED, BENCH_PREPARED: '1' })
    servers.push(barePrepared)
    return { service, bare, barePrepared }
  }
  try {
    // The service migrates the schema as it starts, before the seeding.
    servers.push(await startServer(new URL('./servers/service.js', import.meta.url).pathname, { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, CURSOR_SECRET }))
    const { ms: seedMs } = await seed({ url, count: COUNT, log })
    await stopAll()
    await db.connect()
    let set = await startAll()
    const cursor = await deepCursor(base(set.service), db)

    // The baseline runs the service's statement: same rows, same order.
    const mine = (await getJson(base(set.service), `/v1/documents?limit=20&${FILTERED}`)).results.map(r => r.id).join()
    const theirs = (await getJson(base(set.bare), '/v1/documents')).results.slice(0, 20).map(r => r.id).join()
    if (mine !== theirs) throw new Error('the baseline\'s rows differ from the service\'s: not the same query')

    const cases = {
      first: ['service', '/v1/documents?limit=20'],
      deep: ['service', `/v1/documents?limit=20&cursor=${cursor}`],
      bare: ['bare', '/v1/documents'],
      filtered: ['service', `/v1/documents?limit=20&${FILTERED}`],
      barePrepared: ['barePrepared', '/v1/documents']
    }
    const run = async (name, seconds) => {
      const server = set[cases[name][0]]
      const r = await measure(server, () => load({ url: base(server) + cases[name][1], connections, duration: seconds, headers }))
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
      return r
    }
    const results = Object.fromEntries(Object.keys(cases).map(name => [name, []]))
    const passes = rounds * 5
    const slice = Math.max(1, Math.round(duration / 5))
    const sets = Math.max(1, Math.min(processes, passes))
    for (let p = 0; p < sets; p++) {
      if (p > 0) {
        await stopAll()
        set = await startAll()
      }
      for (const name of Object.keys(cases)) await run(name, 2) // warm-up
      // This set of processes' share of the passes; the order alternates over the whole run.
      for (let i = Math.round(p * passes / sets); i < Math.round((p + 1) * passes / sets); i++) {
        const order = i % 2 === 0 ? Object.keys(cases) : Object.keys(cases).reverse()
        for (const name of order) results[name].push(await run(name, slice))
        const at = (name) => results[name][i].rps
        log(`  pass ${i + 1} (servers ${p + 1}): first ${fmt(at('first'))}, deep ${fmt(at('deep'))}, bare ${fmt(at('bare'))}, filtered ${fmt(at('filtered'))}, bare prepared ${fmt(at('barePrepared'))} req/s`)
      }
    }
    const ratiosOf = (of, to) => results[of].map((r, i) => r.rps / results[to][i].rps)
    const ratios = { deep: ratiosOf('deep', 'first'), filtered: ratiosOf('filtered', 'bare'), filteredPrepared: ratiosOf('filtered', 'barePrepared') }
    const service = set.service

    await getJson(base(service), `/v1/documents?limit=20&offset=${DEPTH}`) // warm-up
    const offset = await measure(service, () => sequential(base(service), `/v1/documents?limit=20&offset=${DEPTH}`, OFFSET_REQUESTS))
    log(`  offset ${DEPTH}: ${fmt(offset.p50, 0)} ms per page`)

    // Last, with the load generators stopped.
    const micros = compileMicros()
    log(`  five-clause filter: ${fmt(micros, 2)} µs per parse + check + compile`)
    return {
      cases: results,
      // Every pass's ratio, and their medians.
      ratios,
      ratio: Object.fromEntries(Object.entries(ratios).map(([k, rs]) => [k, median(rs)])),
      passes,
      slice,
      processes: sets,
      offset,
      compileMicros: micros,
      seedMs,
      count: COUNT,
      depth: DEPTH
    }
  } finally {
    await db.end().catch(() => {})
    await stopAll()
    await database.close()
  }
}

const avg = (rs, k) => rs.reduce((s, r) => s + r[k], 0) / rs.length
/** The mean figures of a case's rounds, and the server's peak RSS over them. */
export const mean = (rs) => ({ rps: avg(rs, 'rps'), p50: avg(rs, 'p50'), p99: avg(rs, 'p99'), cpu: avg(rs, 'cpuPerReqMicros'), rss: Math.max(...rs.map(r => r.peakRssMb)) })

/** `min to max` of a list of ratios. */
export const spread = (rs) => `${fmt(Math.min(...rs), 3)} to ${fmt(Math.max(...rs), 3)}`

/** The report of runCollection's results: markdown table and verdicts, as lines. */
export function collectionReport (res) {
  const first = mean(res.cases.first)
  const deep = mean(res.cases.deep)
  const bare = mean(res.cases.bare)
  const filtered = mean(res.cases.filtered)
  const barePrepared = mean(res.cases.barePrepared)
  const offset = mean([res.offset])
  const depth = fmt(res.depth)
  const verdict = (ok) => ok ? 'met' : 'MISSED'
  const deepRatio = res.ratio.deep
  const filteredRatio = res.ratio.filtered
  const row = (name, r, ratio, target) => `| ${name} | ${fmt(r.rps, r.rps < 10 ? 2 : 0)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.cpu, 0)} | ${fmt(r.rss)} | ${ratio} | ${target} |`
  return [
    '| case | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | ratio | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    row('first page (`limit=20`)', first, '1 (baseline)', ''),
    row(`page ${depth} deep, by cursor`, deep, `${fmt(deepRatio, 3)} of first page`, `≥ 0.85: ${verdict(deepRatio >= 0.85)}`),
    row(`page ${depth} deep, by \`offset\` (${res.offset.requests} sequential requests)`, offset, `${fmt(offset.rps / first.rps, 5)} of first page`, 'contrast'),
    row('filtered + ordered, bare Fastify + pg', bare, '1 (baseline)', ''),
    row('filtered + ordered, reference service', filtered, `${fmt(filteredRatio, 3)} of bare`, `≥ 0.90: ${verdict(filteredRatio >= 0.9)}`),
    row('filtered + ordered, bare Fastify + pg, statement prepared', barePrepared, `service ${fmt(res.ratio.filteredPrepared, 3)} of it`, 'contrast'),
    `| five-clause FIQL parse + check + compile | | | | | | ${fmt(res.compileMicros, 2)} µs per call | < 20 µs: ${verdict(res.compileMicros < 20)} |`,
    '',
    `Passes' ratios: deep page ${spread(res.ratios.deep)}; filtered page ${spread(res.ratios.filtered)}; against the prepared bare route ${spread(res.ratios.filteredPrepared)}.`
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now()
  const res = await runCollection({ pgUrl: process.env.BENCH_DATABASE_URL })
  const cpus = os.cpus()
  console.log(`\n${fmt(res.count)} documents on a PostgreSQL server (seeded in ${fmt(res.seedMs / 1000)} s), ${connections} connections, ${res.passes} passes of ${res.slice}-s rounds per case over ${res.processes} fresh sets of server processes, order reversed every other pass; ratios are medians of the passes' ratios`)
  console.log(`${new Date().toISOString().slice(0, 10)}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, load average ${os.loadavg().map(l => l.toFixed(1)).join(' ')}; whole run ${fmt((Date.now() - started) / 1000)} s\n`)
  console.log(collectionReport(res).join('\n'))
  console.log(`\nfiltered + ordered: \`GET /v1/documents?limit=20&${FILTERED}\`; five clauses: \`${FIVE_CLAUSES}\``)
}
