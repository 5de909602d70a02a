// The suite's trivial route as bench/servers/suite.js serves it: every plugin of the conventions
// core in the order a request travels, and GET /ping with a scope and a response schema. Takes
// the suite's exports, so the benchmark builds it from dist/ and test/bench/floor-server.test.ts
// from the sources, both the same app.
import Fastify from 'fastify'

export async function buildSuite ({ problem, validation, conventions, cors, methods, auth, openapi }, secret) {
  const app = Fastify({ logger: false })
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(cors, { origins: ['https://app.example.com'] })
  await app.register(methods)
  await app.register(auth, { verifier: { secret } })
  await app.register(openapi)
  app.get('/ping', {
    config: { auth: { scopes: ['ping:read'] } },
    schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } }
  }, async () => ({ hello: 'world' }))
  return app
}
