// Issue 2's benchmark: bare Fastify vs the full conventions core on the same trivial
// authenticated route, measured side by side in one run (rounds alternate to share noise).
import { signToken } from '../dist/index.js'
import { startServer, load, measure, fmt, pinned } from './lib/harness.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const token = signToken({ secret: SECRET, sub: 'bench', scope: 'ping:read', expiresIn: '1h' })
const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }

export async function runTrivial () {
  return await pinned(measureTrivial)
}

async function measureTrivial () {
  const bare = await startServer(new URL('./servers/bare.js', import.meta.url).pathname)
  const suite = await startServer(new URL('./servers/suite.js', import.meta.url).pathname, { BENCH_SECRET: SECRET })
  const results = { bare: [], suite: [] }
  try {
    for (const server of [bare, suite]) {
      await load({ url: `http://127.0.0.1:${server.port}/ping`, connections, duration: 2, headers }) // warm-up
    }
    for (let i = 0; i < rounds; i++) {
      for (const [name, server] of [['bare', bare], ['suite', suite]]) {
        const r = await measure(server, () => load({ url: `http://127.0.0.1:${server.port}/ping`, connections, duration, headers }))
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx and ${r.errors} errors`)
        results[name].push(r)
        process.stderr.write(`  round ${i + 1} ${name}: ${fmt(r.rps)} req/s, ${fmt(r.cpuPerReqMicros, 1)} µs CPU/req\n`)
      }
    }
  } finally {
    await bare.stop()
    await suite.stop()
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
  return { bare: row('bare'), suite: row('suite') }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { bare, suite } = await runTrivial()
  console.log(`\ntrivial authenticated route, ${connections} connections, ${rounds} × ${duration} s each, alternating\n`)
  console.log('| server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const r of [bare, suite]) console.log(`| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.cpu, 1)} | ${fmt(r.rss)} |`)
  const ratio = suite.rps / bare.rps
  console.log(`\nthroughput ratio suite/bare: ${fmt(ratio, 3)} (target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'MISSED'}); CPU per request ratio: ${fmt(suite.cpu / bare.cpu, 2)}`)
}
