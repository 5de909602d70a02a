import t from 'tap'
import Fastify, { type FastifyPluginAsync } from 'fastify'
import conventions from '../../plugins/conventions/index.js'
import cors from '../../plugins/cors/index.js'
import methods from '../../plugins/methods/index.js'
import auth from '../../plugins/auth/index.js'
import rateLimit from '../../plugins/rate-limit/index.js'
import conditional from '../../plugins/conditional/index.js'
import query from '../../plugins/query/index.js'
import webhooks from '../../plugins/webhooks/index.js'
import validation from '../../plugins/validation/index.js'
import lint from '../../plugins/lint/index.js'
import resource from '../../plugins/resource/index.js'
import docs from '../../plugins/docs/index.js'
import bulk from '../../plugins/bulk/index.js'

// The plugins that refuse requests do it by throwing problems, which only the problem plugin
// renders as application/problem+json: without it the boot fails, naming it, rather than
// answering in Fastify's own error shape. Those that refuse nothing work without it. The message
// says which plugin to register first and where to import it from (Fastify's own check would
// only name 'svc-problem').

t.test('the plugins that refuse requests need the problem plugin, registered before them', async t => {
  const secret = 'a-test-secret-that-is-long-enough-for-hs256'
  const table: Array<[string, FastifyPluginAsync<never>, unknown]> = [
    ['conventions', conventions as never, {}],
    ['cors', cors as never, {}],
    ['methods', methods as never, {}],
    ['auth', auth as never, { verifier: { secret } }],
    ['rate-limit', rateLimit as never, {}],
    ['conditional', conditional as never, {}],
    ['query', query as never, { cursorSecret: secret }],
    ['webhooks', webhooks as never, { store: {} }]
  ]
  for (const [name, plugin, opts] of table) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(plugin, opts as never) },
      {
        code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
        message: `The ${name} plugin needs the problem plugin registered before it: await app.register(problem) first (import { problem } from 'svc-conventions', or the default export of 'svc-conventions/problem').`
      }, name)
  }
})

t.test('several missing plugins are named in the order to register them; the docs page names openapi', async t => {
  const fresh = (): ReturnType<typeof Fastify> => {
    const app = Fastify()
    t.teardown(() => app.close())
    return app
  }
  const app = fresh()
  await app.register(validation)
  await t.rejects(async () => { await app.register(resource, { store: {} as never, resources: [] }) }, {
    message: "The resource plugin needs the problem, conventions and query plugins registered before it: await app.register(problem); await app.register(conventions); await app.register(query) first (import { problem, conventions, query } from 'svc-conventions', or the default export of 'svc-conventions/problem', 'svc-conventions/conventions' and 'svc-conventions/query')."
  })
  await t.rejects(async () => { await fresh().register(docs) }, { message: /^The docs plugin needs the openapi plugin registered before it: await app\.register\(openapi\) first/ })
  await t.rejects(async () => { await fresh().register(bulk) }, { message: /^The bulk plugin needs the resource plugin registered before it/ })
})

t.test('the plugins that refuse nothing themselves boot without it', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(validation)
  await app.register(lint)
  await t.resolves(async () => { await app.ready() })
})
