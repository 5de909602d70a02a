// 10,000 documents created by one asynchronous ATOMIC bulk (`Prefer: respond-async`, a job
// followed to its end) against 100 synchronous ATOMIC bulks of 100 sent one after another, on
// the seeded database (run.js). Both are timed from the client, from the first request to the
// last document committed; the rounds alternate the two ways, and the figure is the median of
// the rounds' ratios of entity rates. Each round also checks that the job is readable, PENDING
// or later, as soon as its 202 arrives. BENCH_JOB_ROUNDS rounds (default 5).
import { authorIds } from './seed.js'
import { call, sequentialRounds, startService } from './lib/service.js'
import { fmt } from './lib/harness.js'

const N = 10_000
const CHUNK = 100

let seq = 0
const doc = () => ({ name: `job-${process.pid}-${++seq}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50', pages: [{ number: 1 }] })
const creates = (n) => Array.from({ length: n }, () => ({ action: 'CREATE', entity: doc() }))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const ways = {
  async job (service) {
    const job = await call(service, 'PATCH', '/v1/documents', { body: { transactionMode: 'ATOMIC', operations: creates(N) }, headers: { prefer: 'respond-async' }, expect: 202 })
    const first = await call(service, 'GET', `/v1/jobs/${job.id}`)
    if (!['PENDING', 'RUNNING', 'SUCCEEDED'].includes(first.status)) throw new Error(`a job just accepted is ${first.status}`)
    for (;;) {
      const now = await call(service, 'GET', `/v1/jobs/${job.id}`)
      if (now.status === 'SUCCEEDED' && now.result.status === 'SUCCEEDED') return
      if (now.status === 'SUCCEEDED' || now.status === 'FAILED') throw new Error(`job: ${JSON.stringify(now).slice(0, 500)}`)
      await sleep(20)
    }
  },
  async bulks (service) {
    for (let i = 0; i < N / CHUNK; i++) {
      const outcome = await call(service, 'PATCH', '/v1/documents', { body: { transactionMode: 'ATOMIC', operations: creates(CHUNK) } })
      if (outcome.status !== 'SUCCEEDED') throw new Error(`bulk ATOMIC: ${JSON.stringify(outcome).slice(0, 500)}`)
    }
  }
}

/** Returns, per way, each round's milliseconds for 10,000 documents and server CPU µs per document, and the server's peak RSS. */
export async function runJob ({ url, rounds, log }) {
  const service = await startService(url)
  try {
    return await sequentialRounds(service, { ways, perRound: N, rounds, warmup: 1, log, describe: (s, i) => `one job ${fmt(s.job.ms[i], 0)} ms, 100 bulks ${fmt(s.bulks.ms[i], 0)} ms` })
  } finally {
    await service.stop()
  }
}
