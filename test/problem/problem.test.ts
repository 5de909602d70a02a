import t, { type Test } from 'tap'
import Fastify, { errorCodes, type FastifyInstance, type FastifySchemaValidationError } from 'fastify'
import { Writable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import problem, { ProblemError, problems, defineProblem } from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import methods from '../../plugins/methods/index.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function build (t: Test, logs: string[] = []): Promise<FastifyInstance> {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  const app = Fastify({ logger: { level: 'error', stream }, bodyLimit: 1024 })
  await app.register(problem)
  await app.register(validation)
  await app.register(methods)
  app.get('/raise/:kind', async (request) => {
    const kind = (request.params as { kind: keyof typeof problems }).kind
    throw problems[kind]('a detail that says how to fix it')
  })
  app.get('/boom', async () => { throw new Error('password=hunter2 at SELECT * FROM secrets') })
  app.get('/teapot', async () => { throw Object.assign(new Error('I am a teapot\nwith a second line'), { statusCode: 418, expose: true }) })
  app.get('/silent', async () => { throw Object.assign(new Error(''), { statusCode: 409, expose: true }) })
  // As @fastify/static passes on send's 416: the headers the status needs, and some of its body's.
  app.get('/headers/:kind', async (request) => {
    const headers: Record<string, unknown> = {
      range: { 'Content-Range': 'bytes */10', 'Content-Type': 'text/html; charset=UTF-8', 'content-length': '99' },
      framing: { 'Content-Length': '99', 'Transfer-Encoding': 'chunked', 'Content-Encoding': 'gzip' },
      none: null,
      text: 'Content-Range: bytes */10'
    }
    throw Object.assign(new Error('Range Not Satisfiable'), { statusCode: 416, expose: true, headers: headers[(request.params as { kind: string }).kind] })
  })
  app.get('/fastify-error', async () => { throw new errorCodes.FST_ERR_ROUTE_MISSING_CONTENT_TYPE('QUERY') })
  app.get('/type-error', async () => { throw Object.assign(new TypeError("Cannot read properties of undefined (reading 'ifNoneMatch')"), { statusCode: 400 }) })
  // What Fastify passes on when the body stream fails (it marks the error 400), e.g. a zlib stream.
  app.get('/stream-error', async () => { throw Object.assign(new Error('incorrect header check'), { statusCode: 400, code: 'Z_DATA_ERROR', errno: -3 }) })
  app.get('/invalid', async () => { throw Object.assign(new Error('bad'), { validation: [{ keyword: 'minimum', instancePath: '/limit', schemaPath: '#/minimum', params: { limit: 1 }, data: 0 }] }) })
  app.post('/items', {
    schema: {
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 5 }),
        email: Type.Optional(Type.String({ format: 'email' })),
        tags: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
        count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
        pages: Type.Optional(Type.Array(Type.Object({ description: Type.String({ maxLength: 3 }) }, { additionalProperties: false })))
      }, { additionalProperties: false }),
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
      headers: Type.Object({ 'svc-flag': Type.Optional(Type.String({ pattern: '^[a-z]+$' })) })
    }
  }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  return app
}

function bodyOf (res: { body: string }): Record<string, any> { return JSON.parse(res.body) }

t.test('every problem of the Common errors table renders as application/problem+json', async t => {
  const app = await build(t)
  const table: Array<[keyof typeof problems, number, string]> = [
    ['badRequest', 400, 'Bad Request'],
    ['invalidData', 400, 'Invalid Data'],
    ['unauthorized', 401, 'Unauthorized'],
    ['invalidRequest', 401, 'Invalid Request'],
    ['invalidToken', 401, 'Invalid Token'],
    ['forbidden', 403, 'Forbidden'],
    ['notFound', 404, 'Not Found'],
    ['methodNotAllowed', 405, 'Method Not Allowed'],
    ['notAcceptable', 406, 'Not Acceptable'],
    ['conflict', 409, 'Conflict'],
    ['preconditionFailed', 412, 'Precondition Failed'],
    ['contentTooLarge', 413, 'Content Too Large'],
    ['unsupportedMediaType', 415, 'Unsupported Media Type'],
    ['preconditionRequired', 428, 'Precondition Required'],
    ['tooManyRequests', 429, 'Too Many Requests'],
    ['internal', 500, 'Internal Server Error'],
    ['unavailable', 503, 'Service Unavailable']
  ]
  for (const [kind, status, title] of table) {
    const res = await app.inject({ url: `/raise/${kind}` })
    t.equal(res.statusCode, status, `${kind} status`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${kind} media type`)
    const body = bodyOf(res)
    t.strictSame(body, { title, status, requestId: body.requestId, detail: 'a detail that says how to fix it' }, `${kind} body`)
    t.match(body.requestId, UUID)
  }
})

t.test('requestId comes from X-Request-ID, which is echoed; otherwise a fresh UUID', async t => {
  const app = await build(t)
  const sent = await app.inject({ url: '/raise/conflict', headers: { 'x-request-id': 'trace-42' } })
  t.equal(bodyOf(sent).requestId, 'trace-42')
  t.equal(sent.headers['x-request-id'], 'trace-42')
  const a = await app.inject({ url: '/raise/conflict' })
  const b = await app.inject({ url: '/raise/conflict' })
  t.notOk(a.headers['x-request-id'], 'nothing echoed when nothing was sent')
  t.not(bodyOf(a).requestId, bodyOf(b).requestId)
  // Taken as sent: visible ASCII, spaces and tabs between, at most 200 characters.
  for (const id of ['a'.repeat(200), 'trace 1', 'x\ty', '{"a":1}', '~', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']) {
    const res = await app.inject({ url: '/raise/conflict', headers: { 'x-request-id': id } })
    t.equal(res.statusCode, 409, `${JSON.stringify(id)} taken`)
    t.equal(bodyOf(res).requestId, id)
    t.equal(res.headers['x-request-id'], id)
  }
})

t.test('an X-Request-ID that cannot be used as sent is refused: 400, a generated requestId, nothing echoed', async t => {
  const app = await build(t)
  const item = { code: 'INPUT_INVALID', message: 'must be 1 to 200 visible ASCII characters (spaces and tabs may separate them); send such an id, or none and one is generated', field: 'X-Request-ID', source: 'header' }
  const cases: Array<[string, string]> = [
    ['over 200 characters', 'x'.repeat(201)],
    // Node reads the bytes of a header as latin1: UTF-8 café arrives as cafÃ©.
    ['UTF-8 beyond ASCII, as Node reads it', Buffer.from('café').toString('latin1')],
    ['latin1 beyond ASCII', 'caf\u00e9'],
    ['empty', ''],
    ['blank', ' '],
    ['a control character', 'a\u007fb']
  ]
  for (const [name, id] of cases) {
    const res = await app.inject({ url: '/raise/conflict', headers: { 'x-request-id': id } })
    t.equal(res.statusCode, 400, name)
    const body = bodyOf(res)
    t.strictSame(body.context, [item], `${name}: one context item naming the rule, without the value`)
    t.match(body, { title: 'Invalid Data', status: 400, requestId: UUID }, `${name}: a generated requestId`)
    t.notOk('x-request-id' in res.headers, `${name}: not echoed`)
  }
  // The header and the length the plugin was given.
  const own = Fastify()
  t.teardown(() => own.close())
  await own.register(problem, { requestIdHeader: 'X-Correlation-ID', maxRequestIdLength: 10 })
  own.get('/raise/conflict', async () => { throw problems.conflict('taken') })
  const refused = await own.inject({ url: '/raise/conflict', headers: { 'x-correlation-id': 'c'.repeat(11) } })
  t.equal(refused.statusCode, 400)
  t.match(bodyOf(refused).context, [{ field: 'X-Correlation-ID', message: /^must be 1 to 10 visible ASCII characters/ }])
  t.equal((await own.inject({ url: '/raise/conflict', headers: { 'x-correlation-id': 'c'.repeat(10), 'x-request-id': 'é' } })).statusCode, 409, 'another header is not read')
})

t.test('unknown route: 404 with instance; known path with another method: 405 with Allow', async t => {
  const app = await build(t)
  const res = await app.inject({ url: '/nowhere/at/all?x=1' })
  t.equal(res.statusCode, 404)
  t.match(bodyOf(res), { title: 'Not Found', status: 404, instance: '/nowhere/at/all' })
  t.match(bodyOf(res).detail, /\/nowhere\/at\/all/)
  const r405 = await app.inject({ method: 'DELETE', url: '/items' })
  t.equal(r405.statusCode, 405)
  t.equal(r405.headers.allow, 'POST, OPTIONS')
  t.match(bodyOf(r405), { title: 'Method Not Allowed', status: 405, instance: '/items' })
  t.match(bodyOf(r405).detail, /DELETE/, 'detail names the method')
})

t.test('oversized body: 413; malformed JSON: 400 Bad Request; empty JSON body: 400', async t => {
  const app = await build(t)
  const big = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(2000) }) })
  t.equal(big.statusCode, 413)
  t.match(bodyOf(big), { title: 'Content Too Large', status: 413 })
  const bad = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{"name": ' })
  t.equal(bad.statusCode, 400)
  t.match(bodyOf(bad), { title: 'Bad Request', status: 400, detail: /not valid JSON/ })
  const empty = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '' })
  t.equal(empty.statusCode, 400)
  t.match(bodyOf(empty), { title: 'Bad Request', detail: /empty/ })
  const proto = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{"name":"a","__proto__":{"x":1}}' })
  t.equal(proto.statusCode, 400, 'prototype poisoning is a 400')
  t.equal(bodyOf(proto).title, 'Bad Request')
  const unsupported = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'text/csv' }, payload: 'a,b' })
  t.equal(unsupported.statusCode, 415)
  t.equal(bodyOf(unsupported).title, 'Unsupported Media Type')
})

t.test('unexpected throw: 500 with nothing internal, logged with the requestId', async t => {
  const logs: string[] = []
  const app = await build(t, logs)
  const res = await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-500' } })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, /hunter2|SELECT|secrets|at /)
  t.strictSame(Object.keys(bodyOf(res)).sort(), ['detail', 'requestId', 'status', 'title'])
  const line = logs.map(l => JSON.parse(l)).find(l => l.requestId === 'req-500')
  t.ok(line, 'the error is logged with the requestId')
  t.match(line.err.message, /hunter2/, 'the log keeps what the client never sees')
})

t.test('a throw of null, undefined or a primitive is an unexpected fault: a 500 problem, logged', async t => {
  const logs: string[] = []
  const app = await build(t, logs)
  const thrown: Array<[string, unknown]> = [['null', null], ['undefined', undefined], ['a number', 42], ['a string', 'SELECT * FROM secrets']]
  for (const [name, value] of thrown) {
    app.get(`/throws/${name.replace(' ', '-')}`, async () => { throw value })
  }
  for (const [name] of thrown) {
    const requestId = `req-${name.replace(' ', '-')}`
    const res = await app.inject({ url: `/throws/${name.replace(' ', '-')}`, headers: { 'x-request-id': requestId } })
    t.equal(res.statusCode, 500, `${name}: status`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${name}: a problem`)
    t.strictSame(bodyOf(res), { title: 'Internal Server Error', status: 500, requestId, detail: 'An unexpected error occurred; retry later, and quote the requestId if it persists.' }, `${name}: nothing internal`)
    t.ok(logs.some(l => JSON.parse(l).requestId === requestId), `${name}: logged with the requestId`)
  }
})

t.test('a 4xx error of another plugin keeps its status and only the first line of its message', async t => {
  const app = await build(t)
  const res = await app.inject({ url: '/teapot' })
  t.equal(res.statusCode, 418)
  t.strictSame(bodyOf(res), { title: "I'm a Teapot", status: 418, requestId: bodyOf(res).requestId, detail: 'I am a teapot' })
  const silent = await app.inject({ url: '/silent' })
  t.strictSame(bodyOf(silent), { title: 'Conflict', status: 409, requestId: bodyOf(silent).requestId }, 'no detail without a message')
  const fastifyError = await app.inject({ url: '/fastify-error' })
  t.match(bodyOf(fastifyError), { status: 400, title: 'Bad Request', detail: "Method 'QUERY' must provide a 'Content-Type' header." }, 'a FastifyError is written for the client')
  const invalid = await app.inject({ url: '/invalid' })
  t.match(bodyOf(invalid), { status: 400, title: 'Invalid Data', context: [{ code: 'INPUT_MIN_VALUE', field: 'limit', source: 'body' }] }, 'a validation error without a context is taken as the body')
})

t.test('a 4xx error of another plugin keeps the headers it carries and a status given as status, as Fastify\'s own handler does', async t => {
  const app = Fastify({ logger: false })
  await app.register(problem)
  // As http-errors builds them (createError(405, 'Only GET here', { headers: { Allow: 'GET' } })).
  const clientError = (status: number, message: string, headers: Record<string, string>): Error => Object.assign(new Error(message), { status, statusCode: status, expose: true, headers })
  app.get('/405', async () => { throw clientError(405, 'Only GET here', { Allow: 'GET' }) })
  app.get('/401', async () => { throw clientError(401, 'The token expired', { 'WWW-Authenticate': 'Bearer error="invalid_token"' }) })
  app.get('/429', async () => { throw clientError(429, 'Slow down', { 'Retry-After': '30', 'Content-Type': 'text/plain' }) })
  app.get('/status', async () => { throw Object.assign(new Error('gone'), { status: 404 }) })
  app.get('/unexpected', async () => { throw Object.assign(new Error('internal'), { statusCode: 502, headers: { 'x-upstream': '10.0.0.5' } }) })
  // As @fastify/under-pressure and http-errors shed load: a 503, with or without Retry-After.
  app.get('/shed', async () => { throw Object.assign(new Error('db pool at 10.0.0.5 exhausted'), { statusCode: 503, headers: { 'Retry-After': '7', 'x-upstream': '10.0.0.5' } }) })
  app.get('/shed-bare', async () => { throw Object.assign(new Error('Service Unavailable'), { status: 503 }) })
  // Fastify's idiom: the status on the reply, the error sent; the error's own status first.
  app.get('/coded/:status', (request, reply) => { reply.code(Number((request.params as { status: string }).status)).send(new Error('internal: no row 7 in table x')) })
  app.get('/coded-own', (_request, reply) => { reply.code(404).send(Object.assign(new Error('gone'), { statusCode: 410, expose: true })) })
  t.teardown(() => app.close())
  const table: Array<[string, number, Record<string, string | undefined>]> = [
    ['/405', 405, { allow: 'GET' }],
    ['/401', 401, { 'www-authenticate': 'Bearer error="invalid_token"' }],
    ['/429', 429, { 'retry-after': '30', 'content-type': 'application/problem+json; charset=utf-8' }],
    ['/status', 404, {}],
    // An unexpected fault shows nothing of itself, its headers included.
    ['/unexpected', 500, { 'x-upstream': undefined }],
    // A 503 stays one the client may retry, with its Retry-After and nothing else of the error.
    ['/shed', 503, { 'retry-after': '7', 'x-upstream': undefined }],
    ['/shed-bare', 503, { 'retry-after': undefined }],
    ['/coded/404', 404, {}],
    ['/coded/503', 503, {}],
    ['/coded/200', 500, {}],
    ['/coded-own', 410, {}]
  ]
  for (const [url, status, headers] of table) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, status, url)
    t.match(bodyOf(res), { status }, url)
    t.match(res.headers['content-type'], /^application\/problem\+json/, url)
    for (const [name, value] of Object.entries(headers)) t.equal(res.headers[name], value, `${url} ${name}`)
    if (status >= 500 || url.startsWith('/coded/')) t.notMatch(res.body, /internal|10\.0\.0\.5|exhausted/, `${url}: nothing of the error shown`)
  }
})

t.test('a 4xx error of another plugin keeps the headers it asks for (error.headers), not those of its own body', async t => {
  const app = await build(t)
  const cases: Array<[string, string | undefined]> = [
    ['range', 'bytes */10'],
    ['framing', undefined],
    ['none', undefined],
    ['text', undefined]
  ]
  for (const [kind, range] of cases) {
    const res = await app.inject({ url: `/headers/${kind}` })
    t.equal(res.statusCode, 416, kind)
    t.equal(res.headers['content-range'], range, `${kind}: Content-Range`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${kind}: the problem's type`)
    t.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)), `${kind}: the problem's length`)
    t.equal(res.headers['content-encoding'], undefined, `${kind}: no coding`)
    t.match(bodyOf(res), { title: 'Range Not Satisfiable', status: 416, detail: 'Range Not Satisfiable' }, kind)
  }
})

t.test('a 4xx error whose message was not written for the client keeps its status, not its message', async t => {
  const app = await build(t)
  for (const url of ['/type-error', '/stream-error']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 400, url)
    t.match(res.headers['content-type'], /^application\/problem\+json/, url)
    t.strictSame(bodyOf(res), { title: 'Bad Request', status: 400, requestId: bodyOf(res).requestId, detail: 'The request cannot be processed as sent; check it against the API description.' }, url)
    t.notMatch(res.body, /Cannot read|header check|undefined/, url)
  }
})

t.test('Validation context codes: one item per violation, code from the failing keyword', async t => {
  const app = await build(t)
  type Row = [string, { payload?: unknown, query?: string, headers?: Record<string, string> }, Array<Record<string, string>>]
  const rows: Row[] = [
    ['INPUT_NULL (missing)', { payload: {} }, [{ code: 'INPUT_NULL', field: 'name', source: 'body' }]],
    ['INPUT_NULL (null)', { payload: { name: null } }, [{ code: 'INPUT_NULL', field: 'name', source: 'body' }]],
    ['INPUT_BLANK', { payload: { name: '' } }, [{ code: 'INPUT_BLANK', field: 'name', source: 'body', value: '' }]],
    ['INPUT_EMPTY', { payload: { name: 'a', tags: [] } }, [{ code: 'INPUT_EMPTY', field: 'tags', source: 'body' }]],
    ['INPUT_MIN_VALUE (body)', { payload: { name: 'a', count: 0 } }, [{ code: 'INPUT_MIN_VALUE', field: 'count', source: 'body', value: '0' }]],
    ['INPUT_MIN_VALUE (query)', { payload: { name: 'a' }, query: 'limit=0' }, [{ code: 'INPUT_MIN_VALUE', field: 'limit', source: 'query', value: '0' }]],
    ['INPUT_MAX_VALUE', { payload: { name: 'a', count: 11 } }, [{ code: 'INPUT_MAX_VALUE', field: 'count', source: 'body', value: '11' }]],
    ['INPUT_MAX_VALUE (length)', { payload: { name: 'abcdef' } }, [{ code: 'INPUT_MAX_VALUE', field: 'name', source: 'body' }]],
    ['INPUT_INVALID (format)', { payload: { name: 'a', email: 'not-an-email' } }, [{ code: 'INPUT_INVALID', field: 'email', source: 'body', value: 'not-an-email' }]],
    ['INPUT_INVALID (type)', { payload: { name: 'a', count: 'three' } }, [{ code: 'INPUT_INVALID', field: 'count', source: 'body', value: 'three' }]],
    ['INPUT_INVALID (unknown field)', { payload: { name: 'a', color: 'red' } }, [{ code: 'INPUT_INVALID', field: 'color', source: 'body' }]],
    ['INPUT_INVALID (unknown query parameter)', { payload: { name: 'a' }, query: 'sort=name' }, [{ code: 'INPUT_INVALID', field: 'sort', source: 'query' }]],
    ['INPUT_INVALID (header)', { payload: { name: 'a' }, headers: { 'svc-flag': 'NO!' } }, [{ code: 'INPUT_INVALID', field: 'svc-flag', source: 'header', value: 'NO!' }]],
    ['nested field path', { payload: { name: 'a', pages: [{ description: 'ok' }, { description: 'long' }] } }, [{ code: 'INPUT_MAX_VALUE', field: 'pages[1].description', source: 'body' }]],
    ['every part at once (Fastify stops at the first)', { payload: { name: '' }, query: 'limit=0', headers: { 'svc-flag': 'NO!' } }, [
      { code: 'INPUT_BLANK', field: 'name', source: 'body' }, { code: 'INPUT_MIN_VALUE', field: 'limit', source: 'query' }, { code: 'INPUT_INVALID', field: 'svc-flag', source: 'header' }
    ]],
    ['the query and a header at once', { payload: { name: 'a' }, query: 'limit=0', headers: { 'svc-flag': 'NO!' } }, [
      { code: 'INPUT_MIN_VALUE', field: 'limit', source: 'query' }, { code: 'INPUT_INVALID', field: 'svc-flag', source: 'header' }
    ]],
    ['several violations at once', { payload: { name: '', count: 99, tags: [], extra: true } }, [
      { code: 'INPUT_INVALID', field: 'extra' }, { code: 'INPUT_BLANK', field: 'name' }, { code: 'INPUT_EMPTY', field: 'tags' }, { code: 'INPUT_MAX_VALUE', field: 'count' }
    ]]
  ]
  for (const [name, req, expected] of rows) {
    const res = await app.inject({
      method: 'POST',
      url: '/items' + (req.query !== undefined ? `?${req.query}` : ''),
      headers: req.headers,
      payload: req.payload as Record<string, unknown>
    })
    t.equal(res.statusCode, 400, `${name}: status`)
    const body = bodyOf(res)
    t.equal(body.title, 'Invalid Data', `${name}: title`)
    t.equal(body.context.length, expected.length, `${name}: one item per violation`)
    for (const item of expected) {
      t.ok(body.context.some((c: Record<string, string>) => Object.entries(item).every(([k, v]) => c[k] === v)), `${name}: has ${JSON.stringify(item)}`)
    }
    for (const c of body.context) t.type(c.message, 'string', `${name}: message`)
  }
})

t.test('every part at once: the parts after the failed one run as Fastify would run them', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  // Validators of another kind than Ajv's (called with the data alone), and one that throws.
  const failing = (instancePath: string, data: unknown): (() => boolean) & { errors: FastifySchemaValidationError[] } => Object.assign(() => false, { errors: [{ keyword: 'minimum', instancePath, schemaPath: '#/minimum', params: { limit: 1 }, data }] })
  const badId = failing('/id', 'x')
  const badPage = failing('/page', 0)
  const throwing = (): boolean => { throw new Error('a validator that throws') }
  app.post('/things/:id', {
    schema: {
      params: Type.Object({ id: Type.Integer() }),
      // A body schema per media type has no one function to run: it is left out.
      body: { content: { 'application/json': { schema: Type.Object({ name: Type.String() }) } } },
      querystring: Type.Object({ page: Type.Optional(Type.Integer()) }),
      headers: Type.Object({ 'svc-flag': Type.Optional(Type.String()) })
    },
    validatorCompiler: ({ httpPart }) => ({ params: badId, querystring: badPage }[httpPart ?? ''] ?? (httpPart === 'headers' ? throwing : () => true))
  }, async () => ({}))
  // An asynchronous validator that refuses: not waited for, and its refusal does not escape.
  app.post('/later/:id', {
    schema: { params: Type.Object({ id: Type.Integer() }), querystring: Type.Object({}) },
    validatorCompiler: ({ httpPart }) => httpPart === 'params' ? badId : (async () => { throw new Error('refused later') }) as never
  }, async () => ({}))
  // No body at all: its validator sees null, as Fastify would give it.
  const seen: unknown[] = []
  app.post('/plain/:id', {
    schema: { params: Type.Object({ id: Type.Integer() }), body: Type.Object({}) },
    validatorCompiler: ({ httpPart }) => httpPart === 'params' ? badId : (data: unknown) => { seen.push(data); return true }
  }, async () => ({}))
  // A validation error of a part Fastify does not name: no other part is run again.
  app.get('/elsewhere', { schema: { querystring: Type.Object({ page: Type.Integer() }) } }, async () => {
    throw Object.assign(new Error('bad'), { validation: badId.errors, validationContext: 'cookies' })
  })
  const fields = (res: { body: string }): unknown => bodyOf(res).context.map((c: { source?: string, field: string }) => [c.source ?? null, c.field])
  const res = await app.inject({ method: 'POST', url: '/things/x?page=0', payload: { name: 1 } })
  t.equal(res.statusCode, 400)
  t.strictSame(fields(res), [[null, 'id'], ['query', 'page']])
  t.strictSame(fields(await app.inject({ method: 'POST', url: '/plain/x' })), [[null, 'id']])
  t.strictSame(fields(await app.inject({ method: 'POST', url: '/later/x' })), [[null, 'id']])
  t.strictSame(seen, [null])
  t.strictSame(fields(await app.inject({ method: 'GET', url: '/elsewhere?page=1' })), [[null, 'id']])
  await app.close()
})

t.test('defineProblem and ProblemError carry headers, instance, type, context and extensions', async t => {
  const app = Fastify()
  await app.register(problem)
  const gone = defineProblem(409, 'SVC_ERR_TEST', 'Name Taken')
  app.get('/a', async () => { throw gone('pick another name', { instance: '/v1/x/1', type: 'https://example.com/probs/name', context: [{ message: 'taken', code: 'UNIQUE_NAME_VIOLATION', field: 'name' }], headers: { 'retry-after': 1 }, extensions: { conflictingId: '1', skipped: null } }) })
  app.get('/b', async () => { throw new ProblemError(599, 'X') })
  app.get('/c', async () => { throw new ProblemError(499, 'X', { context: [] }) })
  const a = await app.inject({ url: '/a' })
  t.equal(a.statusCode, 409)
  t.equal(a.headers['retry-after'], '1')
  t.strictSame(bodyOf(a), { title: 'Name Taken', status: 409, requestId: bodyOf(a).requestId, detail: 'pick another name', instance: '/v1/x/1', type: 'https://example.com/probs/name', context: [{ message: 'taken', code: 'UNIQUE_NAME_VIOLATION', field: 'name' }], conflictingId: '1' })
  const b = await app.inject({ url: '/b' })
  t.strictSame([b.statusCode, bodyOf(b).title], [599, 'Internal Server Error'])
  const c = await app.inject({ url: '/c' })
  t.strictSame([c.statusCode, bodyOf(c).title, bodyOf(c).context], [499, 'Bad Request', undefined], 'an empty context is left out')
  await app.close()
})

t.test('a problem is never the body of a status other than 4xx or 5xx', async t => {
  for (const status of [200, 204, 302, 399, 600, 400.5]) {
    t.throws(() => defineProblem(status, 'SVC_ERR_X'), { name: 'TypeError', message: `defineProblem: status must be a 4xx or 5xx status, got ${status} (a problem is never the body of another status)` }, `defineProblem(${status})`)
  }
  const logs: string[] = []
  const app = await build(t, logs)
  for (const status of [200, 302, 999]) app.get(`/status/${status}`, async () => { throw new ProblemError(status, 'SVC_ERR_X', { detail: 'internal detail' }) })
  for (const status of [200, 302, 999]) {
    const res = await app.inject({ url: `/status/${status}`, headers: { 'x-request-id': `req-${status}` } })
    t.equal(res.statusCode, 500, `ProblemError(${status}): an unexpected fault`)
    t.strictSame(bodyOf(res), { title: 'Internal Server Error', status: 500, requestId: `req-${status}`, detail: 'An unexpected error occurred; retry later, and quote the requestId if it persists.' })
    t.ok(logs.some(l => JSON.parse(l).requestId === `req-${status}`), `ProblemError(${status}): logged`)
  }
})

t.test('options are checked at registration', async t => {
  const table: Array<[unknown, RegExp]> = [
    [{ generateRequestId: 'x' }, /^problem plugin: generateRequestId must be a function$/],
    [{ maxRequestIdLength: 0 }, /^problem plugin: maxRequestIdLength must be a positive integer, got 0$/],
    [{ requestIdHeader: 42 }, /^problem plugin: requestIdHeader must be a header name such as "x-request-id", got 42$/],
    [{ requestIdHeader: 'x request id' }, /requestIdHeader must be a header name .* got "x request id"$/],
    [{ notFound: 'no' }, /^problem plugin: notFound must be a boolean, got "no"$/],
    [{ requestIdHeadr: 'x-trace' }, /^problem plugin: unknown option requestIdHeadr \(did you mean requestIdHeader\?\); the options are requestIdHeader, generateRequestId, maxRequestIdLength, notFound, replaceErrorBodies$/],
    ['x-request-id', /^problem plugin: the options must be an object, got "x-request-id"$/]
  ]
  for (const [opts, message] of table) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(problem, opts as never).ready() }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
})

t.test('Fastify client errors map to their problems', async t => {
  const app = Fastify()
  await app.register(problem)
  const table: Array<[string, number, string, RegExp]> = [
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, 'Bad Request', /Content-Length/],
    ['FST_ERR_CTP_INVALID_TYPE', 400, 'Bad Request', /media type/],
    ['FST_ERR_BAD_URL', 400, 'Bad Request', /URL/],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'Unsupported Media Type', /Content-Type/],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Content Too Large', /smaller/],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'Bad Request', /empty/],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'Bad Request', /not valid JSON/]
  ]
  app.get('/:code', async (request) => {
    const code = (request.params as { code: string }).code
    throw Object.assign(new Error('internal wording'), { code, statusCode: 400 })
  })
  app.get('/syntax', async () => { throw Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 }) })
  for (const [code, status, title, detail] of table) {
    const res = await app.inject({ url: `/${code}` })
    t.equal(res.statusCode, status, code)
    t.match(JSON.parse(res.body), { title, detail }, code)
  }
  const syntax = await app.inject({ url: '/syntax' })
  t.match(JSON.parse(syntax.body), { status: 400, title: 'Bad Request', detail: /not valid JSON/ })
  await app.close()
})

t.test('a 5xx ProblemError is logged with its cause; long context values are cut', async t => {
  const logs: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  const app = Fastify({ logger: { level: 'error', stream } })
  await app.register(problem, { generateRequestId: () => 'fixed-id' })
  app.get('/down', async () => { throw problems.unavailable('The database is not reachable; retry later.', { cause: new Error('ECONNREFUSED 10.0.0.1:5432') }) })
  app.get('/long', async () => { throw problems.invalidData('x', { context: [{ message: 'too long', value: 'v'.repeat(500) }] }) })
  const res = await app.inject({ url: '/down' })
  t.equal(res.statusCode, 503)
  t.equal(JSON.parse(res.body).requestId, 'fixed-id', 'generateRequestId option')
  t.notMatch(res.body, /ECONNREFUSED/)
  t.ok(logs.some(l => /ECONNREFUSED/.test(l) && /fixed-id/.test(l)), 'the cause is logged with the requestId')
  await app.close()
  const { invalidData } = await import('../../plugins/problem/errors.js')
  const item = invalidData([{ message: 'too long', value: 'v'.repeat(500) }]).context?.[0]
  t.equal(item?.value?.length, 201, 'values are cut to 200 characters and an ellipsis')
  t.equal(invalidData([{ message: 'a' }, { message: 'b' }]).detail, 'The request has 2 invalid values; see context for each one.')
})
