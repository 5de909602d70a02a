import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import resource from '../../plugins/resource/index.js'
import type { Store } from '../../store/types.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { pglite } from '../support/databases.js'
import { prerequisites } from './helper.js'

// Under a route prefix (`register(child => …, { prefix: '/api' })`) every path the plugin
// writes names the routes as Fastify serves them: Location, problem instances and links.

async function build (t: { teardown: (fn: () => unknown) => void }, store: Store, prefix: string): Promise<{ app: FastifyInstance, served: FastifyInstance['resources'] }> {
  const app = Fastify()
  let served: FastifyInstance['resources'] = new Map()
  await app.register(async (child) => {
    await prerequisites(child)
    await child.register(resource, { store, resources: [authors, documents], withoutAuth: true })
    served = child.resources
  }, { prefix })
  t.teardown(() => app.close())
  await app.ready()
  return { app, served }
}

const author = { name: 'Ada', email: 'ada@example.com' }
const document = (authorId: string, name: string): Record<string, unknown> => ({ name, authorId, kind: 'INVOICE' })

for (const prefix of ['/api', '/api/']) {
  t.test(`prefix ${prefix}: item paths carry the prefix`, async t => {
    const store = await pglite.create(t)
    const { app, served } = await build(t, store, prefix)
    const created = await app.inject({ method: 'POST', url: '/api/v1/authors', payload: author })
    t.equal(created.statusCode, 201)
    const id = created.json().id as string
    t.equal(created.headers.location, `/api/v1/authors/${id}`, 'Location')
    t.equal((await app.inject({ url: created.headers.location as string })).statusCode, 200, 'and it is served there')
    t.equal(served.get('authors')?.itemPath(id), `/api/v1/authors/${id}`, 'the served resource tells it to other plugins')

    const missing = await app.inject({ url: '/api/v1/authors/nobody' })
    t.strictSame([missing.statusCode, missing.json().instance], [404, '/api/v1/authors/nobody'], 'a 404 names the item')
    const orphan = await app.inject({ url: '/api/v1/authors/nobody/documents' })
    t.strictSame([orphan.statusCode, orphan.json().instance], [404, '/api/v1/authors/nobody'], 'a missing parent of a child collection')
    const orphanCreate = await app.inject({ method: 'POST', url: '/api/v1/authors/nobody/documents', payload: { name: 'x', kind: 'INVOICE' } })
    t.strictSame([orphanCreate.statusCode, orphanCreate.json().instance], [404, '/api/v1/authors/nobody'], 'a missing parent of a create')

    const child = await app.inject({ method: 'POST', url: `/api/v1/authors/${id}/documents`, payload: document(id, 'one') })
    t.match(child.headers.location, /^\/api\/v1\/documents\//, 'a child created under its parent')
    const blocked = await app.inject({ method: 'DELETE', url: `/api/v1/authors/${id}` })
    t.strictSame([blocked.statusCode, blocked.json().instance], [409, `/api/v1/authors/${id}`], 'a delete blocked by references')

    await app.inject({ method: 'POST', url: '/api/v1/documents', payload: document(id, 'two') })
    const page = (await app.inject({ url: '/api/v1/documents?limit=1' })).json()
    t.match(page.paging.next.url, /^http:\/\/localhost(:80)?\/api\/v1\/documents\?/, 'paging links')
  })
}
