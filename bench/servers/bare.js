// Baseline: bare Fastify serving the same small JSON as the suite's trivial route.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
app.get('/ping', async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
