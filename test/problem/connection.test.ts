import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { lingerOnClose } from '../../plugins/problem/connection.js'
import problem, { problemServerOptions } from '../../plugins/problem/index.js'
import methods from '../../plugins/methods/index.js'

// Answers Node's HTTP server would cut short: CONNECT, which it drops without a word when
// nobody listens for it, and a refusal sent while the client is still sending its body.

async function build (t: Test, bodyLimit = 1024 * 1024): Promise<{ app: FastifyInstance, port: number }> {
  const app = Fastify({ ...problemServerOptions, logger: false, bodyLimit })
  await app.register(problem)
  await app.register(methods)
  app.get('/items', async () => ({ results: [] }))
  app.post('/items', async (request) => ({ size: JSON.stringify(request.body).length }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port }
}

interface Answer { text: string, error: string | null }

/**
 * Writes `bytes` at once and, as many clients do, reads the answer only once all is written;
 * then reads until the server closes (or `timeoutMs`).
 */
async function exchange (port: number, bytes: Buffer | string, timeoutMs = 10_000): Promise<Answer> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let error: string | null = null
    const timer = setTimeout(() => { error = 'timed out'; socket.destroy() }, timeoutMs)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ text: Buffer.concat(chunks).toString('latin1'), error })
    })
    socket.pause()
    socket.write(bytes, () => { socket.resume() })
  })
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])
const bodyOf = (text: string): Record<string, unknown> => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))

t.test('CONNECT gets an answer of the convention, then the connection closes', async (t) => {
  const { port } = await build(t)
  const cases: Array<[string, number, RegExp]> = [
    ['/items', 405, /The method CONNECT is not supported at \/items; use one of GET, HEAD, POST, OPTIONS\./],
    ['/nowhere', 404, /No resource exists at \/nowhere/],
    ['example.com:443', 400, /The request target is not a path/]
  ]
  for (const [target, status, detail] of cases) {
    const answer = await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: example.com\r\nX-Request-ID: tunnel-1\r\n\r\n`)
    t.equal(statusOf(answer.text), status, target)
    t.match(answer.text, /\r\ncontent-type: application\/problem\+json/i, `${target}: a problem`)
    t.match(answer.text, /\r\nconnection: close\r\n/i, `${target}: the connection closes`)
    t.match(bodyOf(answer.text), { status, detail, requestId: 'tunnel-1' }, target)
    if (status === 405) t.match(answer.text, /\r\nallow: GET, HEAD, POST, OPTIONS\r\n/i, 'with Allow')
    t.equal(answer.error, null, `${target}: closed cleanly`)
  }
  const after = await exchange(port, 'GET /items HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(statusOf(after.text), 200, 'the server serves on')
})

t.test('a CONNECT listener of the application\'s own is left alone', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.server.on('connect', (_req, socket) => { socket.end('HTTP/1.1 200 Connection Established\r\n\r\n') })
  await app.register(problem)
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal(app.server.listenerCount('connect'), 1)
  const answer = await exchange((app.server.address() as { port: number }).port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n')
  t.equal(statusOf(answer.text), 200)
})

t.test('a body far over the limit, written at once: the client reads the 413 (a lingering close)', async (t) => {
  const { port } = await build(t, 1024)
  // Many MiB in one write: the server refuses after the first KiB, while most is still on its way.
  const piece = Buffer.alloc(64 * 1024, 'a')
  const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
  const chunked = Buffer.concat([Buffer.from('POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'), ...Array<Buffer>(128).fill(chunk), Buffer.from('0\r\n\r\n')])
  const declared = Buffer.concat([Buffer.from(`POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${128 * piece.length}\r\n\r\n`), ...Array<Buffer>(128).fill(piece)])
  for (const [framing, bytes] of [['chunked', chunked], ['Content-Length', declared]] as const) {
    const statuses: number[] = []
    const errors: Array<string | null> = []
    for (let i = 0; i < 10; i++) {
      const answer = await exchange(port, bytes)
      statuses.push(statusOf(answer.text))
      errors.push(answer.error)
      if (i === 0) {
        t.match(answer.text, /\r\nconnection: close\r\n/i, `${framing}: the connection closes after the 413`)
        t.match(bodyOf(answer.text), { status: 413, title: 'Content Too Large' }, `${framing}: a problem`)
      }
    }
    t.strictSame(statuses, Array(10).fill(413), `${framing}: every attempt read its 413`)
    // Without a lingering close the server shuts the socket while the body is still coming:
    // the client's write fails (a reset, or EPIPE), and a client that reads only after
    // writing may never see the answer.
    t.strictSame(errors, Array(10).fill(null), `${framing}: the client wrote its whole request without a reset`)
  }
  const after = await exchange(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}')
  t.equal(statusOf(after.text), 200, 'a body within the limit is served')
})

t.test('a lingering close ends when the client closes its side, or after a short while', async (t) => {
  const { app, port } = await build(t, 16)
  // Part of a declared body, then nothing: the server answers 413 at once; the client's FIN ends it.
  const answer = await exchange(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":', 20_000)
  t.equal(statusOf(answer.text), 413)
  t.equal(answer.error, null, 'closed by the server, not timed out')
  // A client that keeps its side open and sends nothing more: the server gives up on it.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  t.teardown(() => { socket.destroy() })
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  socket.on('error', () => {})
  socket.write('POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":')
  await new Promise((resolve) => socket.once('end', resolve))
  t.equal(statusOf(text), 413, 'answered, then the server ended its side')
  const connections = async (): Promise<number> => await new Promise((resolve, reject) => { app.server.getConnections((err, n) => { if (err !== null) reject(err); else resolve(n) }) })
  for (let i = 0; i < 300 && await connections() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(await connections(), 0, 'and closed the socket although the client never closed its own')
})

t.test('a lingering close of a socket already destroyed does nothing more', async t => {
  const socket = new PassThrough()
  lingerOnClose(socket)
  socket.destroy()
  ;(socket as PassThrough & { destroySoon: () => void }).destroySoon()
  t.ok(socket.destroyed)
  t.equal(socket.listenerCount('data'), 0, 'nothing more is read from it')
})
