import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import query from '../../plugins/query/index.js'
import resource from '../../plugins/resource/index.js'
import { authors } from '../../routes/v1/authors.js'
import { pglite } from '../support/databases.js'
import { CURSOR_SECRET, prerequisites } from './helper.js'

// The plugin's routes rely on four others. Without one, the boot fails naming it (a list
// filtered by no execution context came back empty, and idempotency keys were ignored).

t.test('each missing prerequisite fails the boot, named', async t => {
  const store = await pglite.create(t)
  // (The problem plugin is one too; the others need it first, see test/shared/prerequisites.)
  const plugins = {
    validation: async (app: ReturnType<typeof Fastify>) => { await app.register(validation) },
    conventions: async (app: ReturnType<typeof Fastify>) => { await app.register(conventions) },
    query: async (app: ReturnType<typeof Fastify>) => { await app.register(query, { cursorSecret: CURSOR_SECRET }) }
  }
  for (const missing of Object.keys(plugins)) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    for (const [name, register] of Object.entries(plugins)) if (name !== missing) await register(app)
    await t.rejects(async () => { await app.register(resource, { store, resources: [authors] }) },
      { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: `The resource plugin needs the ${missing} plugin registered before it: await app.register(${missing}) first (import { ${missing} } from 'svc-conventions', or the default export of 'svc-conventions/${missing}').` }, missing)
  }
})

t.test('JSON Merge Patch bodies are parsed also when the conventions plugin lists other +json types', async t => {
  const store = await pglite.create(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false, jsonTypes: ['application/vnd.svc+json'] })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [authors] })
  const id = (await app.inject({ method: 'POST', url: '/v1/authors', payload: { name: 'Ada', email: 'ada@example.com' } })).json().id as string
  const patched = await app.inject({ method: 'PATCH', url: `/v1/authors/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'Ada L.' }) })
  t.equal(patched.statusCode, 204)
  t.equal((await app.inject({ url: `/v1/authors/${id}` })).json().name, 'Ada L.')
})

t.test('with them, a list reads the partition it wrote to, and a key is remembered', async t => {
  const store = await pglite.create(t)
  const app = await prerequisites(Fastify())
  t.teardown(() => app.close())
  await app.register(resource, { store, resources: [authors] })
  const key = { 'svc-idempotency-key': 'a-key-of-twenty-chars-or-more' }
  const create = async (headers: Record<string, string>): Promise<number> =>
    (await app.inject({ method: 'POST', url: '/v1/authors', payload: { name: 'Ada', email: 'ada@example.com' }, headers })).statusCode
  t.equal(await create(key), 201)
  t.equal(await create(key), 409, 'the retry with the key is caught')
  t.equal(await create({ 'svc-execution-context': 'preprod' }), 201)
  const names = async (headers: Record<string, string>): Promise<number> => (await app.inject({ url: '/v1/authors', headers })).json().results.length
  t.equal(await names({}), 1, 'prod, the default')
  t.equal(await names({ 'svc-execution-context': 'preprod' }), 1, 'preprod')
})
