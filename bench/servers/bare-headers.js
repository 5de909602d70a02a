// bare.js plus the two headers every answer of the suite's trivial route carries
// (Content-Language, and Cache-Control: no-store as the route is authenticated), set in the
// handler: what those headers cost alone.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
app.get('/ping', async (request, reply) => {
  reply.header('content-language', 'en-US').header('cache-control', 'no-store')
  return { hello: 'world' }
})
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
