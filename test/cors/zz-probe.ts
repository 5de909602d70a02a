import Fastify from 'fastify'
import cors from '@fastify/cors'
import problem from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'
const app = Fastify()
await app.register(problem)
await app.register(methods)
await app.register(cors, { preflight: false, origin: ['https://a.example'] })
app.get('/x', async () => ({ ok: true }))
for (const [m, u, h] of [['OPTIONS', '/x', {}], ['OPTIONS', '/nope', {}], ['GET', '/x', { origin: 'https://a.example' }]] as const) {
  const r = await app.inject({ method: m, url: u, headers: h })
  console.log(m, u, r.statusCode, r.headers, r.body)
}
