import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fc from 'fast-check'
import { Readable, Writable } from 'node:stream'
import { createReadStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import problem, { problems } from '../../plugins/problem/index.js'
import { clientLine, messageOf } from '../../plugins/problem/error-bodies.js'

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
  app.get('/missing-file', async (_request, reply) => await reply.code(404).type('text/html').send(createReadStream(join(tmpdir(), `no-such-file-${process.pid}.html`))))
  const res = await app.inject({ url: '/stream' })
  t.strictSame([res.statusCode, res.json().detail], [404, 'The request cannot be processed as sent; check it against the API description.'])
  t.ok(destroyed, 'the stream was destroyed')
  // The file's stream fails after it is dropped: its error is not the process's (an uncaught one would end this test's process).
  const missing = await app.inject({ url: '/missing-file' })
  t.strictSame([missing.statusCode, missing.json().status], [404, 404], 'a stream that fails once dropped')
  await new Promise(resolve => setTimeout(resolve, 50))
  const web = await app.inject({ url: '/web-stream' })
  t.strictSame([web.statusCode, web.json().status], [404, 404])
  t.match(web.headers['content-type'], PROBLEM)
})

t.test('a Response with an error status of its own: the problem of that status, its other headers kept, nothing of its body', async t => {
  const app = await build(t)
  app.get('/response/:status', async (request) => {
    const status = Number((request.params as { status: string }).status)
    return new Response(JSON.stringify({ message: 'from a Response', stack: 'TypeError: x\n    at /srv/app/routes/orders.js:42:7' }), { status, headers: { 'content-type': 'application/json', 'retry-after': '3', etag: '"body"' } })
  })
  app.get('/response-text', async () => new Response('duplicate key value violates unique constraint "orders_pkey"\nDETAIL: x', { status: 409 }))
  app.get('/response-fine', async () => new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } }))
  const cases: Array<[string, number, string]> = [
    // A Response's body is not read (it may be a stream of any length): a generic detail.
    ['/response/404', 404, 'The request cannot be processed as sent; check it against the API description.'],
    ['/response/500', 500, 'An unexpected error occurred; retry later, and quote the requestId if it persists.'],
    ['/response/503', 503, 'The service cannot answer now; retry later, and quote the requestId if it persists.'],
    ['/response-text', 409, 'The request cannot be processed as sent; check it against the API description.']
  ]
  for (const [url, status, detail] of cases) {
    const res = await app.inject({ url })
    t.strictSame([res.statusCode, res.json().status, res.json().detail], [status, status, detail], url)
    t.match(res.headers['content-type'], PROBLEM, url)
    t.notMatch(res.body, /stack|orders|DETAIL|from a Response/, `${url}: nothing of the body`)
    if (url.startsWith('/response/')) t.strictSame([res.headers['retry-after'], res.headers.etag], ['3', undefined], `${url}: its headers but the body's`)
  }
  const fine = await app.inject({ url: '/response-fine' })
  t.strictSame([fine.statusCode, fine.json()], [200, { ok: true }], 'a Response below 400 as it is')
})

t.test('what a body\'s headers say of it goes with it; a 416 keeps its Content-Range', async t => {
  const app = await build(t)
  app.get('/described/:status', async (request, reply) => {
    return await reply.code(Number((request.params as { status: string }).status)).type('application/pdf')
      .headers({ 'content-disposition': 'attachment; filename="report.pdf"', 'content-digest': 'sha-256=:x:', etag: '"1"', 'last-modified': 'Sun, 06 Nov 1994 08:49:37 GMT', 'content-range': 'bytes */99', 'content-location': '/x' })
      .send(Buffer.from('%PDF'))
  })
  for (const status of [404, 416]) {
    const res = await app.inject({ url: `/described/${status}` })
    t.equal(res.statusCode, status)
    t.strictSame(['content-disposition', 'content-digest', 'etag', 'last-modified', 'content-location'].map(h => res.headers[h]), [undefined, undefined, undefined, undefined, undefined], `${status}: nothing of the body`)
    t.equal(res.headers['content-range'], status === 416 ? 'bytes */99' : undefined, `${status}: Content-Range`)
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
  }
})

t.test('a problem type is read as media types are, case-insensitively; an empty one is no problem', async t => {
  const app = await build(t)
  app.get('/typed/:how', async (request, reply) => {
    const how = (request.params as { how: string }).how
    reply.code(409)
    if (how === 'mixed') return await reply.header('content-type', 'Application/Problem+JSON; charset=utf-8').send(JSON.stringify({ title: 'Mine', status: 409, instance: '/x' }))
    if (how === 'empty') return await reply.type('application/problem+json').send()
    return await reply.type('application/problem+json').send(Buffer.alloc(0))
  })
  const mixed = await app.inject({ url: '/typed/mixed' })
  t.strictSame(mixed.json(), { title: 'Mine', status: 409, instance: '/x' }, 'kept as it is')
  for (const how of ['empty', 'empty-buffer']) {
    const res = await app.inject({ url: `/typed/${how}` })
    t.strictSame([res.statusCode, res.json().title], [409, 'Conflict'], `${how}: a problem of its status`)
  }
})

t.test('a child context may keep its own error bodies, or replace them where its parent does not', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  const own = async (_request: unknown, reply: { code: (n: number) => { send: (b: unknown) => unknown } }): Promise<unknown> => await reply.code(409).send({ message: 'as it was' })
  app.get('/replaced', own as never)
  await app.register(async (child) => {
    await child.register(problem, { replaceErrorBodies: false })
    child.get('/kept', own as never)
    await child.register(async (grandchild) => {
      await grandchild.register(problem, { replaceErrorBodies: true })
      grandchild.get('/replaced', own as never)
    }, { prefix: '/again' })
  }, { prefix: '/legacy' })
  const other = Fastify()
  t.teardown(() => other.close())
  await other.register(problem, { replaceErrorBodies: false })
  await other.register(async (child) => {
    await child.register(problem)
    child.get('/replaced', own as never)
  }, { prefix: '/new' })
  other.get('/kept', own as never)
  const answers = async (server: typeof app, url: string): Promise<[string, unknown]> => {
    const res = await server.inject({ url })
    return [String(res.headers['content-type']).split(';')[0] as string, res.json().detail ?? res.json().message]
  }
  t.strictSame(await answers(app, '/replaced'), ['application/problem+json', 'as it was'])
  t.strictSame(await answers(app, '/legacy/kept'), ['application/json', 'as it was'])
  t.strictSame(await answers(app, '/legacy/again/replaced'), ['application/problem+json', 'as it was'])
  t.strictSame(await answers(other, '/kept'), ['application/json', 'as it was'])
  t.strictSame(await answers(other, '/new/replaced'), ['application/problem+json', 'as it was'])
})

t.test('each 4xx route and status is logged once, as a warning that names it; each 5xx with its requestId', async t => {
  const logs: string[] = []
  const app = await build(t, {}, logs)
  for (let i = 0; i < 2; i++) await app.inject({ url: '/own/500', headers: { 'x-request-id': `five-${i}` } })
  await app.inject({ url: '/own/503', headers: { 'x-request-id': 'busy' } })
  const lines = logs.map(line => JSON.parse(line)).map(l => [l.level, l.requestId, l.route])
  t.strictSame(lines, [[50, 'five-0', 'GET /own/:status 500'], [50, 'five-1', 'GET /own/:status 500'], [40, 'busy', 'GET /own/:status 503']])
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
    ['text/plain', '', undefined],
    ['text/plain; charset=latin1', Buffer.from('Nom déjà pris', 'latin1'), 'Nom déjà pris'],
    ['text/plain; charset="UTF-8"', Buffer.from('déjà'), 'déjà'],
    ['text/plain; charset=shift_jis', Buffer.from('x'), undefined],
    ['application/json', Buffer.alloc(20_000, 32), undefined],
    ['application/json', '{"message":"Cannot read x\\r    at handler (/srv/app.js:1:1)"}', 'Cannot read x'],
    ['text/plain', 'first\u2028second', 'first']
  ]
  for (const [i, [type, payload, expected]] of cases.entries()) t.equal(messageOf(type, payload), expected, `case ${i}: ${String(type)}`)
})

t.test('clientLine: one line, at most 300 characters, never half of one', async t => {
  t.equal(clientLine(`${'x'.repeat(299)}😀 tail`), `${'x'.repeat(299)}😀`)
  t.equal(clientLine('y'.repeat(400)), 'y'.repeat(300))
  t.equal(clientLine(' a \r\n b'), 'a')
  t.equal(clientLine('\nb'), undefined)
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
