// Issue 5's benchmark: creating 100 documents with one bulk PATCH (ATOMIC, and ISOLATED)
// against 100 sequential POSTs, on a throwaway PostgreSQL server, the reference service from
// dist/ (run `npm run build` first), and the same ISOLATED bulk with one operation failing
// (the batch falls back to one statement per operation). Rounds alternate between the ways;
// each creates 100 new documents (99 for the failing one). Prints the median and p90 wall time per 100 entities, the
// throughput in entities per second and the server's CPU time per entity.
import { signToken } from '../dist/index.js'
import { startServer, fmt } from './lib/harness.js'
import { startPostgres } from '../scripts/postgres.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
// Its own knob: BENCH_ROUNDS counts the load rounds of the other benchmarks (a few), this one needs many samples.
const rounds = Number(process.env.BENCH_BULK_ROUNDS ?? 20)
const warmup = Number(process.env.BENCH_WARMUP ?? 3)
const N = 100

let seq = 0
const TAKEN = `taken-${process.pid}`
const doc = (authorId) => ({ name: `bulk-${process.pid}-${++seq}`, authorId, kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50', pages: [{ number: 1 }] })

async function send (base, method, path, headers, body) {
  const res = await fetch(base + path, { method, headers, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text }
}

const ways = {
  async 'bulk ATOMIC' (base, headers, authorId) {
    const res = await send(base, 'PATCH', '/v1/documents', headers, { transactionMode: 'ATOMIC', operations: Array.from({ length: N }, () => ({ action: 'CREATE', entity: doc(authorId) })) })
    if (res.status !== 200 || JSON.parse(res.body).status !== 'SUCCEEDED') throw new Error(`bulk ATOMIC: ${res.status} ${res.body.slice(0, 300)}`)
  },
  async 'bulk ISOLATED' (base, headers, authorId) {
    const res = await send(base, 'PATCH', '/v1/documents', headers, { operations: Array.from({ length: N }, () => ({ action: 'CREATE', entity: doc(authorId) })) })
    if (res.status !== 200 || JSON.parse(res.body).status !== 'SUCCEEDED') throw new Error(`bulk ISOLATED: ${res.status} ${res.body.slice(0, 300)}`)
  },
  // One operation breaks a constraint: the batch fails, and the 100 operations run one by one.
  async 'bulk ISOLATED, 1 failing' (base, headers, authorId) {
    const operations = Array.from({ length: N }, (_, i) => ({ action: 'CREATE', entity: i === N / 2 ? { ...doc(authorId), name: TAKEN } : doc(authorId) }))
    const res = await send(base, 'PATCH', '/v1/documents', headers, { operations })
    if (res.status !== 200 || JSON.parse(res.body).status !== 'PARTIAL') throw new Error(`bulk ISOLATED, 1 failing: ${res.status} ${res.body.slice(0, 300)}`)
  },
  async '100 × POST' (base, headers, authorId) {
    for (let i = 0; i < N; i++) {
      const res = await send(base, 'POST', '/v1/documents', headers, doc(authorId))
      if (res.status !== 201) throw new Error(`POST: ${res.status} ${res.body.slice(0, 300)}`)
    }
  }
}

function quantile (sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

/** Runs every way `rounds` times, alternating; returns { way: { ms: [], cpu: [] µs/entity, peakRssMb } }. */
export async function runBulk ({ pgUrl } = {}) {
  const pgServer = pgUrl === undefined ? await startPostgres() : null
  const url = pgUrl ?? pgServer.url
  const token = signToken({ secret: SECRET, sub: 'bench', scope: 'authors:read authors:write documents:read documents:write', expiresIn: '2h' })
  const headers = { 'user-agent': 'bench/1 (bulk)', accept: 'application/json', authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const service = await startServer(new URL('./servers/service.js', import.meta.url).pathname, { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET })
  try {
    const base = `http://127.0.0.1:${service.port}`
    const author = JSON.parse((await send(base, 'POST', '/v1/authors', headers, { name: 'Bench Author', email: 'bench@example.com' })).body)
    await send(base, 'POST', '/v1/documents', headers, { ...doc(author.id), name: TAKEN })
    for (let i = 0; i < warmup; i++) for (const way of Object.values(ways)) await way(base, headers, author.id)
    const samples = Object.fromEntries(Object.keys(ways).map(k => [k, { ms: [], cpu: [], peakRssMb: 0 }]))
    for (let i = 0; i < rounds; i++) {
      for (const [name, way] of Object.entries(ways)) {
        const before = await service.stats()
        const start = process.hrtime.bigint()
        await way(base, headers, author.id)
        const ms = Number(process.hrtime.bigint() - start) / 1e6
        const after = await service.stats()
        samples[name].ms.push(ms)
        samples[name].cpu.push((after.cpuMicros - before.cpuMicros) / N)
        samples[name].peakRssMb = Math.max(samples[name].peakRssMb, after.peakRss / 1048576)
      }
      process.stderr.write(`  round ${i + 1}/${rounds}: ${Object.entries(samples).map(([k, s]) => `${k} ${fmt(s.ms.at(-1), 1)} ms`).join(', ')}\n`)
    }
    return samples
  } finally {
    await service.stop()
    pgServer?.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const samples = await runBulk({ pgUrl: process.env.BENCH_DATABASE_URL })
  const summary = {}
  for (const [name, s] of Object.entries(samples)) {
    const ms = [...s.ms].sort((a, b) => a - b)
    const cpu = [...s.cpu].sort((a, b) => a - b)
    summary[name] = { median: quantile(ms, 0.5), p90: quantile(ms, 0.9), cpu: quantile(cpu, 0.5), rss: s.peakRssMb }
  }
  console.log(`\n${N} documents created on a PostgreSQL server, one client, ${rounds} rounds alternating (after ${warmup} warm-up rounds)\n`)
  console.log(`| way | median ms per ${N} | p90 ms per ${N} | entities/s (median) | server CPU µs/entity | peak RSS MB | vs 100 × POST |`)
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  const post = summary['100 × POST'].median
  for (const [name, r] of Object.entries(summary)) {
    console.log(`| ${name} | ${fmt(r.median, 1)} | ${fmt(r.p90, 1)} | ${fmt(N / r.median * 1000)} | ${fmt(r.cpu, 1)} | ${fmt(r.rss)} | ${fmt(post / r.median, 1)}× |`)
  }
}
