import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'

t.test('methods outside the usual set are listed after the usual ones', async t => {
  const app = Fastify()
  app.addHttpMethod('PROPFIND', { hasBody: true })
  await app.register(problem)
  await app.register(methods)
  app.route({ method: 'PROPFIND', url: '/dav', handler: async () => ({}) })
  app.get('/dav', async () => ({}))
  const res = await app.inject({ method: 'DELETE', url: '/dav' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS, PROPFIND')
  await app.close()
})
