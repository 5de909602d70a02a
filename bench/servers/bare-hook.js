// bare-headers.js with its two headers set in one onRequest hook instead of the handler: what
// running any hook at all costs the route, before the hook does any work of its own.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
app.addHook('onRequest', function headers (request, reply, done) {
  reply.header('content-language', 'en-US').header('cache-control', 'no-store')
  done()
})
app.get('/ping', async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
