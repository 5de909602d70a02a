// An adopter's service calling the reference service through the downstream client: every call
// names this service (Svc-Service, User-Agent) and carries the request's X-Request-ID and
// execution context; the reference service's problems come back as typed errors.
//
//   REFERENCE_URL=http://127.0.0.1:3000/ \
//   REFERENCE_TOKEN=$(npm run -s token -- --scope "authors:read authors:write") \
//   SERVICE_ID=$(node -p 'crypto.randomUUID()') \
//     node --conditions=svc-conventions-source --import tsx examples/downstream.ts
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-downstream
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import {
  problem, problemServerOptions, validation, conventions, downstream, problems, Id
} from 'svc-conventions'
import { defineProblem, invalidData } from 'svc-conventions/problem'
import { DownstreamError, DownstreamProblemError } from 'svc-conventions/downstream'

export interface ReviewsOptions {
  /** The reference service, e.g. `http://127.0.0.1:3000/`. */
  referenceUrl: string
  /** A bearer token of the reference service with `authors:read authors:write`. */
  token: string
  /** This service's UUID, sent in `Svc-Service`. */
  serviceId: string
}

/** The fields of the reference service's Author that this service uses. */
interface Author { id: string, name: string, email: string }

// The other service failed or could not be reached: this service's own 502, never its 5xx passed on.
const directoryFailed = defineProblem(502, 'REVIEWS_ERR_DIRECTORY', 'Bad Gateway')

export async function build (options: ReviewsOptions, fastify: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ ...problemServerOptions, ...fastify }).withTypeProvider<TypeBoxTypeProvider>()
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { executionContext: { extra: ['sandbox'] } })
  await app.register(downstream, {
    service: { id: options.serviceId, name: 'reviews' },
    userAgent: { product: 'reviews', version: 1 },
    baseUrl: options.referenceUrl,
    timeouts: { headers: 2000, body: 5000 }
  })
  const authorization = `Bearer ${options.token}`

  /** The reference service's answer to a failed call, as this service's problem. */
  function failure (err: unknown, id: string): unknown {
    if (err instanceof DownstreamProblemError && err.status === 404) return problems.notFound(`There is no reviewer ${id}.`)
    // Its field errors are the caller's: the same context items, in this service's 400.
    if (err instanceof DownstreamProblemError && err.status === 400) return invalidData(err.context)
    if (err instanceof DownstreamError) return directoryFailed(`The author directory failed (${err.code}); retry later, quoting the requestId.`)
    return err
  }

  app.get('/v1/reviewers/:reviewerId', { schema: { params: Type.Object({ reviewerId: Id() }) } }, async (request) => {
    try {
      // X-Request-ID, Svc-Execution-Context and Svc-Service go along: nothing to write here.
      const { body } = await request.downstream.get<Author>(`v1/authors/${request.params.reviewerId}`, { headers: { authorization } })
      return { id: body?.id, name: body?.name }
    } catch (err) {
      throw failure(err, request.params.reviewerId)
    }
  })

  app.post('/v1/reviewers', {
    schema: { body: Type.Object({ name: Type.String({ minLength: 1 }), email: Type.String() }, { additionalProperties: false }) }
  }, async (request, reply) => {
    try {
      // A POST is retried (on 429, 503, a reset) only with a key: a new UUID, the same on each attempt.
      const { body } = await request.downstream.post<Author>('v1/authors', { json: request.body, idempotencyKey: true, headers: { authorization } })
      return await reply.code(201).send({ id: body?.id, name: body?.name })
    } catch (err) {
      throw failure(err, '')
    }
  })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const app = await build({
    referenceUrl: process.env.REFERENCE_URL ?? 'http://127.0.0.1:3000/',
    token: process.env.REFERENCE_TOKEN ?? '',
    serviceId: process.env.SERVICE_ID ?? '7e0c1d1e-3c1e-4f7a-8d0a-2b5e8f9a1c3d'
  }, { logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3001) })
}
