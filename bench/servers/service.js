// The reference service itself (dist/app.js) on the PostgreSQL server named by DATABASE_URL.
import { buildApp } from '../../dist/app.js'
import { loadConfig } from '../../dist/config.js'
import { serveStats } from '../lib/harness.js'

const { config } = loadConfig({ ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000' })
const app = await buildApp(config)
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
