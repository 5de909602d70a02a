// Paging, filtering and ordering over one's own data, without the store: a plain
// Fastify route serves an in-memory array through the query plugin and queryMemory.
//
//   node --conditions=svc-conventions-source --import tsx examples/memory-collection.ts
//   curl 'http://localhost:3000/books?limit=2&ordering=-year'
//   curl 'http://localhost:3000/books?filter=year=ge=1950;tags==classic'
//   curl 'http://localhost:3000/books?authorFilter=country==GB&offset=0&totalCount=true'
//   curl -X POST http://localhost:3000/books/search -H 'content-type: application/json' \
//     -d '{"tags": ["sf", "classic"], "ordering": "title", "paging": {"limit": 2}}'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-memory-collection
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  problem, validation, query, Id, Int32, Nullable
} from 'svc-conventions'
import { collectionQueryOf, registerCollection, fieldsFromSchema, queryMemory } from 'svc-conventions/query'

// Bounded like every schema of the convention (strings with maxLength, integers with a range).
export const Book = Type.Object({
  id: Id(),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  year: Int32({ minimum: -3000, maximum: 3000 }),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 }),
  author: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    country: Nullable(Type.String({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 }))
  })
})
export type Book = Static<typeof Book>

// Filterable: every scalar path of the schema (and tags, by containment); sortable: listed.
export const bookFields = fieldsFromSchema(Book, { sortable: ['id', 'title', 'year', 'author.name'] })

export const books: Book[] = [
  { id: 'b1', title: 'Nineteen Eighty-Four', year: 1949, tags: ['classic', 'dystopia'], author: { name: 'George Orwell', country: 'GB' } },
  { id: 'b2', title: 'Dune', year: 1965, tags: ['sf'], author: { name: 'Frank Herbert', country: 'US' } },
  { id: 'b3', title: 'The Left Hand of Darkness', year: 1969, tags: ['sf', 'classic'], author: { name: 'Ursula K. Le Guin', country: 'US' } },
  { id: 'b4', title: 'Brave New World', year: 1932, tags: ['classic', 'dystopia'], author: { name: 'Aldous Huxley', country: 'GB' } },
  { id: 'b5', title: 'Solaris', year: 1961, tags: ['sf'], author: { name: 'Stanisław Lem', country: 'PL' } },
  { id: 'b6', title: 'Anonymous Tales', year: 1900, tags: [], author: { name: 'Unknown', country: null } }
]

export async function build (options: FastifyServerOptions = {}, items: readonly Book[] = books): Promise<FastifyInstance> {
  const app = Fastify(options)
  await app.register(problem)
  await app.register(validation)
  await app.register(query, { cursorSecret: process.env.CURSOR_SECRET ?? 'an example secret, use 32 random bytes' })

  // GET /books (and HEAD), and POST /books/search with the same parameters in a JSON body.
  registerCollection(app, {
    url: '/books',
    collection: { fields: bookFields, defaultLimit: 3, maxLimit: 50, defaultOrdering: [{ field: 'title', direction: 'asc' }] },
    handler: async (request, reply) => reply.sendCollection(queryMemory(items, collectionQueryOf(request), bookFields))
  })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const app = await build({ logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
