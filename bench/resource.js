// Issue 3's benchmark: GET item and POST of documents on a PostgreSQL server, the reference
// service vs bare Fastify + pg running the same SQL, side by side in one run; and issue 7's
// webhook delivery: signed scanner deliveries (Standard Webhooks, a fresh webhook-id each) to
// the service's webhook route vs a bare Fastify + pg route doing the same work (HMAC check,
// delivery id recorded and document updated in one transaction; servers/pg-bare.js).
import { createHmac } from 'node:crypto'
import { signToken } from '../dist/index.js'
import { startServer, load, measure, fmt } from './lib/harness.js'
import { startPostgres } from '../scripts/postgres.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const duration = Number(process.env.BENCH_DURATION ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const SEED = 1000
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('bench-webhook-secret-0123456789ab').toString('base64')
const WEBHOOK_KEY = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64')
const WEBHOOK_PATH = '/_webhooks/scanner/document-scanned'

/** A delivery as the scanner sends it: the Standard Webhooks headers over these exact bytes. */
function signedDelivery (id, body) {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', WEBHOOK_KEY).update(`${id}.${timestamp}.${body}`).digest('base64')
  // Behind a TLS-terminating proxy on loopback (TRUST_PROXY=127.0.0.1): the route is HTTPS only.
  return { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` }
}

export async function runResource ({ pgUrl } = {}) {
  const pgServer = pgUrl === undefined ? await startPostgres() : null
  const url = pgUrl ?? pgServer.url
  const token = signToken({ secret: SECRET, sub: 'bench', scope: 'authors:read authors:write documents:read documents:write', expiresIn: '2h' })
  const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const service = await startServer(new URL('./servers/service.js', import.meta.url).pathname, { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET, TRUST_PROXY: '127.0.0.1' })
  const bare = await startServer(new URL('./servers/pg-bare.js', import.meta.url).pathname, { DATABASE_URL: url, WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET })
  try {
    // Seed through the service itself: one author, SEED documents.
    const base = `http://127.0.0.1:${service.port}`
    const author = await (await fetch(`${base}/v1/authors`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench Author', email: 'bench@example.com' }) })).json()
    const ids = []
    for (let i = 0; i < SEED; i++) {
      const res = await fetch(`${base}/v1/documents`, { method: 'POST', headers, body: JSON.stringify({ name: `seed-${i}`, authorId: author.id, kind: 'INVOICE', tags: ['a', 'b'], amount: '10.50' }) })
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${await res.text()}`)
      ids.push((await res.json()).id)
    }
    process.stderr.write(`  seeded ${SEED} documents\n`)
    let n = 0
    const getRequests = [{ setupRequest: (req) => ({ ...req, path: `/v1/documents/${ids[Math.floor(Math.random() * ids.length)]}` }) }]
    const postRequests = (tag) => [{ method: 'POST', setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `${tag}-${process.pid}-${n++}`, authorId: author.id, kind: 'INVOICE', tags: ['a'], amount: '1.25' }) }) }]
    // Each delivery new (its own webhook-id), spread over the seeded documents, signed when it is sent.
    const webhookRequests = (tag) => [{
      method: 'POST',
      path: WEBHOOK_PATH,
      setupRequest: (req) => {
        const id = `msg_${tag}_${process.pid}_${n++}`
        const body = JSON.stringify({ documentId: ids[n % ids.length], pageCount: n % 1000, fingerprint: id })
        return { ...req, headers: { ...req.headers, ...signedDelivery(id, body) }, body }
      }
    }]
    const results = {}
    const scenarios = [
      ['GET item', (s) => ({ url: `http://127.0.0.1:${s.port}`, requests: getRequests })],
      ['POST', (s, name) => ({ url: `http://127.0.0.1:${s.port}/v1/documents`, method: 'POST', requests: postRequests(name) })],
      ['webhook delivery', (s, name) => ({ url: `http://127.0.0.1:${s.port}${WEBHOOK_PATH}`, method: 'POST', requests: webhookRequests(name) })]
    ]
    for (const [scenario, opts] of scenarios) {
      for (const [name, s] of [['bare', bare], ['service', service]]) await load({ ...opts(s, `w${name}`), connections, duration: 2, headers })
      for (let i = 0; i < rounds; i++) {
        for (const [name, s] of [['bare', bare], ['service', service]]) {
          const r = await measure(s, () => load({ ...opts(s, `${name}${i}`), connections, duration, headers }))
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${scenario} ${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
          ;(results[`${scenario}|${name}`] ??= []).push(r)
          process.stderr.write(`  ${scenario} round ${i + 1} ${name}: ${fmt(r.rps)} req/s\n`)
        }
      }
    }
    return results
  } finally {
    await service.stop()
    await bare.stop()
    pgServer?.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await runResource({ pgUrl: process.env.BENCH_DATABASE_URL })
  const avg = (rs, k) => rs.reduce((s, r) => s + r[k], 0) / rs.length
  console.log(`\ndocuments on a PostgreSQL server, ${connections} connections, ${rounds} × ${duration} s each, alternating\n`)
  console.log('| scenario | server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB |')
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
  for (const [key, rs] of Object.entries(results)) {
    const [scenario, name] = key.split('|')
    console.log(`| ${scenario} | ${name} | ${fmt(avg(rs, 'rps'))} | ${fmt(avg(rs, 'p50'), 1)} | ${fmt(avg(rs, 'p99'), 1)} | ${fmt(avg(rs, 'cpuPerReqMicros'), 1)} | ${fmt(Math.max(...rs.map(r => r.peakRssMb)))} |`)
  }
  for (const scenario of ['GET item', 'POST', 'webhook delivery']) {
    const ratio = avg(results[`${scenario}|service`], 'rps') / avg(results[`${scenario}|bare`], 'rps')
    console.log(`${scenario}: service/bare ${fmt(ratio, 3)}${scenario === 'webhook delivery' ? ' (no target)' : ` (target ≥ 0.85: ${ratio >= 0.85 ? 'met' : 'MISSED'})`}`)
  }
}
