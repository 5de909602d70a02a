import t from 'tap'
import { Agent, request as httpRequest } from 'node:http'
import { build, hs256, SECRET } from './helper.js'

// A kept-alive connection reuses its last verified principal while the token is trusted:
// the answers must be exactly those of a fresh check, whatever the connection sent before.

interface Answer { status: number, body: Record<string, any>, socket: unknown }

async function get (port: number, agent: Agent, path: string, authorization?: string): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers: authorization === undefined ? {} : { authorization } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { text += c })
      res.on('end', () => { resolve({ status: res.statusCode as number, body: JSON.parse(text), socket: req.socket }) })
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('one connection: the same token, another token, a bad one, and expiry', async (t) => {
  const app = await build(t, { verifier: { secret: SECRET } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })

  const reader = `Bearer ${hs256({ sub: 'reader', scope: 'authors:read' })}`
  const first = await get(port, agent, '/v1/authors', reader)
  const again = await get(port, agent, '/v1/authors', reader)
  t.strictSame([first.status, first.body.sub, again.status, again.body.sub], [200, 'reader', 200, 'reader'])
  t.equal(first.socket, again.socket, 'both on one connection')

  const other = `Bearer ${hs256({ sub: 'other' })}`
  const switched = await get(port, agent, '/v1/authors', other)
  t.equal(switched.status, 403, 'another token on the connection is checked afresh: it lacks the scope')
  t.equal(switched.socket, first.socket)
  t.equal((await get(port, agent, '/me', other)).body.principal.sub, 'other')

  const forged = `Bearer ${hs256({ sub: 'reader', scope: 'authors:read' }, 'another-secret-that-is-long-enough-000000')}`
  t.equal((await get(port, agent, '/v1/authors', forged)).status, 401, 'a forged token after a good one is refused')
  t.equal((await get(port, agent, '/v1/authors')).status, 401, 'no header after a good one is refused')
  t.equal((await get(port, agent, '/v1/authors', reader)).status, 200, 'the good token again')

  // A token accepted on the connection, then refused there once the clock has passed its exp.
  // The clock is moved, not waited for: fast-jwt, the verifier cache and the per-connection
  // memo all read Date.now.
  const exp = Math.floor(Date.now() / 1000) + 60
  const brief = `Bearer ${hs256({ sub: 'brief', scope: 'authors:read', exp })}`
  const before = await get(port, agent, '/v1/authors', brief)
  t.equal(before.status, 200)
  const realNow = Date.now
  const shift = (exp + 1) * 1000 - realNow()
  Date.now = () => realNow() + shift
  t.teardown(() => { Date.now = realNow })
  const after = await get(port, agent, '/v1/authors', brief)
  t.equal(after.socket, before.socket, 'still the same connection')
  t.equal(after.status, 401, 'an expired token is refused although the connection verified it before')
  t.equal(after.body.title, 'Invalid Token')
})

t.test('a custom verifier is asked every time, also on a kept-alive connection', async (t) => {
  let calls = 0
  const app = await build(t, { verifier: async (token) => { calls++; return token === 'good' ? { sub: 'custom', scopes: ['authors:read'], claims: {} } : null } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  t.equal((await get(port, agent, '/v1/authors', 'Bearer good')).status, 200)
  t.equal((await get(port, agent, '/v1/authors', 'Bearer good')).status, 200)
  t.equal(calls, 2, 'no reuse: the verifier may revoke')
})
