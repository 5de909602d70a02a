// Issue 2's benchmark: bare Fastify vs the full conventions core on the same trivial
// authenticated route, measured side by side in one run. The BENCH_ROUNDS × BENCH_DURATION
// of load per server is cut into five times as many short rounds, in pairs (bare, suite, then
// suite, bare, …); the ratio is the median of the pairs' ratios, so a burst of the machine's
// noise that lands on one server's round moves one pair, not the verdict. The pairs are
// spread over BENCH_PROCESSES fresh pairs of server processes: how V8 happens to compile a
// process's hot paths moves its CPU per request by up to 10 %, for bare Fastify as for the
// suite, and one process pair would carry that luck into every pair it serves.
import { startServer, load, measure, median, fmt, pinned } from './lib/harness.js'
import { PING_SECRET as SECRET, pingHeaders as headers } from './lib/ping.js'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const processes = Number(process.env.BENCH_PROCESSES ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)

export async function runTrivial () {
  return await pinned(measureTrivial)
}

async function measureTrivial () {
  const results = { bare: [], suite: [] }
  const pairs = rounds * 5
  const slice = Math.max(1, Math.round(duration / 5))
  const started = Math.max(1, Math.min(processes, pairs))
  for (let p = 0; p < started; p++) {
    const bare = await startServer(new URL('./servers/bare.js', import.meta.url).pathname)
    const suite = await startServer(new URL('./servers/suite.js', import.meta.url).pathname, { BENCH_SECRET: SECRET })
    try {
      for (const server of [bare, suite]) {
        await load({ url: `http://127.0.0.1:${server.port}/ping`, connections, duration: 2, headers }) // warm-up
      }
      // This process pair's share of the pairs; the order alternates over the whole run.
      for (let i = Math.round(p * pairs / started); i < Math.round((p + 1) * pairs / started); i++) {
        const order = i % 2 === 0 ? [['bare', bare], ['suite', suite]] : [['suite', suite], ['bare', bare]]
        for (const [name, server] of order) {
          const r = await measure(server, () => load({ url: `http://127.0.0.1:${server.port}/ping`, connections, duration: slice, headers }))
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx and ${r.errors} errors`)
          results[name].push(r)
        }
        process.stderr.write(`  pair ${i + 1} (servers ${p + 1}): bare ${fmt(results.bare[i].rps)} req/s ${fmt(results.bare[i].cpuPerReqMicros, 1)} µs CPU/req, suite ${fmt(results.suite[i].rps)} req/s ${fmt(results.suite[i].cpuPerReqMicros, 1)} µs CPU/req\n`)
      }
    } finally {
      await bare.stop()
      await suite.stop()
    }
  }
  const avg = (rs, k) => rs.reduce((s, r) => s + r[k], 0) / rs.length
  const row = (name) => ({
    name,
    rps: avg(results[name], 'rps'),
    p50: avg(results[name], 'p50'),
    p99: avg(results[name], 'p99'),
    cpu: avg(results[name], 'cpuPerReqMicros'),
    rss: Math.max(...results[name].map(r => r.peakRssMb))
  })
  const ratios = results.suite.map((r, i) => r.rps / results.bare[i].rps)
  const cpuRatios = results.suite.map((r, i) => r.cpuPerReqMicros / results.bare[i].cpuPerReqMicros)
  return { bare: row('bare'), suite: row('suite'), ratio: median(ratios), ratios, cpuRatio: median(cpuRatios), pairs, slice, processes: started }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { bare, suite, ratio, ratios, cpuRatio, pairs, slice, processes } = await runTrivial()
  console.log(`\ntrivial authenticated route, ${connections} connections, ${pairs} pairs of ${slice}-s rounds over ${processes} pairs of server processes\n`)
  console.log('| server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const r of [bare, suite]) console.log(`| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.cpu, 1)} | ${fmt(r.rss)} |`)
  console.log(`\nthroughput ratio suite/bare, median of the pairs: ${fmt(ratio, 3)} (target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'MISSED'}; pairs ${fmt(Math.min(...ratios), 3)} to ${fmt(Math.max(...ratios), 3)}); CPU per request ratio, median: ${fmt(cpuRatio, 2)}`)
}
