// The reference service as the cases on PostgreSQL start and call it: its environment
// (secrets of the benchmark's own), a token with every scope of the documents and authors,
// and a JSON request helper for the checks made before the load.
import { createHmac } from 'node:crypto'
import { signToken } from 'svc-conventions/auth'
import { startServer } from './harness.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('bench-webhook-secret-0123456789ab').toString('base64')
const WEBHOOK_KEY = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64')

const token = signToken({ secret: SECRET, sub: 'bench', scope: 'authors:read authors:write documents:read documents:write', expiresIn: '2h' })
export const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
/** The headers of a request with a JSON body. */
export const jsonHeaders = { ...headers, 'content-type': 'application/json' }

/** The service (servers/service.js) on database `url`; it migrates its schema as it starts. */
export function startService (url) {
  // Behind a TLS-terminating proxy on loopback: the webhook route is HTTPS only.
  return startServer('service.js', { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, CURSOR_SECRET: 'bench-cursor-secret-that-is-long-enough', WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET, TRUST_PROXY: '127.0.0.1' })
}

/** The hand-written baseline (servers/pg-bare.js) on database `url`. */
export function startBare (url) {
  return startServer('pg-bare.js', { DATABASE_URL: url, WEBHOOK_SECRET_SCANNER: WEBHOOK_SECRET })
}

/** Sends one request; throws unless the status is `expect`. Returns the parsed body (null when empty). */
export async function call (server, method, path, options = {}) {
  return (await send(server, method, path, options)).body
}

/** As `call`, also giving the answer's headers. */
export async function send (server, method, path, { body, headers: extra = {}, expect = 200 } = {}) {
  const sent = body === undefined ? { headers } : { headers: jsonHeaders, body: typeof body === 'string' ? body : JSON.stringify(body) }
  const res = await fetch(server.base + path, { ...sent, method, headers: { ...sent.headers, ...extra } })
  const text = await res.text()
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status}, expected ${expect}: ${text.slice(0, 500)}`)
  return { body: text === '' ? null : JSON.parse(text), headers: res.headers }
}

/** A scanner delivery as the producer sends it: the Standard Webhooks headers over these exact bytes. */
export function signedDelivery (id, body) {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', WEBHOOK_KEY).update(`${id}.${timestamp}.${body}`).digest('base64')
  return { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` }
}

/**
 * Times `ways` (name → async (service) => void, each writing `perRound` documents) against one
 * running service, one after another: `warmup` unmeasured passes, then `rounds` rounds whose
 * order alternates. `prepare[name](service)`, when given, runs untimed before each pass of that
 * way. Returns, per way, each round's milliseconds and server CPU µs per document, and the
 * server's peak RSS in MiB; `describe(samples, round)` is logged per round.
 */
export async function sequentialRounds (service, { ways, perRound, rounds, warmup = 0, prepare = {}, log, describe }) {
  for (let i = 0; i < warmup; i++) {
    for (const name of Object.keys(ways)) {
      await prepare[name]?.(service)
      await ways[name](service)
    }
  }
  const samples = Object.fromEntries(Object.keys(ways).map((k) => [k, { ms: [], cpu: [], rss: 0 }]))
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? Object.keys(ways) : Object.keys(ways).reverse()
    for (const name of order) {
      await prepare[name]?.(service)
      const before = await service.stats()
      const start = process.hrtime.bigint()
      await ways[name](service)
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      const after = await service.stats()
      samples[name].ms.push(ms)
      samples[name].cpu.push((after.cpuMicros - before.cpuMicros) / perRound)
      samples[name].rss = Math.max(samples[name].rss, after.peakRss / 1048576)
    }
    log(`  round ${i + 1}: ${describe(samples, i)}`)
  }
  return samples
}
