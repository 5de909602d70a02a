// A file attached to each entity of a resource: PUT, GET, HEAD and DELETE at
// <item>/<field>, the bytes in PostgreSQL beside the entity, whose read-only field describes
// the file and whose ETag changes with it.
//
//   AUTH_JWT_SECRET=$(openssl rand -hex 32) CURSOR_SECRET=$(openssl rand -hex 32) \
//     node --conditions=svc-conventions-source --import tsx examples/files.ts
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
// #region readme-files
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  problem, validation, conventions, methods, auth, openapi, query, lint, resource, files,
  defineResource, createStore, FileDescription, type Store
} from 'svc-conventions'

export const invoices = defineResource({
  name: 'invoice',
  collection: 'invoices',
  path: '/v1/invoices',
  idParam: 'invoiceId',
  fields: {
    number: Type.String({ minLength: 1, maxLength: 20 }),
    // { mediaType, filename, byteCount, modifiedDateTime } or null: set by the files plugin.
    scan: FileDescription()
  },
  readOnly: ['scan'],
  requireIfMatch: true, // an upload or a removal without If-Match: 428
  scopes: { read: ['invoices:read'], write: ['invoices:write'] }
})

export async function build (opts: { store?: Store, jwtSecret?: string, cursorSecret?: string } = {}): Promise<FastifyInstance> {
  const app = Fastify()
  const store = opts.store ?? createStore({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? 'memory' })
  if (opts.store === undefined) app.addHook('onClose', async () => { await store.close() })
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions)
  await app.register(methods)
  await app.register(auth, { verifier: { secret: opts.jwtSecret ?? process.env.AUTH_JWT_SECRET ?? '' } })
  await app.register(openapi, { info: { title: 'Invoices', version: '1.0.0' } })
  await app.register(query, { cursorSecret: opts.cursorSecret ?? process.env.CURSOR_SECRET ?? '' })
  await app.register(lint)
  await app.register(resource, { store, resources: [invoices] })
  // PUT /v1/invoices/{invoiceId}/scan: a PDF or PNG of at most 5 MiB, as the body or as the
  // multipart/form-data part named "file"; GET and HEAD read it back, DELETE removes it.
  await app.register(files, { resources: { invoices: { field: 'scan', mediaTypes: ['application/pdf', 'image/png'], maxBytes: 5 * 1024 * 1024 } } })
  return app
}
// #endregion

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const app = await build()
  await app.listen({ port: Number(process.env.PORT ?? 3000) })
}
