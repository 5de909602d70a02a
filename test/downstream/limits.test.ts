import t from 'tap'
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { DownstreamTimeoutError, DownstreamTooLargeError } from '../../plugins/downstream/index.js'
import { client, downstreamServer, json } from './helper.js'

t.test('the answer\'s body is read up to the cap; past it, an error naming the cap and the connection closed', async t => {
  const closed: Array<Promise<unknown>> = []
  const server = await downstreamServer(t, (_req, res, n) => {
    closed.push(once(res, 'close'))
    // Declared: refused before a byte of the body is read.
    if (n === 1) return json(res, 200, { text: 'x'.repeat(2000) }, { 'content-length': '2013' })
    if (n === 2) {
      // Chunked, and never ended: only the client closing the connection ends it.
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('x'.repeat(600))
      res.write('x'.repeat(600))
      return
    }
    json(res, 200, { small: true })
  })
  const { client: c } = client(t, { maxResponseBytes: 1000 })
  const declared = await c.get(`${server.url}/declared`).catch((e: unknown) => e)
  t.ok(declared instanceof DownstreamTooLargeError)
  t.match(declared, { code: 'SVC_ERR_DOWNSTREAM_TOO_LARGE', limit: 1000, status: 200, message: /body \(status 200\) is larger than maxResponseBytes \(1000 bytes\)/ })
  await t.rejects(c.get(`${server.url}/streamed`), { name: 'DownstreamTooLargeError', limit: 1000, status: 200 })
  await Promise.all(closed)
  t.pass('both answers were cut off: the server saw their connections close')
  t.strictSame((await c.get(`${server.url}/small`)).body, { small: true }, 'the client goes on')
  t.equal((await c.get(`${server.url}/big`, { maxResponseBytes: 5000 })).status, 200, 'a call sets its own cap')
})

t.test('an answer over the cap that has wholly arrived is refused without an unheard error; a HEAD reads no body', async t => {
  const server = await downstreamServer(t, (req, res) => {
    // The GET's length, declared on a HEAD too (RFC 9110, 9.3.2), with no body after it.
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(5 * 1024 * 1024) })
    if (req.method === 'HEAD') return res.end()
    res.end(Buffer.alloc(100))
  })
  const { client: c } = client(t, { maxResponseBytes: 1024 * 1024 })
  const head = await c.request({ method: 'HEAD', url: `${server.url}/file` })
  t.equal(head.status, 200)
  t.equal(head.headers['content-length'], String(5 * 1024 * 1024), 'the length the GET would have')
  t.equal(head.bytes.length, 0)

  const small = await downstreamServer(t, (_req, res) => { res.writeHead(200, { 'content-length': '100' }); res.end(Buffer.alloc(100)) })
  const uncaught: unknown[] = []
  const listener = (err: unknown): void => { uncaught.push(err) }
  process.on('uncaughtException', listener)
  t.teardown(() => { process.off('uncaughtException', listener) })
  for (let i = 0; i < 5; i++) {
    await t.rejects(c.get(`${small.url}/small`, { maxResponseBytes: 10 }), { name: 'DownstreamTooLargeError', limit: 10 })
  }
  // undici emits its abort error on a destroyed body a turn later.
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.strictSame(uncaught, [], 'no error left for the process')
})

t.test('timeouts: the headers, and a pause inside the body', async t => {
  const stalled: ServerResponse[] = []
  const server = await downstreamServer(t, (_req, res, n) => {
    stalled.push(res)
    if (n === 1) return
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"a":')
  })
  const { client: c } = client(t, { timeouts: { headers: 5000, body: 5000 }, retry: false })
  const headers = await c.get(`${server.url}/x`, { timeouts: { headers: 50 } }).catch((e: unknown) => e)
  t.ok(headers instanceof DownstreamTimeoutError)
  t.match(headers, { phase: 'headers', timeout: 50, code: 'SVC_ERR_DOWNSTREAM_TIMEOUT', message: /no answer within 50 ms \(timeouts\.headers\)/ })
  const body = await c.get(`${server.url}/x`, { timeouts: { body: 50 } }).catch((e: unknown) => e)
  t.match(body, { name: 'DownstreamTimeoutError', phase: 'body', timeout: 50, message: /no further part of the body within 50 ms \(timeouts\.body\)/ })
  // A call's own timeouts are checked as the client's: one past a timer's longest would fire at once.
  const before = stalled.length
  for (const [timeouts, shown] of [[{ total: 2 ** 31 }, 'timeouts.total must be .* got 2147483648'], [{ headers: 0 }, 'timeouts.headers must be .* got 0'], [{ body: 1.5 }, 'timeouts.body must be .* got 1.5']] as const) {
    await t.rejects(c.get(`${server.url}/x`, { timeouts }), { name: 'TypeError', message: new RegExp(`^downstream call: ${shown}$`) }, JSON.stringify(timeouts))
  }
  t.equal(stalled.length, before, 'nothing sent')
})
