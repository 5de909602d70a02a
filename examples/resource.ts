// Defining a resource: one TypeBox definition gives the collection, item, child-free CRUD
// routes over PostgreSQL (PGlite by default, a server with DATABASE_URL), paged and filtered
// collections, and an OpenAPI document; the lint plugin checks every route as it registers.
//
//   AUTH_JWT_SECRET=$(openssl rand -hex 32) CURSOR_SECRET=$(openssl rand -hex 32) \
//     node --conditions=svc-conventions-source --import tsx examples/resource.ts
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-resource
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  problem, validation, conventions, methods, auth, openapi, query, lint, resource,
  defineResource, createStore, Int32, UpperSnakeEnum, type Store
} from 'svc-conventions'

export const books = defineResource({
  name: 'book', // ref: svc:book::<id>
  collection: 'books',
  path: '/v1/books',
  idParam: 'bookId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    isbn: Type.String({ pattern: '^97[89][0-9]{10}$', minLength: 13, maxLength: 13 }),
    format: UpperSnakeEnum(['HARDCOVER', 'PAPERBACK', 'EBOOK'], { default: 'PAPERBACK' }),
    pageCount: Int32({ minimum: 1, maximum: 100000 })
  },
  unique: ['isbn'], // a database constraint: 409 on a duplicate, also across instances
  requireIfMatch: true, // PUT, PATCH and DELETE without If-Match: 428
  scopes: { read: ['books:read'], write: ['books:write'] },
  filterable: ['title', 'isbn', 'format', 'pageCount', 'createdDateTime'],
  sortable: ['title', 'pageCount', 'createdDateTime'],
  indexes: [['format', '-pageCount']] // serves format=EBOOK&ordering=-pageCount
})
export type Book = Static<typeof books.api.entity>

export interface BuildOptions {
  fastify?: FastifyServerOptions
  /** A store of yours (closed by you); default one from DATABASE_URL or DATA_DIR, closed with the app. */
  store?: Store
  jwtSecret?: string
  cursorSecret?: string
}

export async function build (opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(opts.fastify)
  // #region readme-store
  // DATABASE_URL=postgres://… → a pg pool on that server; else PGlite (PostgreSQL in WASM)
  // in DATA_DIR, or in memory. Tables are created or migrated at start.
  const store = opts.store ?? createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  if (opts.store === undefined) app.addHook('onClose', async () => { await store.close() })
  // #endregion

  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(methods)
  await app.register(auth, { verifier: { secret: opts.jwtSecret ?? process.env.AUTH_JWT_SECRET ?? '' } })
  await app.register(openapi, { info: { title: 'Library', version: '1.0.0' } })
  // Collections: limit, signed keyset cursors, offset, filters, FIQL, ordering, search by POST.
  await app.register(query, { cursorSecret: opts.cursorSecret ?? process.env.CURSOR_SECRET ?? '' })
  // After query (which completes the collection schemas), before the routes: a route that
  // breaks the conventions fails the boot with the route, the property path and the rule.
  await app.register(lint)
  await app.register(resource, { store, resources: [books] })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const app = await build({ fastify: { logger: true } })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
