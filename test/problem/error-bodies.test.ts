import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fc from 'fast-check'
import { Readable, Writable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import problem, { problems } from '../../plugins/problem/index.js'
import { messageOf } from '../../plugins/problem/error-bodies.js'

// A 4xx or 5xx that a handler answers with a body of its own, not by throwing, still goes out
// as the convention's problem (Errors: every 4xx/5xx is a problem body), unless the plugin is
// told to leave such bodies alone.

const PROBLEM = /^application\/problem\+json/

async function build (t: Test, options: Record<string, unknown> = {}, logs: string[] = []): Promise<FastifyInstance> {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  const app = Fastify({ logger: { level: 'warn', stream } })
  t.teardown(() => app.close())
  await app.register(problem, options)
  app.all('/own/:status', async (request, reply) => {
    const { status } = request.params as { status: string }
    const { as } = request.query as { as?: string }
    reply.code(Number(status))
    switch (as) {
      case 'text': return await reply.type('text/plain').send('Name taken\nsecond line')
      case 'html': return await reply.type('text/html').send('<p>Name taken</p>')
      case 'none': return await reply.send()
      case 'problem': return await reply.type('application/problem+json').send({ title: 'Mine', status: Number(status) })
      case 'gzip': return await reply.type('application/json').header('content-encoding', 'gzip').send(gzipSync('{"message":"zipped"}'))
      case 'buffer': return await reply.type('application/json').send(Buffer.from('{"detail":"from a buffer"}'))
      case 'detail': return await reply.send({ detail: 'the detail', message: 'the message' })
      case 'array': return await reply.send(['a message'])
      case 'odd': return await reply.send({ detail: 42, message: 'the message' })
      case 'blank': return await reply.send({ message: '  ' })
      case 'long': return await reply.send({ message: 'x'.repeat(400) })
      case 'big': return await reply.type('text/plain').send('y'.repeat(20_000))
      case 'bad-json': return await reply.type('application/json').send('{"message":')
      case 'retry': return await reply.header('retry-after', '7').send({ message: 'busy' })
      case 'length': return await reply.header('content-length', '999').send({ message: 'wrong length' })
      default: return await reply.send({ error: 'whatever', message: 'Name taken', stack: 'at SELECT secret FROM users' })
    }
  })
  return app
}

t.test('a body of its own becomes the problem of its status; what it says for the client is the detail of a 4xx', async t => {
  const app = await build(t)
  const cases: Array<[string, number, string]> = [
    ['', 409, 'Name taken'],
    ['?as=text', 409, 'Name taken'],
    ['?as=detail', 400, 'the detail'],
    ['?as=odd', 400, 'the message'],
    ['?as=buffer', 404, 'from a buffer'],
    ['?as=long', 400, 'x'.repeat(300)],
    ['?as=html', 409, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=none', 404, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=array', 400, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=blank', 400, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=big', 400, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=bad-json', 400, 'The request cannot be processed as sent; check it against the API description.'],
    ['?as=gzip', 400, 'The request cannot be processed as sent; check it against the API description.'],
    ['', 418, 'Name taken'],
    ['', 500, 'An unexpected error occurred; retry later, and quote the requestId if it persists.'],
    ['?as=text', 502, 'An unexpected error occurred; retry later, and quote the requestId if it persists.'],
    ['', 503, 'The service cannot answer now; retry later, and quote the requestId if it persists.']
  ]
  for (const [query, status, detail] of cases) {
    const res = await app.inject({ url: `/own/${status}${query}`, headers: { 'x-request-id': 'r-1' } })
    const label = `${status}${query}`
    t.equal(res.statusCode, status, label)
    t.match(res.headers['content-type'], PROBLEM, label)
    t.equal(res.headers['content-encoding'], undefined, `${label}: the body's own framing is gone`)
    t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), `${label}: the length of the problem`)
    const body = res.json()
    t.strictSame(Object.keys(body).sort(), ['detail', 'requestId', 'status', 'title'], label)
    t.strictSame([body.status, body.detail, body.requestId], [status, detail, 'r-1'], label)
    t.notMatch(res.body, /SELECT|secret|stack/, `${label}: nothing else of the body`)
  }
  const teapot = await app.inject({ url: '/own/418' })
  t.equal(teapot.json().title, "I'm a Teapot", 'a status outside the convention\'s table has Node\'s title')
  const conflict = await app.inject({ url: '/own/409' })
  t.equal(conflict.json().title, 'Conflict')
})

t.test('the headers of the answer stay, but for those of the body', async t => {
  const app = await build(t)
  const retry = await app.inject({ url: '/own/503?as=retry' })
  t.strictSame([retry.statusCode, retry.headers['retry-after']], [503, '7'])
  const length = await app.inject({ url: '/own/400?as=length' })
  t.strictSame([length.statusCode, length.json().detail], [400, 'wrong length'])
  t.equal(Number(length.headers['content-length']), Buffer.byteLength(length.body), 'a Content-Length the handler set is the problem\'s')
})

t.test('a HEAD answers the headers of the problem, with no body', async t => {
  const app = await build(t)
  const get = await app.inject({ url: '/own/409' })
  const head = await app.inject({ method: 'HEAD', url: '/own/409' })
  t.equal(head.statusCode, 409)
  t.match(head.headers['content-type'], PROBLEM)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], get.headers['content-length'])
})

t.test('a body typed as a problem, a thrown problem and an answer below 400 go out as they are', async t => {
  const app = await build(t)
  app.get('/thrown', async () => { throw problems.conflict('thrown') })
  app.get('/fine', async (_request, reply) => await reply.code(202).send({ message: 'accepted' }))
  await app.ready()
  const own = await app.inject({ url: '/own/409?as=problem' })
  t.strictSame([own.statusCode, own.json()], [409, { title: 'Mine', status: 409 }])
  const thrown = await app.inject({ url: '/thrown' })
  t.strictSame([thrown.statusCode, thrown.json().detail], [409, 'thrown'])
  const fine = await app.inject({ url: '/fine' })
  t.strictSame([fine.statusCode, fine.json()], [202, { message: 'accepted' }])
})

t.test('an OPTIONS answered with a body of its own is a problem that is not cached', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'OPTIONS', url: '/own/400' })
  t.strictSame([res.statusCode, res.headers['cache-control']], [400, 'no-store'])
  t.match(res.headers['content-type'], PROBLEM)
})

t.test('a stream answered with an error status is closed, not sent', async t => {
  const app = await build(t)
  let destroyed = false
  app.get('/stream', async (_request, reply) => {
    const stream = new Readable({ read () { this.push('{"message":"streamed"}'); this.push(null) } })
    stream.on('close', () => { destroyed = true })
    return await reply.code(404).type('application/json').send(stream)
  })
  app.get('/web-stream', async (_request, reply) => {
    return await reply.code(404).type('application/json').send(new ReadableStream({ pull (c) { c.enqueue(new TextEncoder().encode('{}')); c.close() } }))
  })
  app.get('/response', async (_request, reply) => await reply.code(404).send(new Response('{"message":"a Response"}', { headers: { 'content-type': 'application/json' } })))
  const res = await app.inject({ url: '/stream' })
  t.strictSame([res.statusCode, res.json().detail], [404, 'The request cannot be processed as sent; check it against the API description.'])
  t.ok(destroyed, 'the stream was destroyed')
  const response = await app.inject({ url: '/response' })
  t.strictSame([response.statusCode, response.json().status], [404, 404], 'a Response given with an error status')
  t.match(response.headers['content-type'], PROBLEM)
  const web = await app.inject({ url: '/web-stream' })
  t.strictSame([web.statusCode, web.json().status], [404, 404])
  t.match(web.headers['content-type'], PROBLEM)
})

t.test('each route and status is logged once, as a warning that names it', async t => {
  const logs: string[] = []
  const app = await build(t, {}, logs)
  for (let i = 0; i < 3; i++) await app.inject({ url: '/own/409' })
  await app.inject({ url: '/own/404' })
  await app.inject({ method: 'POST', url: '/own/409' })
  const warned = logs.map(line => JSON.parse(line)).filter(l => l.level === 40).map(l => l.route)
  t.strictSame(warned, ['GET /own/:status 409', 'GET /own/:status 404', 'POST /own/:status 409'])
})

t.test('replaceErrorBodies: false sends them as they are; anything else is refused at boot', async t => {
  const app = await build(t, { replaceErrorBodies: false })
  const res = await app.inject({ url: '/own/409' })
  t.strictSame([res.statusCode, res.json().message], [409, 'Name taken'])
  t.match(res.headers['content-type'], /^application\/json/)
  for (const bad of ['yes', 1, {}]) {
    const other = Fastify()
    t.teardown(() => other.close())
    await t.rejects(async () => { await other.register(problem, { replaceErrorBodies: bad as never }) }, { message: /^problem plugin: replaceErrorBodies must be a boolean, got / })
  }
})

t.test('messageOf: a JSON object\'s detail or message, or a text\'s first line; nothing from other bodies', async t => {
  const cases: Array<[unknown, unknown, string | undefined]> = [
    ['application/json; charset=utf-8', '{"message":"m"}', 'm'],
    ['application/problem+json', '{"detail":"d"}', 'd'],
    ['Application/JSON', '{"message":" padded \\n next"}', 'padded'],
    ['text/plain; charset=utf-8', 'line one\r\nline two', 'line one'],
    ['text/plain', Buffer.from('from bytes'), 'from bytes'],
    ['text/html', 'text', undefined],
    ['application/json', '"a string"', undefined],
    ['application/json', 'null', undefined],
    ['application/json', '{"message":1}', undefined],
    [undefined, '{"message":"m"}', undefined],
    ['application/json', { message: 'an object' }, undefined],
    ['text/plain', '', undefined]
  ]
  for (const [type, payload, expected] of cases) t.equal(messageOf(type, payload), expected, `${String(type)} ${String(payload)}`)
})

t.test('property: whatever a handler answers with an error status, the client gets a problem of that status', async t => {
  const app = await build(t)
  app.post('/any/:status', async (request, reply) => await reply.code(Number((request.params as { status: string }).status)).send(request.body))
  await app.ready()
  // Keys the JSON parser refuses (a 400 before the handler runs) are left out.
  const value = fc.jsonValue().filter(v => !/"(__proto__|constructor)"/.test(JSON.stringify(v)))
  await fc.assert(fc.asyncProperty(fc.integer({ min: 400, max: 599 }), value, async (status, value) => {
    const res = await app.inject({ method: 'POST', url: `/any/${status}`, payload: JSON.stringify({ value }), headers: { 'content-type': 'application/json' } })
    if (res.statusCode !== status || !PROBLEM.test(String(res.headers['content-type']))) return false
    const body = res.json()
    return body.status === status && typeof body.title === 'string' && typeof body.detail === 'string' && typeof body.requestId === 'string' &&
      Object.keys(body).every(k => ['title', 'status', 'detail', 'requestId'].includes(k))
  }), { numRuns: 200 })
  t.pass('200 answers of any status and body')
})
