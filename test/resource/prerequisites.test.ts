import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import auth from '../../plugins/auth/index.js'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import query from '../../plugins/query/index.js'
import resource, { defineResource } from '../../plugins/resource/index.js'
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

t.test('resources with token scopes need the auth plugin, which alone checks them, unless withoutAuth says so', async t => {
  const store = await pglite.create(t)
  const boot = async (opts: Record<string, unknown>, withAuth = false): Promise<ReturnType<typeof Fastify>> => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await app.register(validation)
    await app.register(conventions, { userAgent: false })
    if (withAuth) await app.register(auth, { verifier: { secret: 'a-test-secret-that-is-long-enough-for-hs256' } })
    await app.register(query, { cursorSecret: CURSOR_SECRET })
    await app.register(resource, { store, resources: [authors], ...opts })
    await app.ready()
    return app
  }
  await t.rejects(boot({}), {
    code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
    message: "The resource plugin serves routes that require the token scopes authors:read and authors:write, which only the auth plugin checks, and it is not registered before it: every caller would be let in. Register it first (await app.register(auth, { verifier }); import { auth } from 'svc-conventions'), or give the plugin withoutAuth: true when something else checks the tokens."
  }, 'scoped, no auth: the boot stops')
  await t.rejects(boot({ withoutAuth: 'yes' }), { name: 'TypeError', message: 'resource plugin: withoutAuth must be a boolean, got "yes"' })
  const open = await boot({ withoutAuth: true })
  t.equal((await open.inject({ url: '/v1/authors' })).statusCode, 200, 'withoutAuth: true lets every caller in, as asked')
  const guarded = await boot({}, true)
  t.equal((await guarded.inject({ url: '/v1/authors' })).statusCode, 401, 'with auth: a token is asked for')
  const unscoped = defineResource({ name: 'note', collection: 'notes', path: '/v1/notes', idParam: 'noteId', fields: { name: Type.String({ maxLength: 10 }) } })
  await t.resolves(boot({ resources: [unscoped] }), 'no scopes: nothing to check, no auth needed')
})

t.test('JSON Merge Patch bodies are parsed also when the conventions plugin lists other +json types', async t => {
  const store = await pglite.create(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false, jsonTypes: ['application/vnd.svc+json'] })
  await app.register(query, { cursorSecret: CURSOR_SECRET })
  await app.register(resource, { store, resources: [authors], withoutAuth: true })
  const id = (await app.inject({ method: 'POST', url: '/v1/authors', payload: { name: 'Ada', email: 'ada@example.com' } })).json().id as string
  const patched = await app.inject({ method: 'PATCH', url: `/v1/authors/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'Ada L.' }) })
  t.equal(patched.statusCode, 204)
  t.equal((await app.inject({ url: `/v1/authors/${id}` })).json().name, 'Ada L.')
})

t.test('with them, a list reads the partition it wrote to, and a key is remembered', async t => {
  const store = await pglite.create(t)
  const app = await prerequisites(Fastify())
  t.teardown(() => app.close())
  await app.register(resource, { store, resources: [authors], withoutAuth: true })
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
