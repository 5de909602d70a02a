// The same trivial route as bare.js, behind every plugin of the conventions core:
// problem, validation, conventions, CORS, methods, bearer auth (HS256) and OpenAPI.
import Fastify from 'fastify'
import { problem, validation, conventions, cors, methods, auth, openapi } from '../../dist/index.js'
import { serveStats } from '../lib/harness.js'

const app = Fastify({ logger: false })
await app.register(problem)
await app.register(validation)
await app.register(conventions)
await app.register(cors, { origins: ['https://app.example.com'] })
await app.register(methods)
await app.register(auth, { verifier: { secret: process.env.BENCH_SECRET } })
await app.register(openapi)
app.get('/ping', {
  config: { auth: { scopes: ['ping:read'] } },
  schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } }
}, async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
