import t from 'tap'
import fc from 'fast-check'
import { token } from '../resource/helper.js'
import { Tally, afterwards, good, judge, raw, send, startFuzzService, report } from './support.js'

/*
 * Bad input, headers (issue 7): arbitrary request headers over real sockets on GET, POST and
 * PATCH routes. Every answer is below 500 and every 4xx a problem body (conventions.md, Errors).
 * node:http sends what a client library would; raw sockets send the bytes it refuses.
 */

const ASCII = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 })
const LATIN1 = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 20 })

/** Values that look right, nearly right, or are the classic traps of each header. */
const POOLS: Record<string, string[]> = {
  accept: ['application/json', '*/*', 'application/*', 'text/html', 'application/xml', 'application/json;q=0', 'application/json;q=abc',
    'text/plain, application/json;q=0.1', 'application/problem+json', ',,,', ';;', 'application/json; charset=utf-16', '*/json', 'application/vnd.svc-x.v1+json'],
  'content-type': ['application/json', 'application/merge-patch+json', 'application/json; charset=UTF-8', 'application/json; charset=latin1', 'text/plain',
    'application/xml', 'multipart/form-data; boundary=x', 'application/json;', '/', 'application/', 'application/json; charset=', 'application/x-www-form-urlencoded'],
  'user-agent': ['resource-tests/1 (tap)', 'curl/8.0', 'a/1', 'x', '/1', 'a/', 'a/b c', 'Mozilla/5.0 (X11; Linux x86_64)', 'svc/99999999999999999999 ()', 'é/1 ü'],
  authorization: [`Bearer ${token()}`, 'Bearer', 'Bearer ', 'bearer x', 'Basic dXNlcjpwYXNz', `Bearer ${token()}x`, `Bearer ${token().replace(/\.[^.]*$/, '.')}`,
    'Bearer a.b.c', 'Bearer ...', `Bearer  ${token()}`, `Bearer ${token('user-1', [])}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', token()],
  'svc-execution-context': ['prod', 'preprod', 'PROD', '', 'a'.repeat(101), 'x y', 'dev', '../etc', 'ü'],
  'svc-service': ['id=6f1f6b0e-3c2a-4d8e-9a51-7c1e2f3a4b5c; name=orders', 'id=x', 'name=a', '=', ';;', 'id=6f1f6b0e-3c2a-4d8e-9a51-7c1e2f3a4b5c;id=6f1f6b0e-3c2a-4d8e-9a51-7c1e2f3a4b5c', 'id'],
  'svc-idempotency-key': ['key-2b8c1f6e-0e0b-4f8a-9e3d-4f5a6b7c8d9e', 'short', 'A'.repeat(30), 'a'.repeat(256), '"key-2b8c1f6e-0e0b-4f8a-9e3d"', ''],
  'if-match': ['*', '"x"', 'W/"x"', '"a", "b"', 'x', '"', ',', 'W/', '"' + 'a'.repeat(300) + '"'],
  'if-none-match': ['*', '"x"', 'W/"x"', 'garbage', '"a",,"b"'],
  'x-request-id': ['trace-1', 'a'.repeat(200), 'a'.repeat(201), '😀', 'x\ty', ' ', '{"a":1}'],
  'svc-unknown-header': ['1', ''],
  'x-forwarded-proto': ['https', 'http', 'gopher'],
  'x-forwarded-for': ['1.2.3.4', 'garbage', '::1, 300.1.1.1'],
  'content-language': ['en-US', 'xx', '*'],
  origin: ['https://evil.example', 'null', '']
}
const NAMES = Object.keys(POOLS)

// A client library refuses CR, LF and NUL in a value; latin-1 text above 0x7f goes through (the server trims blanks).
const valueOf = (name: string): fc.Arbitrary<string> => fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...(POOLS[name] as string[])) },
  { weight: 2, arbitrary: ASCII },
  { weight: 1, arbitrary: LATIN1 },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(8000), ' '.repeat(100), '\t') }
)
const header = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES).chain((name) => valueOf(name).map((v) => [name, v] as const)) },
  { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,60}$/), ASCII) }
)

/** Header lines Node's client would never write: folding, bad names, duplicates, oversize. */
const ODD_LINES = [
  ' folded continuation', 'no-colon', ': empty-name', 'Bad Name: 1', 'x-a:\u0000', `authorization: Bearer ${token()}`,
  'authorization: Basic x', 'user-agent: a/1 (b)', 'user-agent: \u0001/1', 'content-length: -1', 'content-length: 1e3',
  'transfer-encoding: gzip', 'host: a', 'host: b', `x-big: ${'a'.repeat(20000)}`, `svc-service: ${'a=b;'.repeat(3000)}`,
  'expect: 100-continue', 'connection: upgrade', 'upgrade: websocket', 'x-request-id: \u00ff\u00fe'
]

t.test('headers: node:http over keep-alive, then raw bytes', async (t) => {
  const { base, port, errors } = await startFuzzService(t)
  const author = JSON.parse((await send(base, 'POST', '/v1/authors', good({ 'content-type': 'application/json' }), JSON.stringify({ name: 'Fuzz', email: 'fuzz@example.com' }))).text)
  const doc = JSON.parse((await send(base, 'POST', '/v1/documents', good({ 'content-type': 'application/json' }), JSON.stringify({ name: 'fuzz-doc', authorId: author.id, kind: 'INVOICE' }))).text)
  t.ok(typeof author.id === 'string' && typeof doc.id === 'string', 'fixtures created')
  let n = 0
  const routes: Array<{ method: string, path: string, body?: () => string }> = [
    { method: 'GET', path: '/v1/authors' },
    { method: 'GET', path: `/v1/documents/${doc.id as string}` },
    { method: 'GET', path: `/v1/authors/${author.id as string}/documents?limit=1` },
    { method: 'HEAD', path: '/v1/documents' },
    { method: 'POST', path: '/v1/authors', body: () => JSON.stringify({ name: 'H', email: 'h@example.com' }) },
    { method: 'POST', path: `/v1/authors/${author.id as string}/documents`, body: () => JSON.stringify({ name: `h-${++n}`, kind: 'CONTRACT' }) },
    { method: 'POST', path: '/v1/documents/search', body: () => JSON.stringify({ status: ['DRAFT'], paging: { limit: 1 } }) },
    { method: 'PATCH', path: `/v1/authors/${author.id as string}`, body: () => JSON.stringify({ active: true }) },
    { method: 'PATCH', path: `/v1/documents/${doc.id as string}`, body: () => JSON.stringify({ pageCount: 1 }) },
    { method: 'PATCH', path: '/v1/authors', body: () => JSON.stringify({ operations: [{ action: 'DELETE', entity: { id: 'nobody' } }] }) },
    { method: 'GET', path: '/v1/nowhere' }
  ]

  t.test('arbitrary header names and values through a client library', async (t) => {
    const tally = new Tally()
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), fc.array(header, { maxLength: 6 }), fc.nat(9).map((n) => n === 0), async (route, extra, dropDefaults) => {
      const h: Record<string, string> = dropDefaults ? {} : good(route.body === undefined ? {} : { 'content-type': route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' })
      // Text beyond latin-1 goes out as its UTF-8 bytes, as a client library would send it.
      for (const [name, value] of extra) h[name.toLowerCase()] = Buffer.from(value, 'utf8').toString('latin1')
      // Echo checked for visible ASCII only: how the server reads other bytes is Node's, not ours.
      const sentId = h['x-request-id']?.replace(/^[ \t]+|[ \t]+$/g, '')
      const echoed = sentId !== undefined && sentId.length <= 200 && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(sentId)
      const reply = await send(base, route.method, route.path, h, route.body?.())
      judge({ method: route.method, requestId: echoed ? sentId : undefined }, reply, tally)
    }), { numRuns: 1500 })
    report(t, 'client-library headers', tally)
    t.ok(tally.statuses.size >= 6, 'the cases reach many different answers')
    t.ok((tally.statuses.get(200) ?? 0) > 50, 'and valid ones still succeed')
  })

  t.test('raw bytes: control characters, repeated and huge headers, bad request lines', async (t) => {
    const tally = new Tally()
    const byte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c))
    const garbage = fc.string({ unit: byte, minLength: 1, maxLength: 30 })
    const line = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...NAMES).chain((k) => fc.oneof({ weight: 1, arbitrary: garbage }, { weight: 3, arbitrary: valueOf(k) }).map((v) => `${k}: ${v}`)) },
      { weight: 1, arbitrary: garbage },
      { weight: 1, arbitrary: fc.constantFrom(...ODD_LINES) }
    )
    const requestLine = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.constantFrom('GET', 'POST', 'PATCH'), fc.constantFrom('/v1/authors', `/v1/documents/${doc.id as string}`, '/v1/documents?limit=1')).map(([m, p]) => `${m} ${p} HTTP/1.1`) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('GET', 'get', 'G\u0000T', 'BREW', 'PATCH'), garbage, fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', '')).map(([m, p, v]) => `${m} /${p} ${v}`) },
      { weight: 1, arbitrary: fc.constantFrom('GET /v1/authors HTTP/1.0', 'GET /v1/%ZZ HTTP/1.1', 'GET //v1//authors HTTP/1.1', 'GET /v1/authors?%00=1 HTTP/1.1', `GET /${'a'.repeat(9000)} HTTP/1.1`, 'GET http://evil/v1/authors HTTP/1.1') }
    )
    await fc.assert(fc.asyncProperty(requestLine, fc.array(line, { maxLength: 5 }), fc.boolean(), async (first, lines, withBody) => {
      const body = withBody ? '{"name":"R","email":"r@example.com"}' : ''
      const head = [first, 'host: 127.0.0.1', `authorization: Bearer ${token()}`, 'user-agent: raw-fuzz/1 (tap)', 'accept: application/json', ...lines]
      if (withBody) head.push('content-type: application/json', `content-length: ${body.length}`)
      head.push('connection: close')
      const answer = await raw(port, [Buffer.from(head.join('\r\n') + '\r\n\r\n' + body, 'latin1')])
      if (answer.reply === undefined) {
        // Node may drop a connection whose bytes it cannot parse at all; nothing else may happen silently.
        if (!answer.closed) throw new Error(`no answer and the socket stayed open: ${JSON.stringify(head)}`)
        tally.cases++
        return
      }
      judge({ method: first.split(' ')[0] as string }, answer.reply, tally)
    }), { numRuns: 800 })
    report(t, 'raw headers', tally)
    t.ok((tally.statuses.get(400) ?? 0) > 0 && (tally.statuses.get(200) ?? 0) > 0, 'both refusals and successes are reached')
  })

  t.test('path identifiers up to the 128 characters of the contract', async (t) => {
    // reference-service.md: ids match ^[A-Za-z0-9._~-]{1,128}$ (Fastify's default maxParamLength is 100).
    const unknown = await send(base, 'GET', `/v1/authors/${'a'.repeat(128)}`, good())
    t.equal(unknown.status, 404, 'an unknown 128-character id is a 404 problem')
    const put = await send(base, 'PUT', `/v1/authors/${'b'.repeat(128)}`, good({ 'content-type': 'application/json' }), JSON.stringify({ name: 'Long', email: 'long@example.com' }))
    t.ok(put.status < 300, 'a PUT creates an author with a 128-character id')
    const longer = await send(base, 'GET', `/v1/authors/${'c'.repeat(129)}`, good())
    t.equal(longer.status, 400, 'a 129-character id is a 400 problem from its schema')
    t.ok(put.status < 500 && unknown.status < 500, 'never a 5xx')
  })

  afterwards(t, base, errors)
})
