// A typed client of the reference service: types generated from its /openapi.json by
// openapi-typescript, calls made with openapi-fetch. docs/client.md shows it; the types file
// is generated, not kept in the repository (the document fetched first: the service refuses
// openapi-typescript's own `User-Agent: node`):
//   curl -sf -H 'User-Agent: my-client/1' http://127.0.0.1:3000/openapi.json -o openapi.json
//   npx openapi-typescript openapi.json -o examples/client/reference-api.d.ts
// #region readme-client-setup
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './reference-api.js'

export type Author = components['schemas']['Author']
export type DocumentSummary = components['schemas']['DocumentSummary']
export type Problem = components['schemas']['Problem']

// The answers it reads: JSON, and problems. Collections also answer text/csv; without the
// media types named, `data` would be typed as either.
type Json = 'application/json' | 'application/problem+json'

/** A client that sends the token and the convention's User-Agent form (Node's fetch sends `node`: 403). */
export function referenceClient (baseUrl: string, token: string): Client<paths, Json> {
  return createClient<paths, Json>({ baseUrl, headers: { authorization: `Bearer ${token}`, 'user-agent': 'reference-client/1' } })
}
// #endregion

// #region readme-client-calls
/** Creates an author and lists its invoices; the failures come back as typed problems. */
export async function authorWithInvoices (client: ReturnType<typeof referenceClient>, name: string, email: string): Promise<{ author: Author, invoices: DocumentSummary[] } | Problem> {
  const created = await client.POST('/v1/authors', { body: { name, email } })
  // A 4xx or 5xx: `error` is the problem body (title, status, detail, requestId, context).
  if (created.error !== undefined) return created.error
  const author = created.data

  const listed = await client.GET('/v1/documents', {
    params: { query: { authorId: [author.id], kind: ['INVOICE'], ordering: ['-createdDateTime'], limit: 20 } }
  })
  if (listed.error !== undefined) return listed.error
  return { author, invoices: listed.data.results }
}
// #endregion
