import t from 'tap'
import fc from 'fast-check'
import { token } from '../resource/helper.js'
import { Tally, afterwards, good, judge, raw, report, send, startFuzzService } from './support.js'

/*
 * What an outside probe found (issue 24), kept fixed: methods Fastify does not route,
 * methods Node's parser does not know, and CONNECT get an answer of the convention (405 with
 * Allow on a known path), never a silent close; repeated and conflicting headers are a 400
 * problem (a repeated User-Agent, an invalid one, a 403); a bulk body without the bulk shape
 * is a 400 that applies nothing.
 */

const line = (extra: string[]): string => ['host: 127.0.0.1', `authorization: Bearer ${token()}`, 'user-agent: probe-fuzz/1 (tap)', 'accept: application/json', ...extra, 'connection: close'].join('\r\n')

t.test('the probe\'s findings stay fixed', async (t) => {
  const { base, port, errors } = await startFuzzService(t)
  const author = JSON.parse((await send(base, 'POST', '/v1/authors', good({ 'content-type': 'application/json' }), JSON.stringify({ name: 'Probe', email: 'probe@example.com' }))).text)
  const paths = ['/v1/authors', `/v1/authors/${author.id as string}`, '/v1/documents/search', '/health', '/openapi.json', '/v1/nowhere', '/_webhooks/scanner/document-scanned']

  t.test('any method on any path: an answer, a problem for a refusal, never a silent close', async (t) => {
    const tally = new Tally()
    const method = fc.oneof(
      fc.constantFrom('CONNECT', 'TRACE', 'PROPFIND', 'LOCK', 'PURGE', 'SEARCH', 'MKCOL', 'LINK', 'QUERY', 'GET', 'PATCH', 'OPTIONS'),
      fc.stringMatching(/^[A-Z]{3,10}$/)
    )
    await fc.assert(fc.asyncProperty(method, fc.constantFrom(...paths, 'example.com:443', '*'), fc.boolean(), async (m, path, withBody) => {
      const body = withBody ? '{}' : ''
      const head = `${m} ${path} HTTP/1.1\r\n${line(withBody ? ['content-type: application/json', `content-length: ${body.length}`] : [])}\r\n\r\n`
      const answer = await raw(port, [head + body])
      if (answer.reply === undefined) throw new Error(`no answer to ${m} ${path}: ${JSON.stringify(answer.raw)}`)
      judge({ method: m }, answer.reply, tally)
      if (m === 'CONNECT' && path.startsWith('/v1/authors')) {
        if (answer.reply.status !== 405 || answer.reply.headers.allow === undefined) throw new Error(`CONNECT ${path}: ${answer.reply.status}`)
      }
    }), { numRuns: 300 })
    report(t, 'methods', tally)
    t.ok((tally.statuses.get(405) ?? 0) > 0, 'methods a path does not serve get 405 with Allow')
    // Methods Node's parser does not know (FOO, a lower-case get) get what TRACE, which it knows, gets.
    for (const path of ['/v1/authors', `/v1/authors/${author.id as string}`, '/v1/nowhere']) {
      const ask = async (m: string): Promise<{ status?: number, allow?: string, id?: string, connection?: string, detail?: string }> => {
        const answer = await raw(port, [`${m} ${path} HTTP/1.1\r\n${line(['x-request-id: probe-1'])}\r\n\r\n`])
        const body = JSON.parse(answer.reply?.text ?? '{}')
        return { status: answer.reply?.status, allow: answer.reply?.headers.allow, id: answer.reply?.headers['x-request-id'], connection: answer.reply?.headers.connection, detail: String(body.detail).replace(` ${m} `, ' <method> ') }
      }
      const known = await ask('TRACE')
      for (const m of ['FOO', 'get']) {
        const unknown = await ask(m)
        t.strictSame(unknown, { ...known, connection: 'close' }, `${m} ${path}: as TRACE (${String(known.status)}), the connection closed`)
      }
    }
  })

  t.test('repeated and conflicting headers: a 400 problem, or the answer the request would get without them', async (t) => {
    const tally = new Tally()
    const repeated = fc.constantFrom(
      ['host: 127.0.0.1', 'host: evil.example'],
      [`authorization: Bearer ${token()}`, 'authorization: Bearer forged'],
      ['content-type: application/json', 'content-type: text/plain'],
      ['user-agent: other/2'],
      ['content-length: 2', 'content-length: 3'],
      ['content-length: 2', 'transfer-encoding: chunked'],
      ['transfer-encoding: chunked', 'transfer-encoding: gzip'],
      ['svc-execution-context: prod', 'svc-execution-context: preprod'],
      ['x-request-id: a', 'x-request-id: b'],
      ['if-match: "a"', 'if-match: "b"']
    )
    await fc.assert(fc.asyncProperty(repeated, fc.constantFrom('GET /v1/authors', `PATCH /v1/authors/${author.id as string}`, 'POST /v1/documents/search'), async (lines, request) => {
      const [method] = request.split(' ') as [string]
      const extra = method === 'GET' ? lines : [...lines.filter((l) => !l.startsWith('content-type') || lines.some((x) => x.startsWith('content-type: text'))), ...(lines.some((l) => l.startsWith('content-type')) ? [] : ['content-type: application/json'])]
      const framed = extra.some((l) => l.startsWith('content-length') || l.startsWith('transfer-encoding')) ? extra : [...extra, ...(method === 'GET' ? [] : ['content-length: 2'])]
      const head = `${request} HTTP/1.1\r\n${['user-agent: probe-fuzz/1 (tap)', 'accept: application/json', ...(lines[0]?.startsWith('host') === true ? [] : ['host: 127.0.0.1']), ...(lines[0]?.startsWith('authorization') === true ? [] : [`authorization: Bearer ${token()}`]), ...framed, 'connection: close'].join('\r\n')}\r\n\r\n`
      const answer = await raw(port, [head + (method === 'GET' ? '' : '{}')])
      if (answer.reply === undefined) throw new Error(`no answer: ${JSON.stringify(head)}`)
      judge({ method }, answer.reply, tally)
      const single = /^(host|authorization|content-type|user-agent|content-length|transfer-encoding):/
      if (lines.length > 1 && lines.every((l) => single.test(l)) && answer.reply.status !== 400) throw new Error(`expected 400 for ${JSON.stringify(lines)}, got ${answer.reply.status}`)
    }), { numRuns: 150 })
    report(t, 'repeated headers', tally)
    const twoHosts = await raw(port, [`GET /v1/authors HTTP/1.1\r\n${line(['host: evil.example'])}\r\n\r\n`])
    t.equal(twoHosts.reply?.status, 400, 'two Host headers: 400')
    t.match(JSON.parse(twoHosts.reply?.text ?? '{}'), { detail: /host header more than once/ })
    const twoAgents = await raw(port, [`GET /v1/authors HTTP/1.1\r\n${line(['user-agent: probe-fuzz/1 (tap)'])}\r\n\r\n`])
    t.equal(twoAgents.reply?.status, 403, 'the same User-Agent twice: 403')
    t.match(JSON.parse(twoAgents.reply?.text ?? '{}'), { title: 'Forbidden', detail: /User-Agent header .*; the header is sent more than once; send it once\.$/ })
  })

  t.test('an X-Request-ID that cannot be used as sent: 400 naming the rule, a generated requestId, nothing echoed', async (t) => {
    // Raw bytes: the UTF-8 of café, which Node reads as latin1 (cafÃ©).
    const table: Array<[string, Buffer]> = [
      ['UTF-8 beyond ASCII', Buffer.from('café', 'utf8')],
      ['201 characters', Buffer.from('a'.repeat(201))]
    ]
    for (const [name, id] of table) {
      const head = Buffer.concat([Buffer.from(`GET /v1/authors HTTP/1.1\r\n${line([])}\r\nx-request-id: `, 'latin1'), id, Buffer.from('\r\n\r\n')])
      const answer = await raw(port, [head])
      t.equal(answer.reply?.status, 400, name)
      t.equal(answer.reply?.headers['x-request-id'], undefined, `${name}: not echoed`)
      const body = JSON.parse(answer.reply?.text ?? '{}')
      t.match(body, { title: 'Invalid Data', requestId: /^[0-9a-f-]{36}$/, context: [{ code: 'INPUT_INVALID', field: 'X-Request-ID', source: 'header', message: /^must be 1 to 200 visible ASCII characters/ }] }, name)
      t.notOk('value' in body.context[0], `${name}: the value is not sent back`)
    }
    const taken = await raw(port, [`GET /v1/authors HTTP/1.1\r\n${line(['x-request-id: trace 1'])}\r\n\r\n`])
    t.equal(taken.reply?.status, 200)
    t.equal(taken.reply?.headers['x-request-id'], 'trace 1', 'visible ASCII with a space is taken and echoed')
  })

  t.test('bulk bodies: without the bulk shape a 400 that applies nothing; with it, per-operation results', async (t) => {
    const tally = new Tally()
    const count = async (): Promise<number> => JSON.parse((await send(base, 'GET', '/v1/authors?offset=0&limit=1&totalCount=true', good())).text).paging.totalCount as number
    const entity = fc.oneof(
      { weight: 4, arbitrary: fc.record({ name: fc.string({ maxLength: 8 }), email: fc.constantFrom('a@example.com', 'bad') }, { requiredKeys: [] }) },
      { weight: 1, arbitrary: fc.constantFrom(null, 'text', 7, [], true) }
    )
    const operation = fc.record({
      action: fc.constantFrom('CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE', 'UPSERT', 'create'),
      entity
    }, { requiredKeys: [] })
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 6 }), fc.constantFrom(undefined, 'ATOMIC', 'ISOLATED', 'atomic'), async (operations, transactionMode) => {
      const before = await count()
      const reply = await send(base, 'PATCH', '/v1/authors', good({ 'content-type': 'application/json' }), JSON.stringify({ ...(transactionMode === undefined ? {} : { transactionMode }), operations }))
      judge({ method: 'PATCH' }, reply, tally)
      const shaped = (transactionMode === undefined || transactionMode === 'ATOMIC' || transactionMode === 'ISOLATED') && operations.every((op) =>
        ['CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'].includes(op.action as string) && typeof op.entity === 'object' && op.entity !== null && !Array.isArray(op.entity))
      if (!shaped) {
        if (reply.status !== 400) throw new Error(`a body without the bulk shape got ${reply.status}`)
        if (await count() !== before) throw new Error('a refused bulk body changed something')
      } else if (reply.status !== 200) {
        throw new Error(`a bulk body of the right shape got ${reply.status}: ${reply.text.slice(0, 300)}`)
      }
    }), { numRuns: 120 })
    report(t, 'bulk shapes', tally)
    t.ok((tally.statuses.get(400) ?? 0) > 0 && (tally.statuses.get(200) ?? 0) > 0, 'both kinds reached')
  })

  afterwards(t, base, errors)
})
