// The examples of docs/plugins/: one small server per plugin, each a region shown on the
// plugin's page and run by test/examples/plugins.test.ts. The pages of jobs, csv and bulk show
// whole programs instead: examples/jobs.ts, csv.ts and bulk.ts.
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import {
  problem, problemServerOptions, problems, validation, conventions, cors, methods, auth, rateLimit, conditional, openapi, docs, lint, Id
} from 'svc-conventions'
import { evaluatePreconditions, preconditionProblem } from 'svc-conventions/conditional'

// #region readme-plugin-problem
export async function problemExample (): Promise<FastifyInstance> {
  const app = Fastify({ ...problemServerOptions })
  await app.register(problem, { requestIdHeader: 'x-request-id' })
  app.get('/v1/names/:name', async (request) => {
    const { name } = request.params as { name: string }
    // 409 application/problem+json: { title: 'Conflict', status: 409, detail, requestId }
    throw problems.conflict(`The name "${name}" is taken; choose another.`)
  })
  return app
}
// #endregion

// #region readme-plugin-validation
export async function validationExample (): Promise<FastifyInstance> {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  await app.register(problem)
  await app.register(validation)
  app.post('/v1/notes', {
    // {"text": "", "extra": 1} → 400 Invalid Data with two context items, both at once
    schema: { body: Type.Object({ text: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }) }
  }, async (request, reply) => await reply.code(201).send({ id: '1', text: request.body.text }))
  return app
}
// #endregion

// #region readme-plugin-conventions
export async function conventionsExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  // Svc-Execution-Context: prod, preprod or sandbox; anything else is a 400.
  await app.register(conventions, { executionContext: { extra: ['sandbox'] } })
  app.get('/v1/where', async (request) => ({ executionContext: request.executionContext }))
  return app
}
// #endregion

// #region readme-plugin-cors
export async function corsExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(cors, { origins: ['https://app.example.com', /^https:\/\/[a-z]+\.example\.org$/], maxAge: 600 })
  app.get('/v1/things', async () => ({ results: [] }))
  return app
}
// #endregion

// #region readme-plugin-methods
export async function methodsExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(methods)
  // DELETE /v1/things → 405 with Allow: GET, HEAD, OPTIONS; OPTIONS /v1/things → 204 with Allow.
  app.get('/v1/things', async () => ({ results: [] }))
  return app
}
// #endregion

// #region readme-plugin-auth
export async function authExample (secret: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(auth, { verifier: { secret } })
  app.get('/v1/me', { config: { auth: { scopes: ['profile:read'] } } }, async (request) => ({ id: request.principal?.sub }))
  app.get('/v1/status', { config: { auth: false } }, async () => ({ status: 'UP' }))
  return app
}
// #endregion

// #region readme-plugin-rate-limit
export async function rateLimitExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(rateLimit, { max: 2, timeWindow: '1 minute' })
  app.get('/v1/things', async () => ({ results: [] }))
  app.get('/v1/cheap', { config: { rateLimit: { max: 100, timeWindow: 60_000 } } }, async () => ({ ok: true }))
  return app
}
// #endregion

// #region readme-plugin-conditional
export async function conditionalExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(conditional)
  let version = 1
  app.get('/v1/setting', async (_request, reply) => await reply.header('etag', `"${version}"`).send({ value: 'on' }))
  // PUT without If-Match → 428; with a stale one, or with If-None-Match: * (create only) → 412.
  app.put('/v1/setting', { config: { conditional: { requireIfMatch: true } } }, async (request, reply) => {
    // A write: evaluateRead is for reads, where a matching If-None-Match is a 304, not a refusal.
    const verdict = evaluatePreconditions(request.preconditions, `"${version}"`)
    // The suite's own 412, worded for the header that failed.
    if (verdict.kind === 'precondition-failed') throw preconditionProblem({ method: 'PUT', path: '/v1/setting', header: verdict.header })
    version++
    return await reply.code(204).header('etag', `"${version}"`).send()
  })
  return app
}
// #endregion

// #region readme-plugin-openapi
export async function openapiExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(openapi, {
    info: { title: 'Notes', version: '1.0.0', description: 'Get a token from the identity service.' },
    tokenHelp: 'A JWT from the identity service, with the scope notes:read.'
  })
  app.get('/v1/notes/:noteId', {
    schema: { params: Type.Object({ noteId: Id() }), response: { 200: Type.Object({ id: Id(), text: Type.String({ maxLength: 500 }) }) } },
    config: { problems: [404] }
  }, async (request) => ({ id: (request.params as { noteId: string }).noteId, text: 'hello' }))
  return app
}
// #endregion

// #region readme-plugin-docs
export async function docsExample (): Promise<FastifyInstance> {
  const app = await openapiExample()
  await app.register(docs, { routePrefix: '/docs', title: 'Notes API' })
  return app
}
// #endregion

// #region readme-plugin-lint
export async function lintExample (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  await app.register(lint, { mode: 'error' })
  // Refused at registration: "isActive" is a boolean with an is- prefix [boolean-prefix].
  app.get('/v1/flags', { schema: { response: { 200: Type.Object({ isActive: Type.Boolean() }) } } }, async () => ({ isActive: true }))
  return app
}
// #endregion
