import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'

// The plugin sets the context's error handler and, unless told not to, its not-found handler:
// an application with a not-found handler of its own keeps it with `notFound: false`, and a
// clash says which plugin and which option, not only Fastify's "already set".

t.test('notFound: false leaves the 404 to the application, whose answer is a problem; errors are still problems', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ message: 'mine' }))
  await app.register(problem, { notFound: false })
  app.get('/boom', async () => { throw new Error('internal') })
  const missing = await app.inject({ url: '/nowhere' })
  t.strictSame([missing.statusCode, missing.json().detail], [404, 'mine'], 'the application\'s own handler')
  t.match(missing.headers['content-type'], /^application\/problem\+json/)
  const boom = await app.inject({ url: '/boom' })
  t.equal(boom.statusCode, 500)
  t.match(boom.headers['content-type'], /^application\/problem\+json/)
})

t.test('a not-found handler set before the plugin: the boot error names the plugin and the option', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.setNotFoundHandler(async () => 'mine')
  await t.rejects(async () => { await app.register(problem) }, {
    message: /^problem plugin: the context has its own not-found handler already; register it with \{ notFound: false \}/,
    cause: { message: /Not found handler already set/ }
  })
})

t.test('an error handler the server refuses to replace: the boot error names the plugin', async t => {
  const app = Fastify({ allowErrorHandlerOverride: false })
  t.teardown(() => app.close())
  app.setErrorHandler(async (err) => err)
  await t.rejects(async () => { await app.register(problem, { notFound: false }) }, {
    message: /^problem plugin: the context has its own error handler already; it renders every error as a problem/,
    cause: { code: 'FST_ERR_ERROR_HANDLER_ALREADY_SET' }
  })
})
