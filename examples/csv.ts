// The example of docs/plugins/csv.md, a whole program: GET /v1/books answers CSV to
// `Accept: text/csv`, JSON otherwise, the other pages in Link.
// In this repository: node --conditions=svc-conventions-source --import tsx examples/csv.ts
// #region readme-csv
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  problem, conventions, query, csv, Collection, Id, Int32, Nullable
} from 'svc-conventions'
import { registerCollection, collectionQueryOf, fieldsFromSchema, queryMemory } from 'svc-conventions/query'

const Book = Type.Object({
  id: Id(),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  year: Int32({ minimum: -3000, maximum: 3000 }),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 }),
  author: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    country: Nullable(Type.String({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 }))
  })
})
const bookFields = fieldsFromSchema(Book, { sortable: ['id', 'title', 'year'] })
const books: Array<Static<typeof Book>> = [
  { id: 'b1', title: 'Nineteen Eighty-Four', year: 1949, tags: ['classic', 'dystopia'], author: { name: 'George Orwell', country: 'GB' } },
  { id: 'b2', title: 'Dune', year: 1965, tags: ['sf'], author: { name: 'Frank Herbert', country: 'US' } },
  { id: 'b3', title: 'Solaris', year: 1961, tags: ['sf'], author: { name: 'Stanisław Lem', country: 'PL' } }
]

export async function build (options: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(options)
  await app.register(problem)
  await app.register(conventions) // Accept picks among JSON and CSV; one that admits neither: 406
  await app.register(query, { cursorSecret: process.env.CURSOR_SECRET ?? 'an example secret, use 32 random bytes' })
  await app.register(csv)
  // GET /v1/books with Accept: text/csv → id,title,year,tags,author.name,author.country
  // (tags joined with |), the other pages in Link; Accept: image/png → 406.
  registerCollection(app, {
    url: '/v1/books',
    collection: { fields: bookFields, defaultLimit: 2 },
    schema: { response: { 200: Collection(Book) } },
    config: { csv: true },
    handler: async (request, reply) => await reply.sendCollection(queryMemory(books, collectionQueryOf(request), bookFields))
  })
  return app
}

// Run as a program (tests import build instead): listen on PORT, 3000 by default.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await build({ logger: true })
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
// #endregion
