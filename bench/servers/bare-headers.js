// bare.js plus the three headers every answer of the suite's trivial route carries
// (Content-Language, Vary, Cache-Control), set in the handler: what those headers cost alone.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
app.get('/ping', async (request, reply) => {
  reply.header('content-language', 'en-US').header('vary', 'Origin').header('cache-control', 'no-store')
  return { hello: 'world' }
})
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
