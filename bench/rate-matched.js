// Why the filtered page's ratio is lower than the Node side alone explains: the service and bare
// Fastify + pg (servers/pg-collection.js, the same SQL) served at the SAME fixed request rates,
// then as fast as each can, rounds alternating. Reports the CPU each request costs the server,
// PostgreSQL (every process named postgres on the machine, including backends that ended during
// the round: run it where no other PostgreSQL is busy) and autocannon. Uses BENCH_DATABASE_URL
// or a throwaway server; BENCH_DOCUMENTS documents (default 100,000); BENCH_RATES the fixed
// rates (default 1000,1500).
import { readFileSync, readdirSync } from 'node:fs'
import { signToken } from '../dist/index.js'
import { startServer, load, measure, fmt } from './lib/harness.js'
import { benchDatabase } from './lib/admin.js'
import { seed } from './seed.js'
import { FILTERED } from './collection.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const duration = Number(process.env.BENCH_DURATION ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const COUNT = Number(process.env.BENCH_DOCUMENTS ?? 100_000)
const RATES = (process.env.BENCH_RATES ?? '1000,1500').split(',').map(Number)
const DATABASE = 'svc_bench_rate_matched'
const token = signToken({ secret: SECRET, sub: 'bench', scope: 'documents:read', expiresIn: '1h' })
const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
const TICK_MICROS = 1e6 / 100 // USER_HZ

/** utime + stime of a /proc stat line, and cutime + cstime (its reaped children). */
function ticksOf (pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]), parent: Number(f[1]) }
}

/** CPU ticks of every postgres process so far; the postmaster's reaped children count too. */
function postgresTicks () {
  const procs = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') procs.set(Number(d), ticksOf(d))
    } catch { /* ended meanwhile */ }
  }
  let sum = 0
  for (const t of procs.values()) sum += t.own + (procs.has(t.parent) ? 0 : t.children)
  return sum
}

const database = await benchDatabase(DATABASE, process.env.BENCH_DATABASE_URL)
const env = { DATABASE_URL: database.url, AUTH_JWT_SECRET: SECRET, CURSOR_SECRET: 'bench-cursor-secret-that-is-long-enough', BENCH_QUERY: FILTERED }
const servers = {}
try {
  // The service makes the schema; the seed fills it.
  const { buildApp } = await import('../dist/app.js')
  const { loadConfig } = await import('../dist/config.js')
  const app = await buildApp(loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent' }).config)
  await app.ready()
  await seed({ url: database.url, count: COUNT, log: (line) => process.stderr.write(line + '\n') })
  await app.close()
  servers.bare = { server: await startServer(new URL('./servers/pg-collection.js', import.meta.url).pathname, env), path: '/v1/documents' }
  servers.service = { server: await startServer(new URL('./servers/service.js', import.meta.url).pathname, env), path: `/v1/documents?limit=20&${FILTERED}` }
  const self = () => { const u = process.cpuUsage(); return u.user + u.system }
  const run = async (name, d, rate) => {
    const { server, path } = servers[name]
    const pg0 = postgresTicks()
    const c0 = self()
    const r = await measure(server, () => load({ url: `http://127.0.0.1:${server.port}${path}`, duration: d, headers, rate }))
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx and ${r.errors} errors`)
    return { ...r, pg: (postgresTicks() - pg0) * TICK_MICROS / r.requests, client: (self() - c0) / r.requests }
  }
  for (const name of Object.keys(servers)) await run(name, 2) // warm-up
  const rows = []
  for (const rate of [...RATES, undefined]) {
    const results = { bare: [], service: [] }
    for (let i = 0; i < rounds; i++) {
      for (const name of i % 2 === 0 ? ['bare', 'service'] : ['service', 'bare']) results[name].push(await run(name, duration, rate))
    }
    for (const [name, rs] of Object.entries(results)) {
      const avg = (k) => rs.reduce((s, r) => s + r[k], 0) / rs.length
      rows.push(`| ${rate === undefined ? 'as fast as served' : fmt(rate)} | ${name} | ${fmt(avg('rps'))} | ${fmt(avg('cpuPerReqMicros'))} | ${fmt(avg('pg'))} | ${fmt(avg('client'))} | ${fmt(avg('cpuPerReqMicros') + avg('pg') + avg('client'))} |`)
    }
    process.stderr.write(`  rate ${rate ?? 'open'} done\n`)
  }
  console.log(`\nfiltered and ordered 20-item page, ${COUNT.toLocaleString('en-US')} documents, 50 connections, ${rounds} × ${duration} s per server and rate, alternating\n`)
  console.log('| rate req/s | server | req/s | server CPU µs/req | PostgreSQL µs/req | autocannon µs/req | all µs/req |')
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |')
  for (const row of rows) console.log(row)
} finally {
  for (const { server } of Object.values(servers)) await server.stop()
  await database.close()
}
