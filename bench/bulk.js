// The bulk case, on the seeded database (run.js), one client, each way timed from the client,
// the ways alternating within each pair of rounds (after a few warm-up rounds); each speed-up
// is the median of the rounds' ratios. BENCH_BULK_ROUNDS rounds (default 20) of each pair: one
// round is a fraction of a second.
// - creations: 100 documents created by one ATOMIC bulk PATCH `/v1/documents` against 100
//   sequential POSTs;
// - mixed: 100 operations of two kinds in turns, 50 creations and 50 full replacements of
//   documents of the way's own (each keeping its name, sent with its current ETag), by one
//   ATOMIC bulk against the same as 50 POSTs and 50 PUTs with `If-Match`, in the same turns.
import { authorIds } from './seed.js'
import { call, send, sequentialRounds, startService } from './lib/service.js'
import { fmt } from './lib/harness.js'

const WARMUP = 3
const N = 100

let seq = 0
const fields = (name) => ({ name, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50', pages: [{ number: 1 }] })
const doc = () => fields(`bulk-${process.pid}-${++seq}`)
/** A full replacement of `d` that keeps its name and changes its description. */
const replacement = (d) => ({ ...fields(d.name), id: d.id, description: `replaced ${++seq}` })

/** N / 2 new documents, to be replaced in a way's rounds: their ids, names and current ETags. */
async function replaceable (service) {
  const docs = []
  for (let i = 0; i < N / 2; i++) {
    const created = await call(service, 'POST', '/v1/documents', { body: doc(), expect: 201 })
    docs.push({ id: created.id, name: created.name, etag: created.etag })
  }
  return docs
}

const creations = {
  async bulk (service) {
    const body = { transactionMode: 'ATOMIC', operations: Array.from({ length: N }, () => ({ action: 'CREATE', entity: doc() })) }
    const outcome = await call(service, 'PATCH', '/v1/documents', { body })
    if (outcome.status !== 'SUCCEEDED') throw new Error(`bulk ATOMIC: ${JSON.stringify(outcome).slice(0, 500)}`)
  },
  async posts (service) {
    for (let i = 0; i < N; i++) await call(service, 'POST', '/v1/documents', { body: doc(), expect: 201 })
  }
}

/** The mixed ways, each over documents of its own; the bulk's ETags are read again, untimed, before each pass (its answer carries none). */
function mixed (forBulk, forRequests) {
  return {
    prepare: {
      async bulk (service) {
        for (const d of forBulk) d.etag = (await call(service, 'GET', `/v1/documents/${d.id}`)).etag
      }
    },
    ways: {
      async bulk (service) {
        const operations = forBulk.flatMap((d) => [{ action: 'CREATE', entity: doc() }, { action: 'UPDATE', ifMatch: d.etag, entity: replacement(d) }])
        const outcome = await call(service, 'PATCH', '/v1/documents', { body: { transactionMode: 'ATOMIC', operations } })
        if (outcome.status !== 'SUCCEEDED') throw new Error(`mixed bulk ATOMIC: ${JSON.stringify(outcome).slice(0, 500)}`)
      },
      async requests (service) {
        for (const d of forRequests) {
          await call(service, 'POST', '/v1/documents', { body: doc(), expect: 201 })
          const { headers } = await send(service, 'PUT', `/v1/documents/${d.id}`, { body: replacement(d), headers: { 'if-match': d.etag }, expect: 204 })
          d.etag = headers.get('etag')
        }
      }
    }
  }
}

/**
 * Returns, per pair of ways (`creations`: bulk and posts; `mixed`: bulk and requests), each
 * round's milliseconds and server CPU µs per operation, and the server's peak RSS.
 */
export async function runBulk ({ url, rounds, log }) {
  const service = await startService(url)
  try {
    const created = await sequentialRounds(service, { ways: creations, perRound: N, rounds, warmup: WARMUP, log, describe: (s, i) => `bulk ${fmt(s.bulk.ms[i], 1)} ms, 100 POSTs ${fmt(s.posts.ms[i], 1)} ms` })
    const { ways, prepare } = mixed(await replaceable(service), await replaceable(service))
    const both = await sequentialRounds(service, { ways, prepare, perRound: N, rounds, warmup: WARMUP, log, describe: (s, i) => `mixed bulk ${fmt(s.bulk.ms[i], 1)} ms, 50 POSTs and 50 PUTs ${fmt(s.requests.ms[i], 1)} ms` })
    return { creations: created, mixed: both }
  } finally {
    await service.stop()
  }
}
