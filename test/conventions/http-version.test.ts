import t from 'tap'
import http2 from 'node:http2'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import conventions from '../../plugins/conventions/index.js'
import { UA, build } from './app.js'

/** Sends one raw request line (Fastify's inject always speaks HTTP/1.1) and reads the whole reply. */
async function raw (app: FastifyInstance, version: string, path = '/echo', headers = 'Host: localhost\r\n'): Promise<{ status: number, body: string }> {
  const { port } = app.server.address() as AddressInfo
  return await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} ${version}\r\n${headers}User-Agent: ${UA}\r\nConnection: close\r\n\r\n`)
    })
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', chunk => { data += chunk })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), body })
    })
  })
}

t.test('HTTP/1.0 and older are refused with a 400 problem, never a 5xx', async t => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  for (const version of ['HTTP/1.0', 'HTTP/0.9']) {
    const res = await raw(app, version)
    t.equal(res.status, 400, version)
    t.match(JSON.parse(res.body), {
      title: 'Bad Request',
      status: 400,
      detail: `This service speaks HTTP/1.1; resend the request as HTTP/1.1 instead of ${version}.`
    })
  }
  t.equal((await raw(app, 'HTTP/1.1')).status, 200)
  // llhttp reads a request line naming HTTP/2.0 as it does HTTP/1.1's; HTTP/2 itself is no such line.
  const two = await raw(app, 'HTTP/2.0')
  t.equal(two.status, 400, 'an HTTP/1 request line naming HTTP/2.0')
  t.match(JSON.parse(two.body), { title: 'Bad Request', status: 400, detail: 'This service speaks HTTP/1.1; resend the request as HTTP/1.1: HTTP/2.0 is not a version an HTTP/1 request line can name.' })
  t.equal((await raw(app, 'HTTP/1.0', '/nowhere')).status, 400, 'unknown paths too')
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { httpVersion: false })
  await off.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await raw(off, 'HTTP/1.0')).status, 200)

  const app = await build(t, {}, app => {
    app.get('/old', { config: { conventions: { httpVersion: false } } }, async () => ({}))
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await raw(app, 'HTTP/1.0', '/old')).status, 200)
  t.equal((await raw(app, 'HTTP/1.0', '/health')).status, 200)
})

t.test('HTTP/2 on a server that speaks it passes', async t => {
  const app = Fastify({ http2: true, http: { requireHostHeader: false } } as object)
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(conventions)
  app.get('/echo', { config: { conventions: { userAgent: false } } }, async () => ({ ok: true }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const session = http2.connect(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`)
  t.teardown(() => session.close())
  const status = await new Promise<unknown>((resolve, reject) => {
    const req = session.request({ ':method': 'GET', ':path': '/echo' })
    req.on('response', (head) => resolve(head[':status'])).on('error', reject).resume()
    req.end()
  })
  t.equal(status, 200, 'an HTTP/2 stream')
})

t.test('an HTTP/1.1 request without Host: a 400 problem (the server created with requireHostHeader: false)', async t => {
  const app = Fastify({ http: { requireHostHeader: false } })
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(conventions)
  app.get('/echo', async () => ({ ok: true }))
  app.get('/free', { config: { conventions: { httpVersion: false } } }, async () => ({ ok: true }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const res = await raw(app, 'HTTP/1.1', '/echo', '')
  t.equal(res.status, 400)
  t.match(JSON.parse(res.body), { title: 'Bad Request', status: 400, detail: 'An HTTP/1.1 request must carry a Host header; add one naming this service.' })
  t.equal((await raw(app, 'HTTP/1.1', '/echo')).status, 200, 'with Host: served')
  t.equal((await raw(app, 'HTTP/2.0', '/echo', '')).status, 400, 'an HTTP/1 request line naming HTTP/2.0, without Host: refused')
  // RFC 9112 §3.2 holds whatever the route's rules: only the refusal of HTTP/1.0 is switched off.
  t.equal((await raw(app, 'HTTP/1.1', '/free', '')).status, 400, 'the rule switched off on the route: still 400')
  t.equal((await raw(app, 'HTTP/1.0', '/free', '')).status, 200, 'the rule switched off on the route: HTTP/1.0 served')
})

t.test('Host is required on every route, with every rule off too (RFC 9112 §3.2); HTTP/1.0 then served', async t => {
  const app = Fastify({ http: { requireHostHeader: false } })
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(conventions)
  app.get('/health', { config: { conventions: false } }, async () => ({ ok: true }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const cases: Array<[string, string, number, string | undefined]> = [
    ['HTTP/1.1', 'Host: localhost\r\n', 200, undefined],
    ['HTTP/1.1', '', 400, 'An HTTP/1.1 request must carry a Host header; add one naming this service.'],
    ['HTTP/1.1', 'Host: a\r\nHost: b\r\n', 400, 'The request carries the host header more than once; send it once, with one value.'],
    ['HTTP/1.1', 'Host: a\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n', 200, undefined],
    ['HTTP/1.0', '', 200, undefined],
    ['HTTP/1.0', 'Host: a\r\nHost: b\r\n', 400, 'The request carries the host header more than once; send it once, with one value.']
  ]
  for (const [version, headers, status, detail] of cases) {
    const name = `${version} ${JSON.stringify(headers)}`
    const res = await raw(app, version, '/health', headers)
    t.equal(res.status, status, name)
    if (detail !== undefined) t.match(JSON.parse(res.body), { title: 'Bad Request', status: 400, detail }, name)
  }
})

t.test('a one-value header sent twice: a 400 problem naming it (RFC 9112 §3.2 for Host)', async t => {
  const app = await build(t, {}, app => {
    app.get('/free', { config: { conventions: { httpVersion: false } } }, async () => ({ ok: true }))
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const cases: Array<[string, string]> = [
    ['Host: localhost\r\nHost: evil.example\r\n', 'host'],
    ['host: localhost\r\nHOST: localhost\r\n', 'host'],
    ['Host: localhost\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n', 'authorization'],
    ['Host: localhost\r\nContent-Type: application/json\r\nContent-type: text/plain\r\n', 'content-type']
  ]
  for (const [headers, name] of cases) {
    const res = await raw(app, 'HTTP/1.1', '/echo', headers)
    t.equal(res.status, 400, name)
    t.match(JSON.parse(res.body), { title: 'Bad Request', status: 400, detail: `The request carries the ${name} header more than once; send it once, with one value.` }, name)
  }
  // An invalid User-Agent, which its own rule refuses (conventions: Headers, User-Agent).
  const agent = await raw(app, 'HTTP/1.1', '/echo', `Host: localhost\r\nUser-Agent: ${UA}\r\n`)
  t.equal(agent.status, 403, 'user-agent twice, the same value: 403')
  t.match(JSON.parse(agent.body), { title: 'Forbidden', status: 403, detail: /; the header is sent more than once; send it once\.$/ })
  t.equal((await raw(app, 'HTTP/1.1', '/echo', 'Host: localhost\r\nAccept: application/json\r\nAccept: */*\r\nX-Other: 1\r\nx-other: 2\r\n')).status, 200, 'list headers and others may repeat')
  t.equal((await raw(app, 'HTTP/1.1', '/free', 'Host: a\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n')).status, 200, 'the rule switched off on the route')
  t.equal((await raw(app, 'HTTP/1.1', '/free', 'Host: a\r\nHost: b\r\n')).status, 400, 'the rule switched off on the route: Host twice is still a 400')
})
