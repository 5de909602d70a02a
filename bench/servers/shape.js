// The suite's trivial route with its shape and none of its checks: the same response schema,
// five no-op onRequest hooks (callback style) and one no-op onSend hook as the core adds, its
// per-request state (one request decoration, an object allocated per request, the public names
// as accessors), the route config read once per request, and the two headers it sets. What
// Fastify itself charges for the suite's structure.
import Fastify from 'fastify'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
const kState = Symbol('state')
const newState = () => ({ routeConfig: null, requestId: null, executionContext: '', callingService: null, idempotencyKey: null, negotiatedType: null, principal: null, preconditions: null, collectionQuery: null, collection: null, webhook: null })
app.decorateRequest(kState, null)
for (const name of ['requestId', 'executionContext', 'callingService', 'idempotencyKey', 'negotiatedType', 'principal']) {
  app.decorateRequest(name, {
    getter () { return this[kState]?.[name] ?? null },
    setter (value) { this[kState] ??= newState(); this[kState][name] = value }
  })
}
app.addHook('onRequest', function (request, reply, done) {
  const state = newState()
  request[kState] = state
  state.routeConfig = request.routeOptions.config
  reply.header('content-language', 'en-US').header('cache-control', 'no-store')
  done()
})
for (let i = 0; i < 4; i++) app.addHook('onRequest', function (request, reply, done) { done() })
app.addHook('onSend', function (request, reply, payload, done) { done(null, payload) })
app.get('/ping', {
  schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } }
}, async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
