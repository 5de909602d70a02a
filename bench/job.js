// 10,000 documents created by one asynchronous ATOMIC bulk (`Prefer: respond-async`, a job
// followed to its end) against 100 synchronous ATOMIC bulks of 100 sent one after another, on
// the seeded database (run.js). Both are timed from the client, from the first request to the
// last document committed; the rounds alternate the two ways, and the figure is the median of
// the rounds' ratios of entity rates. Each round also checks that the job is readable, PENDING
// or later, as soon as its 202 arrives. BENCH_JOB_ROUNDS rounds (default 5).
// Then the last job's status monitor, GET `/v1/jobs/{id}` with its result of 10,000 operations,
// against a bare Fastify route that reads the same row and sends the result as it is stored
// (servers/pg-bare.js); both are checked to answer the same job first. (The list of jobs shows
// summaries, without results: a page like any other.)
import { deepStrictEqual } from 'node:assert'
import { authorIds } from './seed.js'
import { call, headers, sequentialRounds, startBare, startService } from './lib/service.js'
import { fmt, largeAnswers, pairedRounds } from './lib/harness.js'

const N = 10_000
const CHUNK = 100

let seq = 0
const doc = () => ({ name: `job-${process.pid}-${++seq}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50', pages: [{ number: 1 }] })
const creates = (n) => Array.from({ length: n }, () => ({ action: 'CREATE', entity: doc() }))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** The last job run to its end. */
let lastJob = null
/** Connections of the monitor's rounds: a few, as for other answers of megabytes. */
const MONITOR_CONNECTIONS = 4

const ways = {
  async job (service) {
    const job = await call(service, 'PATCH', '/v1/documents', { body: { transactionMode: 'ATOMIC', operations: creates(N) }, headers: { prefer: 'respond-async' }, expect: 202 })
    const first = await call(service, 'GET', `/v1/jobs/${job.id}`)
    if (!['PENDING', 'RUNNING', 'SUCCEEDED'].includes(first.status)) throw new Error(`a job just accepted is ${first.status}`)
    for (;;) {
      const now = await call(service, 'GET', `/v1/jobs/${job.id}`)
      if (now.status === 'SUCCEEDED' && now.result.status === 'SUCCEEDED') {
        lastJob = now
        return
      }
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

/**
 * Returns, per way, each round's milliseconds for 10,000 documents and server CPU µs per
 * document, and the server's peak RSS; and the rounds of the last job's monitor, read from the
 * service and from the bare route, with the size of its answer.
 */
export async function runJob ({ url, rounds, log }) {
  const service = await startService(url)
  let created
  try {
    created = await sequentialRounds(service, { ways, perRound: N, rounds, warmup: 1, log, describe: (s, i) => `one job ${fmt(s.job.ms[i], 0)} ms, 100 bulks ${fmt(s.bulks.ms[i], 0)} ms` })
  } finally {
    await service.stop()
  }
  const path = `/v1/jobs/${lastJob.id}`
  const bytes = Buffer.byteLength(JSON.stringify(lastJob))
  const bare = await startBare(url)
  const again = await startService(url)
  try {
    deepStrictEqual(await call(bare, 'GET', path), await call(again, 'GET', path), 'the bare monitor answers the job as the service does')
  } finally {
    await bare.stop()
    await again.stop()
  }
  const large = { headers, connections: MONITOR_CONNECTIONS, loader: largeAnswers }
  const monitor = await pairedRounds({
    start: async () => ({ service: await startService(url), bare: await startBare(url) }),
    cases: {
      'monitor bare': { server: 'bare', path, ...large },
      'monitor service': { server: 'service', path, ...large }
    },
    log
  })
  return { ...created, monitor, monitorBytes: bytes }
}
