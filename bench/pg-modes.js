// Why store/pg.ts runs single statements in pg's callback style: the same 20-row page fetched
// three ways (servers/pg-modes.js), measured in one run, rounds alternating. Reports CPU per
// request and garbage-collection time per request. Uses BENCH_DATABASE_URL or a throwaway server.
import { startServer, load, measure, fmt } from './lib/harness.js'
import { benchDatabase } from './lib/admin.js'
import { seed } from './seed.js'

const duration = Number(process.env.BENCH_DURATION ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const DATABASE = 'svc_bench_pg_modes'
const MODES = ['pool-query', 'callback', 'await']

const gcOf = (server) => new Promise((resolve) => {
  const on = (msg) => { if (msg.type === 'gc') { server.child.off('message', on); resolve(msg) } }
  server.child.on('message', on)
  server.child.send({ type: 'gc' })
})

const database = await benchDatabase(DATABASE, process.env.BENCH_DATABASE_URL)
const servers = {}
try {
  // The service makes the schema; the seed fills it.
  const { buildApp } = await import('../dist/app.js')
  const { loadConfig } = await import('../dist/config.js')
  const app = await buildApp(loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: database.url, AUTH_JWT_SECRET: 'bench-secret-that-is-long-enough-0123456789' }).config)
  await app.ready()
  await seed({ url: database.url, count: 10_000, log: (line) => process.stderr.write(line + '\n') })
  await app.close()
  for (const mode of MODES) servers[mode] = await startServer(new URL('./servers/pg-modes.js', import.meta.url).pathname, { DATABASE_URL: database.url, PG_MODE: mode })
  const results = Object.fromEntries(MODES.map((m) => [m, []]))
  for (const mode of MODES) await load({ url: `http://127.0.0.1:${servers[mode].port}/page`, duration: 2 })
  for (let i = 0; i < rounds; i++) {
    for (const mode of MODES) {
      const s = servers[mode]
      const before = await gcOf(s)
      const r = await measure(s, () => load({ url: `http://127.0.0.1:${s.port}/page`, duration }))
      const after = await gcOf(s)
      results[mode].push({ ...r, gcMicros: (after.gcMs - before.gcMs) * 1000 / r.requests, minor: after.minor - before.minor })
    }
  }
  const avg = (rs, k) => rs.reduce((sum, r) => sum + r[k], 0) / rs.length
  console.log(`\n20-row page, 50 connections, ${rounds} × ${duration} s per way, alternating\n`)
  console.log('| way | req/s | CPU µs/req | GC µs/req | minor GCs/round |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const mode of MODES) {
    const rs = results[mode]
    console.log(`| ${mode} | ${fmt(avg(rs, 'rps'))} | ${fmt(avg(rs, 'cpuPerReqMicros'), 1)} | ${fmt(avg(rs, 'gcMicros'), 1)} | ${fmt(avg(rs, 'minor'))} |`)
  }
} finally {
  for (const s of Object.values(servers)) await s.stop()
  await database.close()
}
