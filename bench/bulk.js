// 100 documents created by one ATOMIC bulk PATCH `/v1/documents` against 100 sequential POSTs,
// one client, on the seeded database (run.js). Both are timed from the client; the rounds
// alternate the two ways (after a few warm-up rounds), and the speed-up is the median of the
// rounds' ratios. BENCH_BULK_ROUNDS rounds (default 20): one round is a fraction of a second.
import { authorIds } from './seed.js'
import { call, startService } from './lib/service.js'
import { fmt } from './lib/harness.js'

const WARMUP = 3
const N = 100

let seq = 0
const doc = () => ({ name: `bulk-${process.pid}-${++seq}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50', pages: [{ number: 1 }] })

const ways = {
  async bulk (service) {
    const body = { transactionMode: 'ATOMIC', operations: Array.from({ length: N }, () => ({ action: 'CREATE', entity: doc() })) }
    const outcome = await call(service, 'PATCH', '/v1/documents', { body })
    if (outcome.status !== 'SUCCEEDED') throw new Error(`bulk ATOMIC: ${JSON.stringify(outcome).slice(0, 500)}`)
  },
  async posts (service) {
    for (let i = 0; i < N; i++) await call(service, 'POST', '/v1/documents', { body: doc(), expect: 201 })
  }
}

/** Returns, per way, each round's milliseconds and server CPU µs per document, and the server's peak RSS. */
export async function runBulk ({ url, rounds, log }) {
  const service = await startService(url)
  try {
    for (let i = 0; i < WARMUP; i++) for (const way of Object.values(ways)) await way(service)
    const samples = Object.fromEntries(Object.keys(ways).map((k) => [k, { ms: [], cpu: [], rss: 0 }]))
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? Object.keys(ways) : Object.keys(ways).reverse()
      for (const name of order) {
        const before = await service.stats()
        const start = process.hrtime.bigint()
        await ways[name](service)
        const ms = Number(process.hrtime.bigint() - start) / 1e6
        const after = await service.stats()
        samples[name].ms.push(ms)
        samples[name].cpu.push((after.cpuMicros - before.cpuMicros) / N)
        samples[name].rss = Math.max(samples[name].rss, after.peakRss / 1048576)
      }
      log(`  round ${i + 1}: bulk ${fmt(samples.bulk.ms[i], 1)} ms, 100 POSTs ${fmt(samples.posts.ms[i], 1)} ms`)
    }
    return samples
  } finally {
    await service.stop()
  }
}
