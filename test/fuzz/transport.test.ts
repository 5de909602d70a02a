import t from 'tap'
import fc from 'fast-check'
import { token } from '../resource/helper.js'
import { Tally, afterwards, good, judge, raw, send, startFuzzService, type RawReply, report } from './support.js'

/*
 * Bad input, transport (issue 7): bodies over the 1 MiB bodyLimit, framed by Content-Length
 * or chunked, give a 413 problem; requests cut in arbitrary pieces give the answer the whole
 * request gives; slow and stalled clients get an answer or a closed connection, never a 5xx,
 * while other clients are served as usual. Raw sockets throughout: the framing is the point.
 */

const MIB = 1024 * 1024
// Short server timeouts so stalled clients are dropped within the test's time (app.ts AppOptions.fastify),
// yet longer than a loaded machine's pause of this process (server and clients alike), which a
// slow client that keeps sending must outlast.
const CONNECTION_TIMEOUT = 3000
const REQUEST_TIMEOUT = 6000
/** How long a raw client waits for the server's answer or close: well past REQUEST_TIMEOUT. */
const CLIENT_WAIT = 15_000

const HEAD = (method: string, path: string, extra: string[] = []): string => [
  `${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', `authorization: Bearer ${token()}`, 'user-agent: transport-fuzz/1 (tap)', 'accept: application/json', ...extra
].join('\r\n') + '\r\n\r\n'

/** A chunked encoding of `body` in pieces of `size` bytes (RFC 9112 §7.1). */
function chunked (body: Buffer, size: number): Buffer {
  const parts: Buffer[] = []
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size)
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

/** `text` in about `n` pieces of equal length: a slow client that keeps making progress. */
function pieces (text: string, n: number): string[] {
  const size = Math.ceil(text.length / n)
  return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))
}

/** Valid JSON of exactly `size` bytes: an author whose name is far too long. */
const jsonOf = (size: number): Buffer => Buffer.from(`{"email":"big@example.com","name":"${'a'.repeat(size - '{"email":"big@example.com","name":""}'.length)}"}`)

t.test('transport: oversized bodies, fragmented and slow clients', async (t) => {
  const { base, port, errors } = await startFuzzService(t, {
    env: { TRUST_PROXY: '127.0.0.1' },
    fastify: { connectionTimeout: CONNECTION_TIMEOUT, requestTimeout: REQUEST_TIMEOUT, http: { connectionsCheckingInterval: 100 } }
  })
  const author = JSON.parse((await send(base, 'POST', '/v1/authors', good({ 'content-type': 'application/json' }), JSON.stringify({ name: 'Wire', email: 'wire@example.com' }))).text)
  t.equal(jsonOf(1000).length, 1000, 'the body builder makes exact sizes')

  t.test('bodies over 1 MiB: 413 problem, by Content-Length or chunked', async (t) => {
    const tally = new Tally()
    const routes = [
      ['POST', '/v1/authors', 'application/json'],
      ['POST', `/v1/authors/${author.id as string}/documents`, 'application/json'],
      ['PATCH', `/v1/authors/${author.id as string}`, 'application/merge-patch+json'],
      ['POST', '/v1/documents/search', 'application/json'],
      ['POST', '/_webhooks/scanner/document-scanned', 'application/json']
    ] as const
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...routes), fc.integer({ min: MIB + 1, max: 3 * MIB }), fc.constantFrom('length', 'chunked'), fc.integer({ min: 1000, max: 256 * 1024 }),
      async ([method, path, type], size, framing, piece) => {
        const body = jsonOf(size)
        const framed = framing === 'length' ? [`content-length: ${size}`] : ['transfer-encoding: chunked']
        const head = HEAD(method, path, [`content-type: ${type}`, 'x-forwarded-proto: https', ...framed, 'connection: close'])
        const answer = await raw(port, [Buffer.concat([Buffer.from(head), framing === 'length' ? body : chunked(body, piece)])])
        if (answer.reply === undefined) throw new Error(`no answer to ${size} bytes (${framing}) on ${method} ${path}: ${JSON.stringify(answer)}`)
        judge({ method }, answer.reply, tally)
        if (answer.reply.status !== 413) throw new Error(`expected 413, got ${answer.reply.status} ${answer.reply.text.slice(0, 200)}`)
      }), { numRuns: 40 })
    report(t, 'oversized bodies', tally)
    const atLimit = await raw(port, [HEAD('POST', '/v1/authors', ['content-type: application/json', `content-length: ${MIB}`, 'connection: close']), jsonOf(MIB)])
    t.equal(atLimit.reply?.status, 400, 'exactly 1 MiB is read and validated (a name too long), not refused as too large')
    // Bulk endpoints take up to 10,000 operations as a job: their limit is 32 MiB.
    const bulk = await raw(port, [HEAD('PATCH', '/v1/documents', ['content-type: application/json', `content-length: ${32 * MIB + 1}`, 'x-forwarded-proto: https', 'connection: close'])])
    t.equal(bulk.reply?.status, 413, 'a bulk body over 32 MiB, by its Content-Length')
  })

  t.test('a request cut in arbitrary pieces gets the answer of the whole', async (t) => {
    const tally = new Tally()
    const requests = [
      [HEAD('GET', '/v1/authors?limit=1', ['connection: close']), 200],
      [HEAD('POST', '/v1/authors', ['content-type: application/json', 'content-length: 40', 'connection: close']) + '{"name":"Cut","email":"cut@example.com"}', 201],
      [HEAD('POST', '/v1/authors', ['content-type: application/json', 'transfer-encoding: chunked', 'connection: close']) + chunked(Buffer.from('{"name":"Chunk","email":"chunk@example.com"}'), 7).toString(), 201],
      [HEAD('GET', '/v1/nowhere', ['connection: close']), 404]
    ] as const
    await fc.assert(fc.asyncProperty(fc.constantFrom(...requests), fc.uniqueArray(fc.nat(), { maxLength: 12 }), fc.integer({ min: 0, max: 3 }), async ([text, status], cuts, delay) => {
      const points = [...new Set(cuts.map((c) => c % text.length))].sort((a, b) => a - b)
      const pieces = [0, ...points].map((from, i) => text.slice(from, points[i] ?? text.length)).filter((p) => p !== '')
      const answer = await raw(port, pieces, { delayMs: delay })
      if (answer.reply === undefined) throw new Error(`no answer: ${JSON.stringify(pieces)}`)
      judge({ method: text.split(' ')[0] as string }, answer.reply, tally)
      if (answer.reply.status !== status) throw new Error(`expected ${status}, got ${answer.reply.status}`)
    }), { numRuns: 120 })
    report(t, 'fragmented requests', tally)
  })

  t.test('slow and stalled clients: an answer or a closed connection, and the others are served', async (t) => {
    const tally = new Tally()
    const body = '{"name":"Slow","email":"slow@example.com"}'
    const bodyHead = HEAD('POST', '/v1/authors', ['content-type: application/json', `content-length: ${body.length}`, 'connection: close'])
    const endless = HEAD('POST', '/v1/authors', ['content-type: application/json', 'content-length: 100000', 'connection: close'])
    const bytes = (text: string): string[] => [...text]
    const scenarios: Array<{ name: string, run: () => Promise<RawReply>, expect: 'answer' | 'cut' }> = [
      // In a few pieces, not byte by byte: the whole must arrive well within REQUEST_TIMEOUT however slow the timers.
      { name: 'headers trickled in pieces', expect: 'answer', run: async () => await raw(port, pieces(HEAD('GET', '/v1/authors?limit=1', ['connection: close']), 20), { delayMs: 10, timeoutMs: CLIENT_WAIT }) },
      { name: 'body trickled in pieces', expect: 'answer', run: async () => await raw(port, [bodyHead, ...pieces(body, 20)], { delayMs: 10, timeoutMs: CLIENT_WAIT }) },
      { name: 'stops in the middle of the headers', expect: 'cut', run: async () => await raw(port, [bodyHead.slice(0, 60)], { timeoutMs: CLIENT_WAIT }) },
      { name: 'stops in the middle of the body', expect: 'cut', run: async () => await raw(port, [bodyHead, body.slice(0, 10)], { timeoutMs: CLIENT_WAIT }) },
      // Never idle for connectionTimeout: only requestTimeout can end these.
      { name: 'headers that never end (slowloris)', expect: 'cut', run: async () => await raw(port, bytes(endless.slice(0, 100)), { delayMs: 300, timeoutMs: CLIENT_WAIT }) },
      {
        name: 'a body that never ends',
        expect: 'cut',
        run: async () => await raw(port, [endless, ...bytes(body.repeat(3))], { delayMs: 300, timeoutMs: CLIENT_WAIT })
      }
    ]
    let served = 0
    // Answers to the others that came while a stalled connection was still open: had the stalled
    // ones held the server, none would come before they were dropped. Counted, not timed, so a
    // pause of the whole process cannot fail it.
    let servedWhileStalled = 0
    let stalled = scenarios.filter((s) => s.expect === 'cut').length
    const lingering = { running: true }
    // The slow clients connect first, then the others begin.
    const running = Promise.all(scenarios.map(async (s) => {
      const started = Date.now()
      const answer = await s.run()
      if (s.expect === 'cut') stalled--
      return { ...s, answer, took: Date.now() - started }
    }))
    const others = (async () => {
      while (lingering.running) {
        const reply = await send(base, 'GET', '/v1/authors?limit=1', good())
        if (reply.status !== 200) throw new Error(`another client got ${reply.status}`)
        served++
        if (stalled > 0) servedWhileStalled++
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const results = await running
    lingering.running = false
    await others
    for (const { name, answer, expect, took } of results) {
      t.notOk(answer.timedOut, `${name}: the server did not leave the connection hanging (${took} ms)`)
      if (answer.reply !== undefined) judge({ method: 'POST' }, answer.reply, tally)
      if (expect === 'answer') t.ok(answer.reply !== undefined && answer.reply.status < 300, `${name}: answered ${String(answer.reply?.status)}`)
      else t.ok((answer.closed && answer.reply === undefined) || answer.reply?.status === 408, `${name}: closed${answer.reply === undefined ? '' : ' after a 408'}`)
    }
    report(t, 'slow clients', tally)
    t.comment(`meanwhile ${served} other requests, ${servedWhileStalled} of them while stalled connections were open`)
    t.ok(served >= 10, 'other clients were served while the slow ones lingered')
    t.ok(servedWhileStalled >= 10, 'and not held up by them: answered while the stalled connections were still open')
  })

  afterwards(t, base, errors)
})
