// The suite's trivial route with its shape and none of its checks: the same response schema,
// five no-op onRequest hooks (callback style) as the core adds, the seven request decorations it
// declares, the route config read once per request, and the three headers it sets. What Fastify
// itself charges for the suite's structure.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
const routeConfig = Symbol.for('svc-conventions.routeConfig')
app.decorateRequest(Symbol('requestId'), null)
app.decorateRequest('requestId', { getter () { return 'x' }, setter () {} })
app.decorateRequest('executionContext', '')
for (const name of ['callingService', 'idempotencyKey', 'negotiatedType', 'principal', routeConfig]) app.decorateRequest(name, null)
app.addHook('onRequest', function (request, reply, done) {
  request[routeConfig] = request.routeOptions.config
  reply.header('content-language', 'en-US').header('vary', 'Origin').header('cache-control', 'no-store')
  done()
})
for (let i = 0; i < 4; i++) app.addHook('onRequest', function (request, reply, done) { done() })
app.get('/ping', {
  schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } }
}, async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
