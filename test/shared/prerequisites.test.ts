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

// The plugins that refuse requests do it by throwing problems, which only the problem plugin
// renders as application/problem+json: without it the boot fails, naming it, rather than
// answering in Fastify's own error shape. Those that refuse nothing work without it.

t.test('the plugins that refuse requests need the problem plugin, registered before them', async t => {
  const secret = 'a-test-secret-that-is-long-enough-for-hs256'
  const table: Array<[string, FastifyPluginAsync<never>, unknown]> = [
    ['svc-conventions', conventions as never, {}],
    ['svc-cors', cors as never, {}],
    ['svc-methods', methods as never, {}],
    ['svc-auth', auth as never, { verifier: { secret } }],
    ['svc-rate-limit', rateLimit as never, {}],
    ['svc-conditional', conditional as never, {}],
    ['svc-query', query as never, { cursorSecret: secret }],
    ['svc-webhooks', webhooks as never, { store: {} }]
  ]
  for (const [name, plugin, opts] of table) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(plugin, opts as never) },
      { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: `The dependency 'svc-problem' of plugin '${name}' is not registered` }, name)
  }
})

t.test('the plugins that refuse nothing themselves boot without it', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(validation)
  await app.register(lint)
  await t.resolves(async () => { await app.ready() })
})
