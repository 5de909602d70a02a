// The reference service itself (dist/app.js) on the PostgreSQL server named by DATABASE_URL.
// BENCH_FROM_SOURCE=1 loads app.ts instead, for a child started under the tests' TypeScript loader
// (the soak smoke test, which must not depend on a build).
import { serveStats } from '../lib/harness.js'

const root = process.env.BENCH_FROM_SOURCE === '1' ? '../../' : '../../dist/'
const ext = process.env.BENCH_FROM_SOURCE === '1' ? '.ts' : '.js'
const { buildApp } = await import(`${root}app${ext}`)
const { loadConfig } = await import(`${root}config${ext}`)

const { config } = loadConfig({ ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000' })
const app = await buildApp(config)
await app.listen({ port: 0, host: '127.0.0.1' })
// Stopped as in production (requests being served finish), then, after a moment, without waiting
// on connections a load generator left holding part of a request: Node keeps those until its
// header timeout, a minute or more.
serveStats(app.server.address().port, async () => {
  const cut = setTimeout(() => app.server.closeAllConnections(), 1000)
  try {
    await app.close()
  } finally {
    clearTimeout(cut)
  }
})
