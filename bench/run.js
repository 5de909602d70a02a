// `npm run bench`: builds, starts a throwaway PostgreSQL server, runs every benchmark side by
// side with its baseline and prints one report. Set BENCH_DURATION / BENCH_ROUNDS /
// BENCH_CONNECTIONS to shorten or lengthen the runs.
import os from 'node:os'
import { runTrivial } from './trivial.js'
import { runResource } from './resource.js'
import { runCollection, collectionReport } from './collection.js'
import { runBulk } from './bulk.js'
import { startPostgres } from '../scripts/postgres.js'
import { fmt } from './lib/harness.js'

const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const avg = (rs, k) => rs.reduce((s, r) => s + r[k], 0) / rs.length

console.log(`# svc-conventions benchmarks, ${new Date().toISOString().slice(0, 10)}`)
console.log(`${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${connections} connections, ${rounds} × ${duration} s per case, cases alternating with their baseline\n`)

const rows = []
const verdicts = []
let collection = null
let bulkSamples = null

process.stderr.write('trivial authenticated route: bare Fastify vs the conventions core\n')
const trivial = await runTrivial()
rows.push(['trivial route', 'bare Fastify', trivial.bare], ['trivial route', 'full suite', trivial.suite])
const tr = trivial.suite.rps / trivial.bare.rps
verdicts.push(`trivial route: suite/bare throughput ${fmt(tr, 3)} (target ≥ 0.90: ${tr >= 0.9 ? 'met' : 'MISSED'}), CPU per request ${fmt(trivial.suite.cpu / trivial.bare.cpu, 2)}×`)

const pg = await startPostgres()
try {
  process.stderr.write('documents on PostgreSQL: the service vs bare Fastify + pg\n')
  const res = await runResource({ pgUrl: pg.url })
  for (const scenario of ['GET item', 'POST']) {
    for (const name of ['bare', 'service']) {
      const rs = res[`${scenario}|${name}`]
      rows.push([scenario, name === 'bare' ? 'bare Fastify + pg' : 'reference service', {
        rps: avg(rs, 'rps'), p50: avg(rs, 'p50'), p99: avg(rs, 'p99'), cpu: avg(rs, 'cpuPerReqMicros'), rss: Math.max(...rs.map(r => r.peakRssMb))
      }])
    }
    const ratio = avg(res[`${scenario}|service`], 'rps') / avg(res[`${scenario}|bare`], 'rps')
    verdicts.push(`${scenario}: service/baseline throughput ${fmt(ratio, 3)} (target ≥ 0.85: ${ratio >= 0.85 ? 'met' : 'MISSED'})`)
  }
  process.stderr.write('collections on 1,000,000 documents\n')
  collection = await runCollection({ pgUrl: pg.url })
  process.stderr.write('100-operation bulk vs 100 POSTs\n')
  bulkSamples = await runBulk({ pgUrl: pg.url })
} finally {
  pg.stop()
}

console.log('| case | server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB |')
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
for (const [c, name, r] of rows) console.log(`| ${c} | ${name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.cpu, 1)} | ${fmt(r.rss)} |`)
console.log('')
for (const v of verdicts) console.log(`- ${v}`)

console.log('\n## Collections on 1,000,000 documents\n')
console.log(collectionReport(collection).join('\n'))
console.log('\n## 100-operation bulk vs 100 POSTs (median ms per 100 entities)\n')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const post = median(bulkSamples['100 × POST'].ms)
for (const [name, s] of Object.entries(bulkSamples)) console.log(`- ${name}: ${fmt(median(s.ms), 1)} ms (${fmt(post / median(s.ms), 1)}× faster than 100 POSTs)`)
