import t from 'tap'
import Fastify from 'fastify'
import { listenRefusal } from '../../listen-refusal.js'

// What Fastify's listen throws, for each way it can fail, and the variable the message must name.
const cases: Array<{ name: string, listen: { host: string, port: number }, names: RegExp }> = [
  { name: 'a name that does not resolve', listen: { host: 'no-such-host.invalid', port: 0 }, names: /^HOST=no-such-host\.invalid: the name does not resolve to an address \((ENOTFOUND|EAI_AGAIN|EAI_FAIL)\)/ },
  { name: 'an address no interface has', listen: { host: '192.0.2.1', port: 0 }, names: /^HOST=192\.0\.2\.1: no network interface of this machine has that address/ }
]

t.test('a listen that fails names HOST or PORT, and keeps Node\'s error as its cause', async t => {
  const taken = Fastify()
  await taken.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await taken.close() })
  const port = (taken.server.address() as { port: number }).port
  for (const c of [...cases, { name: 'a port in use', listen: { host: '127.0.0.1', port }, names: new RegExp(`^PORT=${port}: another process already listens on 127\\.0\\.0\\.1:${port}; set PORT to a free port`) }]) {
    const app = Fastify()
    const err = await app.listen(c.listen).then(() => null, (e: unknown) => e)
    await app.close()
    t.ok(err instanceof Error, `${c.name}: the listen fails`)
    const refusal = listenRefusal(err, c.listen.host, c.listen.port) as Error
    t.match(refusal.message, c.names, c.name)
    t.equal(refusal.cause, err, `${c.name}: Node's error is the cause`)
  }
})

t.test('a port this process may not take names PORT', async t => {
  const err = Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), { code: 'EACCES' })
  t.equal((listenRefusal(err, '0.0.0.0', 80) as Error).message, 'PORT=80: this process may not listen on 0.0.0.0:80 (ports below 1024 need privileges); set PORT to 1024 or above')
})

t.test('any other error comes back as it is', async t => {
  for (const err of [new Error('boom'), Object.assign(new Error('x'), { code: 'ECONNRESET' }), 'text', null, undefined]) {
    t.equal(listenRefusal(err, '127.0.0.1', 3000), err)
  }
})
