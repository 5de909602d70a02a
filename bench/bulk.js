// 100 documents created by one ATOMIC bulk PATCH `/v1/documents` against 100 sequential POSTs,
// one client, on the seeded database (run.js). Both are timed from the client; the rounds
// alternate the two ways (after a few warm-up rounds), and the speed-up is the median of the
// rounds' ratios. BENCH_BULK_ROUNDS rounds (default 20): one round is a fraction of a second.
import { authorIds } from './seed.js'
import { call, sequentialRounds, startService } from './lib/service.js'
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
    return await sequentialRounds(service, { ways, perRound: N, rounds, warmup: WARMUP, log, describe: (s, i) => `bulk ${fmt(s.bulk.ms[i], 1)} ms, 100 POSTs ${fmt(s.posts.ms[i], 1)} ms` })
  } finally {
    await service.stop()
  }
}
