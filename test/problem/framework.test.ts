import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { connect, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import problem, { problemClientErrorHandler as handler, problemFrameworkErrors, problemServerOptions } from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'

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
    t.strictSame({ title: body.title, status: body.status, requestId: body.requestId }, { title: 'Bad Request', status: 400, requestId: 'trace-1' }, name)
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
  t.strictSame({ title: res.json().title, status: res.json().status }, { title: 'Internal Server Error', status: 500 })
  t.notMatch(res.body, /5432|db\.internal|tenant lookup/, 'nothing internal')
  t.match(logs.join(''), /router error/, 'logged')
})

interface Raw { status: number, headers: string, body: string }

/** Every byte answered on a connection, until it closes. */
async function rawText (port: number, bytes: string): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1')
  return await new Promise((resolve, reject) => {
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { data += chunk })
    socket.on('error', reject)
    socket.on('close', () => { resolve(data) })
    socket.write(bytes)
  })
}

/** The one answer on a connection: its status, head and body. */
async function raw (port: number, bytes: string): Promise<Raw> {
  const [head = '', body = ''] = (await rawText(port, bytes)).split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), headers: head, body }
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
    // RFC 9110 §6.6.1: a 4xx of an origin server with a clock carries Date, in IMF-fixdate form.
    t.match(res.headers, /^date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/im, `${name}: Date`)
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

/** The status, Allow, X-Request-ID and problem of an answer, the method's name taken out of the detail. */
function gist (res: Raw, method: string): Record<string, unknown> {
  const header = (name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'im').exec(res.headers)?.[1]
  const body = JSON.parse(res.body)
  return { status: res.status, allow: header('allow'), requestId: header('x-request-id'), title: body.title, detail: String(body.detail).replace(`The method ${method} `, 'The method <method> '), instance: body.instance }
}

t.test('a method Node\'s parser does not know gets what Fastify gives a method no route serves: 405 with Allow, 404, 400', async (t) => {
  const app = Fastify({ ...problemServerOptions, logger: false })
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(methods)
  app.get('/items', async () => ({}))
  app.route({ method: ['GET', 'DELETE'], url: '/items/:id', handler: async () => ({}) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // Node knows TRACE (Fastify's path: the methods plugin answers); it does not know FOO, get or BREW.
  const targets = ['/items', '/items/a?x=1', '/items/', '/nowhere', '/items/%ZZ', '*', `/items/${'a'.repeat(300)}`]
  for (const target of targets) {
    const request = (method: string): string => `${method} ${target} HTTP/1.1\r\nHost: x\r\nX-Request-ID: r-1\r\nConnection: close\r\n\r\n`
    const known = await raw(port, request('TRACE'))
    for (const method of ['FOO', 'get', 'BREW']) {
      const res = await raw(port, request(method))
      t.strictSame(gist(res, method), gist(known, 'TRACE'), `${method} ${target.slice(0, 20)}: as TRACE`)
      t.match(res.headers, /^connection: close$/im, `${method} ${target.slice(0, 20)}: the connection closes`)
      t.match(res.headers, /^date: .+ GMT$/im, `${method} ${target.slice(0, 20)}: Date`)
      t.match(res.headers, new RegExp(`^content-length: ${Buffer.byteLength(res.body)}$`, 'im'), 'the length is the body\'s')
    }
  }
  t.equal((await raw(port, request2('FOO /items HTTP/1.1', []))).status, 405, 'without X-Request-ID')
  const ids: Array<[string, string[], string | undefined]> = [
    ['none sent', [], undefined],
    ['one sent', ['x-request-id:  trace 1 '], 'trace 1'],
    ['two lines, joined as Node joins them', ['X-Request-ID: a', 'x-request-id: b'], 'a, b'],
    ['too long: generated, not echoed', [`X-Request-ID: ${'x'.repeat(201)}`], undefined],
    ['beyond ASCII: generated, not echoed', ['X-Request-ID: caf\u00c3\u00a9'], undefined]
  ]
  for (const [name, lines, echoed] of ids) {
    const res = await raw(port, request2('FOO /items/a HTTP/1.1', lines))
    t.equal(res.status, 405, name)
    t.equal(gist(res, 'FOO').requestId, echoed, `${name}: the header`)
    if (echoed === undefined) t.match(JSON.parse(res.body).requestId, UUID, `${name}: a generated requestId`)
    else t.equal(JSON.parse(res.body).requestId, echoed, `${name}: the requestId`)
  }
  // What cannot be read whole, or what Node would refuse on other grounds, keeps the plain 400.
  const plain: Array<[string, string]> = [
    ['a head cut short', 'FOO /items HTTP/1.1\r\nHost: x\r\n'],
    ['HTTP/1.0', request2('FOO /items HTTP/1.0', [])],
    ['a version that is no version', request2('FOO /items HTTP/1.x', [])],
    ['two spaces in the request line', request2('FOO  /items HTTP/1.1', [])],
    ['a method that is no token', request2('F(O) /items HTTP/1.1', [])],
    ['a header name that is no token', request2('FOO /items HTTP/1.1', ['Bad Name: 1'])],
    ['a folded header line', request2('FOO /items HTTP/1.1', ['X-A: 1', ' folded'])],
    ['a control character in a value', request2('FOO /items HTTP/1.1', ['X-A: a\u0001b'])],
    ['the HTTP/2 preface (Node: HPE_PAUSED_H2_UPGRADE)', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']
  ]
  for (const [name, bytes] of plain) {
    const res = await raw(port, bytes)
    t.equal(res.status, 400, name)
    t.match(JSON.parse(res.body), { title: 'Bad Request', detail: 'The request is not valid HTTP/1.1; check the request line and the headers.', requestId: UUID }, name)
  }
  t.equal((await raw(port, request2('FOO /items HTTP/2.0', []))).status, 405, 'a later version is read')

  // Refused bytes after a request Node read whole, in the same packet (pipelined, or past its
  // Content-Length): the packet's head is that request, not the refused one, so no 405 names it.
  const after: Array<[string, string]> = [
    ['a request, then one of a method Node does not know', 'GET /items/a HTTP/1.1\r\nHost: x\r\n\r\nFOO /items HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a request, then bytes past its Content-Length', 'DELETE /items/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}XYZ']
  ]
  for (const [name, bytes] of after) {
    const all = await rawText(port, bytes)
    t.notMatch(all, /HTTP\/1\.1 405 /, `${name}: no 405 for the request that was read`)
    t.match(all, /HTTP\/1\.1 400 Bad Request\r\n[\s\S]*"detail":"The request is not valid HTTP\/1\.1; check the request line and the headers\."/, `${name}: the plain 400`)
  }

  // Without the methods plugin, Fastify's path gives a method no route serves a 404.
  const bare = await build(t)
  await bare.listen({ port: 0, host: '127.0.0.1' })
  const barePort = (bare.server.address() as { port: number }).port
  const trace = await raw(barePort, request2('TRACE /items/a HTTP/1.1', []))
  const foo = await raw(barePort, request2('FOO /items/a HTTP/1.1', []))
  t.equal(foo.status, 404)
  t.strictSame(gist(foo, 'FOO'), gist(trace, 'TRACE'), 'as TRACE')
})

/** A request head of `line` and `fields`, with Host, that closes the connection. */
function request2 (line: string, fields: string[]): string {
  return [line, 'Host: x', ...fields, 'Connection: close', '', ''].join('\r\n')
}

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
  // Fastify binds the server's instance; none of these cases reads it.
  const problemClientErrorHandler = (err: never, s: Socket): void => { handler.call({} as never, err, s) }

  problemClientErrorHandler(error('ERR_HTTP_REQUEST_TIMEOUT'), socket({}))
  t.match(written[0], /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.match(written[0], /"status":408/)
  problemClientErrorHandler(error('ECONNRESET'), socket({}))
  problemClientErrorHandler(error('HPE_INVALID_METHOD'), socket({ destroyed: true }))
  t.equal(written.length, 1, 'nothing is written to a reset or destroyed socket')
  t.equal(destroyed, 'no')
  problemClientErrorHandler(error('HPE_INVALID_METHOD'), socket({}))
  t.match(written[1], /^HTTP\/1\.1 400 Bad Request\r\n/, 'no bytes to read the method from: the plain 400')
  written.length = 1
  const notWritable = error('HPE_INVALID_METHOD')
  problemClientErrorHandler(notWritable, socket({ writable: false }))
  t.equal(destroyed, notWritable, 'a socket that cannot be written is destroyed')
  t.equal(written.length, 1)
  t.equal(problemServerOptions.frameworkErrors, problemFrameworkErrors)
  t.equal(problemServerOptions.clientErrorHandler, handler)
})

t.test('a request reaching a kept-alive connection while the app closes gets a problem, not Fastify\'s plain 503', async (t) => {
  const app = Fastify({ ...problemServerOptions, logger: false })
  await app.register(problem)
  // Each step waits for the one before, not for a clock: the first request is in its handler,
  // the app is closing (preClose runs after Fastify marks it so), the second request has arrived.
  const signal = (): { promise: Promise<void>, done: () => void } => {
    let done!: () => void
    const promise = new Promise<void>((resolve) => { done = resolve })
    return { promise, done }
  }
  const entered = signal()
  const released = signal()
  const closing = signal()
  const arrived = signal()
  app.addHook('preClose', async () => { closing.done() })
  app.get('/hold', async () => {
    entered.done()
    await released.promise
    return { held: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  app.server.on('request', (req: { url?: string }) => { if (req.url === '/missing') arrived.done() })
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  let answers = ''
  socket.on('data', (chunk) => { answers += String(chunk) })
  const ended = new Promise((resolve) => socket.on('close', resolve))
  socket.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n')
  await entered.promise
  const closed = app.close()
  await closing.promise
  socket.write('GET /missing HTTP/1.1\r\nHost: x\r\nX-Request-ID: during-close\r\n\r\n')
  await arrived.promise
  released.done()
  await ended
  await closed
  const second = answers.slice(answers.indexOf('{"held":true}') + '{"held":true}'.length)
  t.match(second, /^HTTP\/1\.1 404 Not Found\r\n/)
  t.match(second, /^content-type: application\/problem\+json/im)
  t.match(second, /^connection: close$/im, 'the answer closes the connection')
  t.match(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)), { status: 404, requestId: 'during-close' })
  t.equal(problemServerOptions.return503OnClosing, false)
})
