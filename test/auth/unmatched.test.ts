import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'
import auth from '../../plugins/auth/index.js'
import { SECRET } from './helper.js'

t.test('requests that match no route are not authenticated: 404, 405 and OPTIONS need no token', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(methods)
  app.get('/v1/authors', { config: { auth: { scopes: ['authors:read'] } } }, async () => ({ results: [] }))
  t.teardown(() => app.close())
  const unknown = await app.inject({ url: '/nowhere' })
  t.equal(unknown.statusCode, 404)
  const wrongMethod = await app.inject({ method: 'DELETE', url: '/v1/authors' })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'GET, HEAD, OPTIONS')
  const options = await app.inject({ method: 'OPTIONS', url: '/v1/authors' })
  t.equal(options.statusCode, 204)
  const routed = await app.inject({ url: '/v1/authors' })
  t.equal(routed.statusCode, 401, 'a matched route still needs its token')
})

t.test('a catch-all OPTIONS route (as @fastify/cors adds) is no route: no token, whatever the path', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(auth, { verifier: { secret: SECRET } })
  await app.register(methods)
  app.options('*', async (_request, reply) => await reply.code(404).send({ message: 'caught' }))
  app.get('/v1/authors', { config: { auth: { scopes: ['authors:read'] } } }, async () => ({ results: [] }))
  t.teardown(() => app.close())
  const known = await app.inject({ method: 'OPTIONS', url: '/v1/authors' })
  t.equal(known.statusCode, 204, 'a known path: answered with Allow')
  t.equal(known.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal(known.headers['www-authenticate'], undefined, 'auth did not ask for a token')
  t.equal(known.headers['cache-control'], 'no-store', 'the methods plugin keeps it from caches')
  const unknown = await app.inject({ method: 'OPTIONS', url: '/nowhere' })
  t.equal(unknown.statusCode, 404, 'an unknown path: left to the catch-all route, not a 401')
  t.equal(JSON.parse(unknown.body).detail, 'caught', 'its answer, as a problem')
})
