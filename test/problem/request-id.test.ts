import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Writable } from 'node:stream'
import { connect, type AddressInfo } from 'node:net'
import problem, { problemServerOptions, type ProblemPluginOptions } from '../../plugins/problem/index.js'

// One requestId per request wherever it shows: the problem body, the echoed header, the
// router's refusals (problemFrameworkErrors, before any hook) and, with problemServerOptions,
// the log's reqId. The plugin's requestIdHeader is read by all of them.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface Logged { msg: string, reqId?: string, requestId?: string }

async function build (t: { teardown: (fn: () => unknown) => void }, server: FastifyServerOptions, plugin: ProblemPluginOptions = {}): Promise<{ app: FastifyInstance, lines: Logged[] }> {
  const lines: Logged[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { for (const line of String(chunk).trim().split('\n')) lines.push(JSON.parse(line)); cb() } })
  const app = Fastify({ ...server, logger: { level: 'info', stream } })
  await app.register(problem, plugin)
  app.get('/boom', async () => { throw new Error('internal') })
  app.get('/items/:id', async (request) => { request.log.info('in handler'); return { id: (request.params as { id: string }).id } })
  t.teardown(() => app.close())
  return { app, lines }
}

t.test('the router\'s refusals read the plugin\'s requestIdHeader', async t => {
  const { app } = await build(t, { frameworkErrors: problemServerOptions.frameworkErrors }, { requestIdHeader: 'X-Correlation-ID', maxRequestIdLength: 10 })
  const table: Array<[Record<string, string>, RegExp | string, string | undefined]> = [
    [{ 'x-correlation-id': 'corr-1' }, 'corr-1', 'corr-1'],
    [{ 'x-request-id': 'rid-1' }, UUID, undefined],
    [{ 'x-correlation-id': 'c'.repeat(11) }, UUID, undefined]
  ]
  for (const [headers, requestId, echoed] of table) {
    const res = await app.inject({ url: '/items/%ZZ', headers })
    t.equal(res.statusCode, 400, JSON.stringify(headers))
    t.match(res.json().requestId, requestId, JSON.stringify(headers))
    t.equal(res.headers['x-correlation-id'], echoed)
    t.equal(res.headers['x-request-id'], undefined, 'the default header is not the one read')
  }
})

t.test('without the problem plugin, the router\'s refusals read X-Request-ID', async t => {
  const app = Fastify({ frameworkErrors: problemServerOptions.frameworkErrors })
  t.teardown(() => app.close())
  app.get('/items/:id', async () => ({}))
  const res = await app.inject({ url: '/items/%ZZ', headers: { 'x-request-id': 'rid-1' } })
  t.strictSame([res.statusCode, res.json().requestId, res.headers['x-request-id']], [400, 'rid-1', 'rid-1'])
})

t.test('problemServerOptions: the log\'s reqId is the requestId of the body', async t => {
  for (const plugin of [{}, { requestIdHeader: 'x-correlation-id' }]) {
    const header = plugin.requestIdHeader ?? 'x-request-id'
    const { app, lines } = await build(t, problemServerOptions, plugin)
    const sent = await app.inject({ url: '/boom', headers: { [header]: 'trace-1' } })
    t.equal(sent.json().requestId, 'trace-1', header)
    const generated = await app.inject({ url: '/boom' })
    const id = generated.json().requestId as string
    t.match(id, UUID)
    const refused = await app.inject({ url: '/items/%ZZ' })
    const routerId = refused.json().requestId as string
    const tooLong = await app.inject({ url: '/boom', headers: { [header]: 'x'.repeat(201) } })
    t.equal(tooLong.statusCode, 400, 'a too long id is refused')
    const generatedForIt = tooLong.json().requestId as string
    t.match(generatedForIt, UUID, 'with a generated id, in the log too')
    t.ok(lines.some(l => l.reqId === generatedForIt), 'the refusal\'s log lines carry it')
    await app.inject({ url: '/items/1', headers: { [header]: 'trace-2' } })
    const errors = lines.filter(l => l.msg === 'unexpected error')
    t.strictSame(errors.map(l => [l.reqId, l.requestId]), [['trace-1', 'trace-1'], [id, id]], `${header}: the error lines`)
    t.ok(lines.some(l => l.msg === 'in handler' && l.reqId === 'trace-2'), 'a handler\'s own line carries it')
    t.ok(lines.some(l => l.reqId === routerId), 'the router\'s refusal too')
  }
})

t.test('without problemServerOptions, ids are generated on first use as before', async t => {
  const { app, lines } = await build(t, {})
  const res = await app.inject({ url: '/boom' })
  const id = res.json().requestId as string
  t.match(id, UUID)
  const logged = lines.find(l => l.msg === 'unexpected error')
  t.equal(logged?.requestId, id)
  t.match(logged?.reqId, /^req-/, 'Fastify\'s own counter')
})

t.test('one server answers router refusals one way: the plugin must agree with itself', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(async (child) => { await child.register(problem) }, { prefix: '/v1' })
  await app.register(async (child) => { await child.register(problem) }, { prefix: '/v2' })
  await app.ready()
  const clash = Fastify()
  t.teardown(() => clash.close())
  await clash.register(async (child) => { await child.register(problem) }, { prefix: '/v1' })
  await t.rejects(async () => { await clash.register(async (child) => { await child.register(problem, { requestIdHeader: 'x-trace' }) }, { prefix: '/v2' }).ready() },
    { name: 'TypeError', message: /requestIdHeader and maxRequestIdLength must be the same wherever the plugin is registered on one server.*got x-trace\/200 after x-request-id\/200/ })
})

/** Sends `head` (request line and header lines) over a socket; the answer's status, headers and JSON body. */
async function rawRequest (port: number, head: string[]): Promise<{ status: number, headers: Record<string, string>, body: { requestId: string, context?: unknown[] } }> {
  const socket = connect(port, '127.0.0.1')
  socket.write([...head, 'Connection: close', '', ''].join('\r\n'))
  let text = ''
  for await (const chunk of socket) text += String(chunk)
  const [top, payload] = text.split('\r\n\r\n') as [string, string]
  const [line, ...fields] = top.split('\r\n')
  const headers: Record<string, string> = {}
  for (const f of fields) headers[f.slice(0, f.indexOf(':')).toLowerCase()] = f.slice(f.indexOf(':') + 1).trim()
  return { status: Number(line?.split(' ')[1]), headers, body: JSON.parse(payload) }
}

t.test('an id header sent twice is refused, never joined into one id', async t => {
  for (const server of [{}, problemServerOptions]) {
    const { app } = await build(t, server)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as AddressInfo).port
    const which = server === problemServerOptions ? 'problemServerOptions' : 'plugin alone'
    const twice = await rawRequest(port, ['GET /items/1 HTTP/1.1', 'Host: x', 'X-Request-ID: req-a', 'x-request-id: req-b'])
    t.equal(twice.status, 400, which)
    t.match(twice.body.requestId, UUID, `${which}: a generated requestId`)
    t.equal(twice.headers['x-request-id'], undefined, `${which}: nothing echoed`)
    t.match(twice.body.context, [{ code: 'INPUT_INVALID', field: 'X-Request-ID', source: 'header', message: /^must be sent once/ }], which)
    const once = await rawRequest(port, ['GET /items/1 HTTP/1.1', 'Host: x', 'X-Request-ID: req-a, req-b'])
    t.strictSame([once.status, once.headers['x-request-id']], [200, 'req-a, req-b'], `${which}: one header whose value has a comma is an id`)
  }
  // The router's refusals, answered before any hook (problemFrameworkErrors).
  const { app } = await build(t, { frameworkErrors: problemServerOptions.frameworkErrors })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const router = await rawRequest((app.server.address() as AddressInfo).port, ['GET /items/%ZZ HTTP/1.1', 'Host: x', 'X-Request-ID: req-a', 'X-Request-ID: req-b'])
  t.equal(router.status, 400, 'the router\'s refusal')
  t.match(router.body.requestId, UUID, 'the router\'s refusal uses a generated id')
  t.equal(router.headers['x-request-id'], undefined)
})
