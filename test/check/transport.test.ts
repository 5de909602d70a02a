import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rootCertificates } from 'node:tls'
import t from 'tap'
import { check, CheckError } from '../../check/index.js'
import { HttpClient, trustedCas } from '../../check/http.js'

// How the check talks to a service that answers badly or points elsewhere: a body that stalls,
// breaks off or never ends fails the rule that asked for it; the token and the requests stay on
// the base URL's origin (scheme, host and port).

const PAGE = JSON.stringify({ results: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], paging: { limit: 20, next: null, previous: null } })

interface Seen { method: string, url: string, authorization: string | undefined }

/** Listens on 127.0.0.1 and closes, with every connection still open, at the end of the test. */
async function listen (t: { teardown: (fn: () => unknown) => void }, server: Server): Promise<number> {
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise(resolve => { server.close(resolve) })
  })
  return (server.address() as AddressInfo).port
}

/** A node:http service whose `answer` takes each request; what it received is in `seen`. */
async function serve (t: { teardown: (fn: () => unknown) => void }, answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ base: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createHttpServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization })
    answer(req, res)
  })
  return { base: `http://127.0.0.1:${await listen(t, server)}`, seen }
}

const notFound = (res: ServerResponse): void => {
  res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ title: 'Not Found', status: 404, requestId: 'r' }))
}

/** A body that starts, then goes on `how`: stalls, breaks off, trickles for ever, or floods for ever. */
function badBody (res: ServerResponse, how: 'stall' | 'break off' | 'trickle' | 'flood'): void {
  res.writeHead(200, { 'content-type': 'application/json', ...(how === 'break off' ? { 'content-length': '1000' } : {}) })
  res.write('{"results":[],"paging":{"limit":20},"padding":"')
  if (how === 'break off') setTimeout(() => res.socket?.destroy(), 50)
  if (how === 'trickle') {
    const timer = setInterval(() => res.write('a'.repeat(100)), 50)
    res.on('close', () => { clearInterval(timer) })
  }
  if (how === 'flood') {
    const chunk = 'a'.repeat(64 * 1024)
    const more = (): void => { while (!res.destroyed && res.write(chunk)); }
    res.on('drain', more)
    more()
  }
}

t.test('a body that stalls, breaks off or never ends fails the rule that asked for it; the check goes on', { timeout: 30_000 }, async t => {
  const cases: Array<['stall' | 'break off' | 'trickle', string]> = [
    ['stall', 'the answer did not end within 400 ms'],
    ['break off', 'the answer broke off after its headers (other side closed)'],
    ['trickle', 'the answer did not end within 400 ms']
  ]
  for (const [how, reason] of cases) {
    const { base } = await serve(t, (req, res) => {
      if (req.url === '/openapi.json') notFound(res)
      else if (req.url === '/items') res.writeHead(200, { 'content-type': 'application/json' }).end(PAGE)
      else badBody(res, how)
    })
    const started = performance.now()
    const result = await check({ baseUrl: base, collections: ['/items'], timeoutMillis: 400, only: ['methods.not-found', 'collections.envelope'] })
    t.match(result.verdicts, [
      { id: 'methods.not-found', verdict: 'fail', reason: new RegExp(`^GET /svc-conventions-check-svc-check-missing-\\w+: ${reason.replace(/[()]/g, '\\$&')}$`), exchange: { response: { status: 0 } } },
      { id: 'collections.envelope', verdict: 'pass' }
    ], `${how}: the rule that sent it fails, the others go on`)
    t.ok(performance.now() - started < 5000, `${how}: within the time limit`)
    await t.rejects(check({ baseUrl: base, openapi: `${base}/document.json`, timeoutMillis: 400 }), new CheckError('unreachable', `GET ${base}/document.json: ${reason}`), `${how}: a document that does not come whole is exit code 2`)
  }
})

t.test('a first page that stalls or breaks off: collections.envelope fails, the check goes on', { timeout: 30_000 }, async t => {
  for (const how of ['stall', 'break off', 'trickle'] as const) {
    const { base } = await serve(t, (req, res) => { if (req.url === '/openapi.json') notFound(res); else badBody(res, how) })
    const result = await check({ baseUrl: base, collections: ['/items'], timeoutMillis: 400, only: ['collections.envelope'] })
    t.match(result.verdicts, [{ id: 'collections.envelope', verdict: 'fail', reason: 'GET /items: expected 200, got no answer in time' }], how)
  }
})

t.test('a body that never ends is read up to 1 MB, then closed', { timeout: 30_000 }, async t => {
  const { base } = await serve(t, (req, res) => { if (req.url === '/openapi.json') notFound(res); else badBody(res, 'flood') })
  const started = performance.now()
  const result = await check({ baseUrl: base, collections: ['/items'], only: ['collections.envelope'] })
  t.match(result.verdicts, [{ id: 'collections.envelope', verdict: 'fail', reason: 'GET /items: no results array and paging object at the root' }], 'the start of the body is judged: it is cut off, no JSON')
  t.ok(performance.now() - started < 5000, 'long before the time limit (10 s)')
})

function openssl (): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * One port that speaks HTTPS and plain HTTP, as a service behind a proxy may: what comes in the
 * clear is recorded in `clear`. Its certificate is for 127.0.0.1, from a CA of its own (`ca`).
 */
async function bothSchemes (t: Tap.Test, answer: (req: IncomingMessage, res: ServerResponse, port: number) => void): Promise<{ port: number, ca: string, clear: Seen[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-check-tls-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  const ca = readFileSync(join(dir, 'cert.pem'), 'utf8')
  const clear: Seen[] = []
  let port = 0
  const secure = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (req, res) => { answer(req, res, port) })
  const plain = createHttpServer((req, res) => {
    clear.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization })
    answer(req, res, port)
  })
  const securePort = await listen(t, secure)
  const plainPort = await listen(t, plain)
  // A TLS connection starts with a handshake record (0x16); anything else is plain HTTP.
  const sniffer = createNetServer(socket => {
    socket.once('data', first => {
      const upstream = netConnect(first[0] === 0x16 ? securePort : plainPort, '127.0.0.1')
      upstream.write(first)
      socket.pipe(upstream).pipe(socket)
      upstream.on('error', () => { socket.destroy() })
      socket.on('error', () => { upstream.destroy() })
    })
  })
  port = await listen(t, sniffer)
  return { port, ca, clear }
}

t.test('the token stays on the base URL\'s origin: an http link from an https service gets no request', { skip: openssl() ? false : 'openssl is not installed: no certificate for the TLS test' }, async t => {
  const item = { type: 'object', properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } }, required: ['name'] }
  const json = (schema: unknown): unknown => ({ content: { 'application/json': { schema } } })
  const document = {
    openapi: '3.1.0',
    info: { title: 'items', version: '1' },
    paths: {
      '/items': { get: { responses: { 200: json({ type: 'object', properties: { results: { type: 'array', items: item }, paging: { type: 'object' } } }) } }, post: { requestBody: json(item) } },
      '/items/{id}': { get: { responses: { 200: json(item) } }, delete: { responses: { 204: {} } } }
    }
  }
  const { port, ca, clear } = await bothSchemes(t, (req, res, port) => {
    const clearLink = `http://127.0.0.1:${port}`
    if (req.url === '/openapi.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
    else if (req.method === 'POST') res.writeHead(201, { 'content-type': 'application/json', location: `${clearLink}/items/new` }).end('{"id":"new","name":"n"}')
    else if (req.url === '/items?limit=2') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ id: 'a' }, { id: 'b' }], paging: { limit: 2, next: { cursor: 'c', url: `${clearLink}/items?limit=2&cursor=c` }, previous: null } }))
    else if (req.url?.startsWith('/items/') === true) res.writeHead(req.method === 'DELETE' ? 204 : 200, { 'content-type': 'application/json' }).end(req.method === 'DELETE' ? undefined : '{"id":"new","name":"n"}')
    else res.writeHead(200, { 'content-type': 'application/json' }).end(PAGE)
  })
  const base = `https://127.0.0.1:${port}`
  const result = await check({ baseUrl: base, token: 'secret-token', ca, writes: true, only: ['collections.cursor-paging', 'methods.create'] })
  t.match(result.verdicts, [
    { id: 'methods.create', verdict: 'fail', reason: `Location points off the service: http://127.0.0.1:${port}/items/new` },
    { id: 'collections.cursor-paging', verdict: 'fail', reason: `paging.next.url points off the service: http://127.0.0.1:${port}/items?limit=2&cursor=c` }
  ])
  t.strictSame(clear, [], 'nothing was sent in the clear')

  await check({ baseUrl: base, token: 'secret-token', ca, openapi: `http://127.0.0.1:${port}/openapi.json`, only: ['collections.envelope'] })
  t.strictSame(clear, [{ method: 'GET', url: '/openapi.json', authorization: undefined }], '--openapi on another origin is read without the token')
})

t.test('the document\'s redirects are followed on the base URL\'s origin, with the token', async t => {
  const document = JSON.stringify({ openapi: '3.1.0', info: { title: 'moved', version: '1' }, paths: {} })
  for (const status of [302, 303, 307]) {
    const { base, seen } = await serve(t, (req, res) => {
      if (req.url === '/spec') res.writeHead(status, { location: '/spec/v2' }).end()
      else if (req.url === '/spec/v2' && req.method === 'GET') res.writeHead(200, { 'content-type': 'application/json' }).end(document)
      else notFound(res)
    })
    await t.rejects(check({ baseUrl: base, token: 'secret-token', openapi: `${base}/spec` }), new CheckError('no-collection', 'the document names no collection (a GET answering {results, paging}): name them with --collection'), `${status}: the document it leads to is read`)
    t.strictSame(seen.map(s => [s.method, s.url, s.authorization]), [['GET', '/spec', 'Bearer secret-token'], ['GET', '/spec/v2', 'Bearer secret-token']], `${status}: followed`)
  }
})

t.test('the same origin is the same scheme, host and port, default ports applied', async t => {
  const client = new HttpClient({ baseUrl: 'https://svc.example/api', maxRequests: 1, concurrency: 1, timeoutMillis: 1000, userAgent: 'test/1' })
  const cases: Array<[string, boolean]> = [
    ['https://svc.example/other', true],
    ['https://svc.example:443/api/items', true],
    ['HTTPS://SVC.EXAMPLE/api', true],
    ['http://svc.example/api/items', false],
    ['http://svc.example:443/api/items', false],
    ['https://svc.example:8443/api/items', false],
    ['https://other.example/api/items', false]
  ]
  for (const [url, same] of cases) t.equal(client.sameOrigin(new URL(url)), same, url)
  t.equal(client.url('//other.example/items').href, 'https://svc.example/api//other.example/items', 'a path is joined as text')
  t.throws(() => client.url('@other.example/items'), new CheckError('usage', 'not a path on the service: "@other.example/items" (a path begins with /)'), 'what is not a path is refused')
})

t.test('paths are joined to the base URL\'s origin: `//host/…` in a document or --collection goes nowhere else', async t => {
  const other = await serve(t, (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(PAGE) })
  const elsewhere = other.base.replace('http://', '')
  const collection = { get: { responses: { 200: { content: { 'application/json': { schema: { properties: { results: { type: 'array', items: {} } } } } } } } } }
  const document = {
    openapi: '3.1.0',
    info: { title: 'paths', version: '1' },
    paths: { '/items': collection, [`//${elsewhere}/stolen`]: collection, [`//${elsewhere}/steal`]: { post: {} }, [`@${elsewhere}/items`]: collection }
  }
  const service = await serve(t, (req, res) => {
    if (req.url === '/openapi.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
    else res.writeHead(200, { 'content-type': 'application/json' }).end(PAGE)
  })
  await check({ baseUrl: service.base, token: 'secret-token' })
  await check({ baseUrl: service.base, token: 'secret-token', collections: [`//${elsewhere}/items`] })
  t.strictSame(other.seen, [], 'the other host got no request')
  t.ok(service.seen.some(s => s.url === `//${elsewhere}/stolen` && s.authorization === 'Bearer secret-token'), 'a document path beginning with // is a path on the service')
  t.ok(service.seen.some(s => s.url === `//${elsewhere}/items`), 'so is such a --collection')
  t.notOk(service.seen.some(s => s.url.includes('@')), 'a path that does not begin with / is left out')
})

t.test('options that would take the check off its service, or nowhere, are refused', async t => {
  const cases: Array<[string, Parameters<typeof check>[0], CheckError]> = [
    ['a collection without /', { baseUrl: 'http://127.0.0.1:9', collections: ['items'] }, new CheckError('usage', 'a collection is a path beginning with /, got "items"')],
    ['a document that is neither a URL nor a path', { baseUrl: 'http://127.0.0.1:9', openapi: 'hello world' }, new CheckError('usage', 'openapi must be an http(s) URL, a path on the service or a parsed document, got "hello world"')],
    ['a parsed document that is no OpenAPI document', { baseUrl: 'http://127.0.0.1:9', openapi: { swagger: '2.0' } }, new CheckError('document', 'the document given is not an OpenAPI document (it has no "openapi" version field)')],
    ['no time at all', { baseUrl: 'http://127.0.0.1:9', timeoutMillis: 0 }, new CheckError('usage', 'timeoutMillis must be an integer of at least 1, got 0')]
  ]
  for (const [name, options, error] of cases) await t.rejects(check(options), error, name)
})

t.test('--ca adds a CA to those Node.js trusts, it does not replace them', async t => {
  const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
  const trusted = trustedCas(ca) ?? []
  t.equal(trusted.length, rootCertificates.length + 1)
  t.ok(rootCertificates.every(root => trusted.includes(root)), 'every root CA still trusted')
  t.equal(trusted.at(-1), ca, 'and the one given')
  t.equal(trustedCas(undefined), undefined, 'without --ca, the defaults as they are')
})
