import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { signToken } from '../../plugins/auth/index.js'
import {
  problem, validation, methods, conventions, cors, auth, rateLimit, openapi, docs, lint, query, csv, conditional, idempotency,
  resource, defineResource, bulk, files, FileDescription, jobs, webhooks, events, downstream, createStore, type Store
} from '../../index.js'

// Every plugin of the public entry registered a second time in the same context is refused at
// once with an error that names it: Fastify alone ran the hooks twice (auth, conventions,
// rate-limit) or stopped on a decorator or route "already added" that named no plugin. A child
// context may register it again with other options for its own routes, except the plugins that
// serve the whole server: openapi, docs, and cors, whose library declares one catch-all route.

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'
const SERVICE = { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'twice' }
const store: Store = createStore({ dataDir: 'memory' })
t.teardown(() => store.close())

const notes = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: { title: Type.String(), attachment: FileDescription() },
  readOnly: ['attachment']
})

async function basics (app: FastifyInstance): Promise<void> {
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: SECRET })
}

async function served (app: FastifyInstance): Promise<void> {
  await basics(app)
  await app.register(resource, { store, resources: [notes], migrations: false })
}

interface Case {
  plugin: FastifyPluginAsync<never>
  options: unknown
  /** The plugins registered before it. */
  before: (app: FastifyInstance) => Promise<void>
  /** A second registration in a child context under a prefix: refused with this message, else it boots. */
  belowRefused?: string | RegExp
}

const none = async (): Promise<void> => {}
const withProblem = async (app: FastifyInstance): Promise<void> => { await app.register(problem) }
const withOpenapi = async (app: FastifyInstance): Promise<void> => { await app.register(openapi) }

const cases: Record<string, Case> = {
  problem: { plugin: problem as never, options: {}, before: none },
  validation: { plugin: validation as never, options: {}, before: none },
  methods: { plugin: methods as never, options: {}, before: withProblem },
  conventions: { plugin: conventions as never, options: {}, before: withProblem },
  cors: { plugin: cors as never, options: {}, before: withProblem, belowRefused: 'The cors plugin is registered already in a parent context, whose registration serves this one too: register it once.' },
  auth: { plugin: auth as never, options: { verifier: { secret: SECRET } }, before: withProblem },
  'rate-limit': { plugin: rateLimit as never, options: {}, before: withProblem },
  openapi: { plugin: openapi as never, options: {}, before: none, belowRefused: 'The openapi plugin is registered already in a parent context, whose registration serves this one too: register it once.' },
  docs: { plugin: docs as never, options: {}, before: withOpenapi, belowRefused: 'The docs plugin is registered already in a parent context, whose registration serves this one too: register it once.' },
  lint: { plugin: lint as never, options: {}, before: withOpenapi },
  query: { plugin: query as never, options: { cursorSecret: SECRET }, before: withProblem },
  csv: { plugin: csv as never, options: {}, before: none },
  conditional: { plugin: conditional as never, options: {}, before: withProblem },
  idempotency: { plugin: idempotency as never, options: { store, purgeInterval: 0 }, before: none },
  resource: { plugin: resource as never, options: { store, resources: [notes], migrations: false }, before: basics },
  bulk: { plugin: bulk as never, options: {}, before: served },
  files: { plugin: files as never, options: { resources: { notes: { field: 'attachment', mediaTypes: ['text/plain'] } } }, before: served },
  jobs: { plugin: jobs as never, options: { store, worker: false }, before: basics },
  events: { plugin: events as never, options: { store, service: SERVICE, eventTypes: ['note.filed'], worker: false, withoutAuth: true }, before: basics },
  webhooks: { plugin: webhooks as never, options: { store, purgeInterval: 0 }, before: withProblem },
  downstream: { plugin: downstream as never, options: { service: SERVICE, userAgent: { product: 'twice', version: 1 } }, before: none }
}

async function first (name: string, c: Case): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await c.before(app)
  await app.register(c.plugin, c.options as never)
  t.ok(app.hasPlugin(`svc-${name}`))
  return app
}

t.test('a second registration in the same context is refused, naming the plugin', async t => {
  for (const [name, c] of Object.entries(cases)) {
    const app = await first(name, c)
    const advice = typeof c.belowRefused === 'string' ? '' : '; a child context (app.register(async (child) => { … }, { prefix })) may register it again with other options for its own routes'
    await t.rejects(async () => { await app.register(c.plugin, c.options as never) },
      { message: `The ${name} plugin is registered in this context already: register it once, with all its options${advice}.` }, name)
  }
})

t.test('a child context registers it again, but for the plugins that serve the whole server', async t => {
  for (const [name, c] of Object.entries(cases)) {
    const app = await first(name, c)
    const below = async (): Promise<void> => {
      await app.register(async (child) => { await child.register(c.plugin, c.options as never) }, { prefix: '/child' })
      await app.ready()
    }
    if (c.belowRefused === undefined) await t.resolves(below, `${name}: boots`)
    else await t.rejects(below, { message: c.belowRefused }, `${name}: refused`)
  }
})

t.test('sibling contexts each register it, with options of their own', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  for (const realm of ['a', 'b']) {
    await app.register(async (child) => {
      await child.register(auth, { verifier: { secret: `${SECRET}-${realm}` } })
      child.get('/x', async () => ({ ok: true }))
    }, { prefix: `/${realm}` })
  }
  await app.ready()
  for (const [realm, other] of [['a', 'b'], ['b', 'a']]) {
    const own = signToken({ secret: `${SECRET}-${realm}`, sub: 'u' })
    const foreign = signToken({ secret: `${SECRET}-${other}`, sub: 'u' })
    t.equal((await app.inject({ url: `/${realm}/x`, headers: { authorization: `Bearer ${own}` } })).statusCode, 200, `${realm}: its own verifier`)
    t.equal((await app.inject({ url: `/${realm}/x`, headers: { authorization: `Bearer ${foreign}` } })).statusCode, 401, `${realm}: not its sibling's`)
  }
})
