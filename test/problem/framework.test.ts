import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { connect, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import problem, { problemClientErrorHandler, problemFrameworkErrors, problemServerOptions } from '../../plugins/problem/index.js'

// Refusals made before any hook runs: Node's HTTP parser (clientErrorHandler) and Fastify's
// router (frameworkErrors). With the suite's server options both are problem bodies.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function build (t: Test): Promise<FastifyInstance> {
  const app = Fastify({ ...problemServerOptions, logger: false, routerOptions: { maxParamLength: 20 } })
  await app.register(problem)
  app.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  t.teardown(() => app.close())
  return app
}

t.test('router refusals are 400 problems with the request id', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['a percent sequence that does not decode', '/items/%ZZ', /not valid: a percent-encoded sequence/],
    ['a path parameter over maxParamLength', `/items/${'a'.repeat(30)}`, /longer than this service accepts/]
  ]
  const app = await build(t)
  for (const [name, url, detail] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: { 'x-request-id': 'trace-1' } })
    t.equal(res.statusCode, 400, name)
    t.match(res.headers['content-type'], /^application\/problem\+json/, name)
    t.equal(res.headers['x-request-id'], 'trace-1', `${name}: the id is echoed`)
    t.equal(res.headers['content-language'], 'en-US', `${name}: no hook ran, the language is still sent`)
    const body = res.json()
    t.same({ title: body.title, status: body.status, requestId: body.requestId }, { title: 'Bad Request', status: 400, requestId: 'trace-1' }, name)
    t.match(body.detail, detail, name)
  }
  const anonymous = await app.inject({ method: 'GET', url: '/items/%ZZ' })
  t.match(anonymous.json().requestId, UUID, 'a generated id without X-Request-ID')
  t.equal(anonymous.headers['x-request-id'], undefined, 'nothing to echo')
  const tooLong = await app.inject({ method: 'GET', url: '/items/%ZZ', headers: { 'x-request-id': 'x'.repeat(201) } })
  t.match(tooLong.json().requestId, UUID, 'an over-long X-Request-ID is replaced')
  t.equal(tooLong.headers['x-request-id'], undefined, 'and not echoed')
  t.equal((await app.inject({ method: 'GET', url: '/items/ok' })).statusCode, 200, 'a good URL is routed')
})

t.test('an async constraint that fails is a 500 problem, logged, with nothing internal', async (t) => {
  const logs: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  const app = Fastify({ ...problemServerOptions, logger: { level: 'error', stream } })
  app.addConstraintStrategy({
    name: 'tenant',
    storage: () => {
      const map = new Map<string, unknown>()
      return { get: (k: string) => map.get(k) ?? null, set: (k: string, v: unknown) => { map.set(k, v) } }
    },
    deriveConstraint: (_req: unknown, _ctx: unknown, done?: (err: Error | null, value?: string) => void) => {
      done?.(new Error('tenant lookup failed at db.internal:5432'))
    },
    validate: () => true,
    mustMatchWhenDerived: false
  } as never)
  await app.register(problem)
  app.route({ method: 'GET', url: '/constrained', constraints: { tenant: 'a' }, handler: async () => ({ ok: true }) })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/constrained' })
  t.equal(res.statusCode, 500)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.same({ title: res.json().title, status: res.json().status }, { title: 'Internal Server Error', status: 500 })
  t.notMatch(res.body, /5432|db\.internal|tenant lookup/, 'nothing internal')
  t.match(logs.join(''), /router error/, 'logged')
})

interface Raw { status: number, headers: string, body: string }

async function raw (port: number, bytes: string): Promise<Raw> {
  const socket: Socket = connect(port, '127.0.0.1')
  return await new Promise((resolve, reject) => {
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { data += chunk })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), headers: head, body })
    })
    socket.write(bytes)
  })
}

t.test('requests Node\'s parser refuses are problems, and the connection is closed', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const cases: Array<[string, string, number, boolean]> = [
    ['a garbage request line', 'NOT HTTP AT ALL\r\n\r\n', 400, true],
    ['a control character in a header', 'GET /items/a HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n', 400, true],
    ['headers over the size limit', `GET /items/a HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, true],
    ['headers over the size limit on HEAD', `HEAD /items/a HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, false]
  ]
  for (const [name, bytes, status, hasBody] of cases) {
    const res = await raw(port, bytes)
    t.equal(res.status, status, name)
    t.match(res.headers, /content-type: application\/problem\+json/i, name)
    t.match(res.headers, /connection: close/i, name)
    if (hasBody) {
      const body = JSON.parse(res.body)
      t.equal(body.status, status, `${name}: status in the body`)
      t.match(body.requestId, UUID, `${name}: a generated request id`)
      t.type(body.detail, 'string', name)
      t.match(res.headers, new RegExp(`content-length: ${Buffer.byteLength(res.body)}`, 'i'), `${name}: the length is the body's`)
    } else {
      t.equal(res.body, '', `${name}: the head only`)
    }
  }
  t.equal((await raw(port, 'GET /items/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status, 200, 'the server still serves')
})

t.test('an Expect other than 100-continue is served as if absent, not an empty 417', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const res = await raw(port, 'GET /items/a HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n')
  t.equal(res.status, 200, 'served')
  const missing = await raw(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nX-Request-ID: e1\r\nConnection: close\r\n\r\n')
  t.equal(missing.status, 404, 'and its refusals are the usual problems')
  t.match(JSON.parse(missing.body), { status: 404, requestId: 'e1' })

  // A listener of the application's own is left to decide alone.
  const own = Fastify()
  t.teardown(() => own.close())
  own.server.on('checkExpectation', (_req, res) => { res.writeHead(417).end() })
  await own.register(problem)
  own.get('/a', async () => ({ a: 1 }))
  await own.listen({ port: 0, host: '127.0.0.1' })
  t.equal(own.server.listenerCount('checkExpectation'), 1)
  t.equal((await raw((own.server.address() as { port: number }).port, 'GET /a HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: close\r\n\r\n')).status, 417)
})

t.test('the client error handler: timeouts, resets and sockets that cannot be written', async (t) => {
  const written: string[] = []
  let destroyed: unknown = 'no'
  const socket = (state: { destroyed?: boolean, writable?: boolean }): Socket => ({
    destroyed: state.destroyed ?? false,
    writable: state.writable ?? true,
    end: (text: string) => { written.push(text) },
    destroy: (err: unknown) => { destroyed = err }
  }) as unknown as Socket
  const error = (code: string): never => Object.assign(new Error(code), { code }) as never

  problemClientErrorHandler(error('ERR_HTTP_REQUEST_TIMEOUT'), socket({}))
  t.match(written[0], /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.match(written[0], /"status":408/)
  problemClientErrorHandler(error('ECONNRESET'), socket({}))
  problemClientErrorHandler(error('HPE_INVALID_METHOD'), socket({ destroyed: true }))
  t.equal(written.length, 1, 'nothing is written to a reset or destroyed socket')
  t.equal(destroyed, 'no')
  const notWritable = error('HPE_INVALID_METHOD')
  problemClientErrorHandler(notWritable, socket({ writable: false }))
  t.equal(destroyed, notWritable, 'a socket that cannot be written is destroyed')
  t.equal(written.length, 1)
  t.equal(problemServerOptions.frameworkErrors, problemFrameworkErrors)
  t.equal(problemServerOptions.clientErrorHandler, problemClientErrorHandler)
})
