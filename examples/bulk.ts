// The example of docs/plugins/bulk.md, a whole program: a resource over PostgreSQL and
// PATCH /v1/books for up to 50 operations in one request.
// In this repository: AUTH_JWT_SECRET=$(openssl rand -hex 32) node --conditions=svc-conventions-source \
//   --import tsx examples/bulk.ts
// #region readme-bulk
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { problem, validation, conventions, auth, query, resource, bulk, defineResource, createStore, Int32 } from 'svc-conventions'

export const books = defineResource({
  name: 'book',
  collection: 'books',
  path: '/v1/books',
  idParam: 'bookId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    isbn: Type.String({ pattern: '^97[89][0-9]{10}$', minLength: 13, maxLength: 13 }),
    pageCount: Int32({ minimum: 1, maximum: 100000 })
  },
  unique: ['isbn'], // a duplicate fails its operation alone (ISOLATED), or the whole request (ATOMIC)
  scopes: { read: ['books:read'], write: ['books:write'] }
})

export async function build (options: FastifyServerOptions = {}, jwtSecret = process.env.AUTH_JWT_SECRET): Promise<FastifyInstance> {
  // DATABASE_URL=postgres://… → a PostgreSQL server; else PGlite in DATA_DIR, or in memory.
  const store = createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  const app = Fastify(options)
  app.addHook('onClose', async () => { await store.close() })
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(auth, { verifier: { secret: jwtSecret ?? '' } })
  await app.register(query, { cursorSecret: process.env.CURSOR_SECRET ?? 'an example secret, use 32 random bytes' })
  await app.register(resource, { store, resources: [books] })
  // After the resources: PATCH /v1/books takes CREATE, UPDATE, CREATE_UPDATE and DELETE operations.
  await app.register(bulk, { maxOperations: 50 })
  return app
}

// Run as a program (tests import build instead): listen on PORT, 3000 by default.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await build({ logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
// #endregion
