import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import { nulErrors } from '../../plugins/validation/nul.js'
import type { Ajv } from 'ajv'
import { DateOnly, DateTime, Decimal, Duration, Int32, Int64 } from '../../schemas/types.js'

t.test('bodies are strict, query and headers are coerced, shared schemas resolve', async t => {
  const app = Fastify()
  await app.register(problem)
  app.addSchema({ $id: 'Name', type: 'string', minLength: 1, maxLength: 3 })
  await app.register(validation)
  app.post('/x', {
    schema: {
      body: Type.Object({ n: Type.Integer(), name: Type.Ref('Name') }, { additionalProperties: false }),
      querystring: Type.Object({ limit: Type.Integer({ default: 20 }), tag: Type.Optional(Type.Array(Type.String())) })
    }
  }, async (request) => ({ body: request.body, query: request.query }))
  const ok = await app.inject({ method: 'POST', url: '/x?tag=a', payload: { n: 1, name: 'abc' } })
  t.equal(ok.statusCode, 200)
  t.strictSame(JSON.parse(ok.body), { body: { n: 1, name: 'abc' }, query: { limit: 20, tag: ['a'] } }, 'defaults applied, single value → array')
  const coerced = await app.inject({ method: 'POST', url: '/x?limit=5&tag=a&tag=b', payload: { n: 1, name: 'a' } })
  t.strictSame(JSON.parse(coerced.body).query, { limit: 5, tag: ['a', 'b'] }, 'query integers coerced')
  const strict = await app.inject({ method: 'POST', url: '/x', payload: { n: '1', name: 'abcd', extra: 1 } })
  t.equal(strict.statusCode, 400)
  const fields = JSON.parse(strict.body).context.map((c: { field: string }) => c.field).sort()
  t.strictSame(fields, ['extra', 'n', 'name'], 'no body coercion, unknown property rejected, shared $ref applied')
  // JSON.parse reads a number past about 1.8e308 as Infinity; Ajv's number types take it only
  // without strictNumbers, which `strict: false` turns off with the rest.
  const infinities: Array<[string, string, string]> = [['{"n":1e400,"name":"a"}', 'must be integer, not Infinity', 'Infinity'], ['{"n":-1e400,"name":"a"}', 'must be integer, not -Infinity', '-Infinity']]
  for (const [payload, message, value] of infinities) {
    const infinite = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload })
    t.equal(infinite.statusCode, 400, payload)
    t.match(JSON.parse(infinite.body).context, [{ code: 'INPUT_INVALID', field: 'n', source: 'body', message, value }])
  }
  await app.close()
})

t.test('a context below that adds schemas of its own keeps the rules: bodies strict, query coerced, its schemas resolved, responses written by them', async t => {
  const app = Fastify()
  await app.register(problem)
  app.addSchema({ $id: 'Name', type: 'string', minLength: 1, maxLength: 3 })
  await app.register(validation)
  // Fastify builds a context's compilers anew once it adds a schema: the plugin's rules must hold there too.
  for (const prefix of ['/v1', '/v2']) {
    await app.register(async (api) => {
      api.addSchema({ $id: 'Order', type: 'object', properties: { item: { $ref: 'Name#' }, qty: { type: 'integer' }, note: { type: ['string', 'null'] } }, required: ['item'], additionalProperties: false })
      api.post('/orders', {
        schema: { body: { $ref: 'Order#' }, querystring: Type.Object({ limit: Type.Optional(Type.Integer()) }), response: { 200: { $ref: 'Order#' } } }
      }, async (request) => ({ ...(request.body as object), note: null, hidden: 'not in the schema' }))
      api.put('/orders/:id', { schema: { body: { $ref: 'Order#' } } }, async (request) => request.body)
    }, { prefix })
  }
  for (const prefix of ['/v1', '/v2']) {
    const ok = await app.inject({ method: 'POST', url: `${prefix}/orders?limit=5`, payload: { item: 'pen', qty: 2 } })
    t.equal(ok.statusCode, 200, prefix)
    t.strictSame(JSON.parse(ok.body), { item: 'pen', qty: 2, note: null }, `${prefix}: written by the response schema, null kept`)
    const strict = await app.inject({ method: 'POST', url: `${prefix}/orders?limit=x`, payload: { item: 'pens', qty: '2', colour: 'red' } })
    t.equal(strict.statusCode, 400, prefix)
    const fields = JSON.parse(strict.body).context.map((c: { field: string }) => c.field).sort()
    t.strictSame(fields, ['colour', 'item', 'limit', 'qty'], `${prefix}: no body coercion, unknown property refused, the shared $ref applied, the query checked`)
    t.equal((await app.inject({ method: 'PUT', url: `${prefix}/orders/1`, payload: { item: 'pen', colour: 'red' } })).statusCode, 400, `${prefix}: every route of the context`)
  }
  await app.close()
})

t.test('custom Ajv options are passed through; bad options are refused', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation, { ajv: { removeAdditional: 'all' } })
  app.post('/x', { schema: { body: Type.Object({ a: Type.String() }, { additionalProperties: false }) } }, async (request) => request.body)
  const res = await app.inject({ method: 'POST', url: '/x', payload: { a: 'x', b: 'y' } })
  t.strictSame(JSON.parse(res.body), { a: 'x' }, 'the override is honoured')
  await app.close()
  // Formats of the application's own, also over those of the suite's names.
  const formats = Fastify()
  t.teardown(() => formats.close())
  await formats.register(problem)
  await formats.register(validation, { ajv: { formats: { 'date-time': /^(yesterday|today)$/, email: (s: string) => s.endsWith('@example.com'), 'sku-code': /^[A-Z]{3}-\d{4}$/, unused: undefined } } })
  formats.post('/f', { schema: { body: Type.Object({ at: Type.String({ format: 'date-time' }), mail: Type.String({ format: 'email' }), sku: Type.String({ format: 'sku-code' }) }) } }, async () => ({}))
  const answers = []
  for (const payload of [{ at: 'yesterday', mail: 'x@example.com', sku: 'ABC-1234' }, { at: '2024-01-02T03:04:05Z', mail: 'x@example.com', sku: 'ABC-1234' }, { at: 'today', mail: 'x@example.org', sku: 'ABC-1234' }, { at: 'today', mail: 'x@example.com', sku: 'abc' }]) {
    answers.push((await formats.inject({ method: 'POST', url: '/f', payload })).statusCode)
  }
  t.strictSame(answers, [200, 400, 400, 400], 'ajv.formats are the ones applied, the suite\'s date-time and email too')
  await t.rejects(async () => { await Fastify().register(validation, { ajv: 'strict' } as never).ready() }, TypeError)
  await t.rejects(async () => { await Fastify().register(validation, { ajv: null } as never).ready() }, TypeError)
})

t.test('a body string holding U+0000 is refused, with the schema errors (fuzz regression: the store answered 500)', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  app.post('/x', { schema: { body: Type.Object({ n: Type.Optional(Type.Integer()), name: Type.String(), tags: Type.Optional(Type.Array(Type.String())), meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }), response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => ({ ok: true, hidden: 1 }))
  app.get('/q', { schema: { querystring: Type.Object({ s: Type.String() }) } }, async (request) => request.query)
  const res = await app.inject({ method: 'POST', url: '/x', payload: { n: 'x', name: 'a\u0000b', tags: ['ok', '\u0000'], meta: { 'k\u0000/~': 1 } } })
  t.equal(res.statusCode, 400)
  const items = JSON.parse(res.body).context.map((c: { field: string, message: string, code: string }) => [c.field, c.code, c.message])
  t.strictSame(items, [
    ['n', 'INPUT_INVALID', 'must be integer, not string'],
    ['name', 'INPUT_INVALID', 'must not contain the NUL character (U+0000)'],
    ['tags[1]', 'INPUT_INVALID', 'must not contain the NUL character (U+0000)'],
    ['meta.k\u0000/~', 'INPUT_INVALID', 'must not contain the NUL character (U+0000) in a property name']
  ])
  const alone = await app.inject({ method: 'POST', url: '/x', payload: { name: '\u0000' } })
  t.match(JSON.parse(alone.body), { status: 400, context: [{ field: 'name', code: 'INPUT_INVALID' }] }, 'also when the schema itself passes')
  const passed = await app.inject({ method: 'POST', url: '/x', payload: { name: 'a\u0001b' } })
  t.equal(passed.statusCode, 200, 'other control characters pass')
  t.equal(passed.body, '{"ok":true}', 'responses go through the serializer compiler')
  t.equal((await app.inject({ method: 'GET', url: '/q?s=a%00b' })).statusCode, 200, 'only bodies are scanned')
  await app.close()
})

t.test('the U+0000 scan: any depth, bounded findings, RFC 6901 pointers', async t => {
  let deep: unknown = 'x\u0000'
  for (let i = 0; i < 100000; i++) deep = [deep]
  const found = nulErrors({ deep })
  t.equal(found.length, 1, 'no recursion limit')
  t.equal(found[0]?.instancePath.length, '/deep'.length + 2 * 100000)
  t.equal(nulErrors(Array(100).fill('\u0000')).length, 20, 'stops after 20 findings')
  t.strictSame(nulErrors({ 'a/b': { '~': '\u0000' } }).map((e) => e.instancePath), ['/a~1b/~0'])
  t.strictSame(nulErrors([1, null, true, 'ok', {}]), [])
})

// A keyword Ajv does not know would be ignored, and what the schema meant to refuse let
// through: the route's registration fails instead, saying how to teach it to the plugin.
const evenKeyword = (ajv: Ajv): Ajv => ajv.addKeyword({ keyword: 'even', type: 'number', validate: (_schema: unknown, data: number) => data % 2 === 0 })
const evenBody = { type: 'object', properties: { n: { type: 'number', even: true } } }

t.test('an unknown keyword fails the boot; plugins and keywords are given to the plugin', async t => {
  // The server's own ajv option does not reach the plugin's compiler: the keyword is unknown to it.
  const server = Fastify({ ajv: { plugins: [evenKeyword] } })
  t.teardown(() => server.close())
  await server.register(problem)
  await server.register(validation)
  server.post('/e', { schema: { body: evenBody } }, async (request) => request.body)
  await t.rejects(async () => { await server.ready() }, /validation plugin: strict mode: unknown keyword: "even"; add your keywords and formats with validation\({ plugins: \[\.\.\.\] }\)/)

  for (const plugins of [[evenKeyword], [[evenKeyword, { unused: true }] as const]]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await app.register(validation, { plugins })
    app.post('/e', { schema: { body: evenBody, querystring: { type: 'object', properties: { n: { type: 'number', even: true } } } } }, async (request) => request.body)
    const odd = await app.inject({ method: 'POST', url: '/e', payload: { n: 3 } })
    t.equal(odd.statusCode, 400, 'the keyword applies to bodies')
    t.match(JSON.parse(odd.body).context, [{ field: 'n', source: 'body' }])
    t.equal((await app.inject({ method: 'POST', url: '/e?n=3', payload: { n: 2 } })).statusCode, 400, 'and to the query string')
    t.equal((await app.inject({ method: 'POST', url: '/e?n=4', payload: { n: 2 } })).statusCode, 200)
  }

  const annotated = Fastify()
  t.teardown(() => annotated.close())
  await annotated.register(problem)
  await annotated.register(validation, { ajv: { keywords: ['x-internal'] } })
  annotated.post('/a', { schema: { body: { type: 'object', 'x-internal': true } } }, async () => ({}))
  await t.resolves(async () => { await annotated.ready() }, 'a keyword named in ajv.keywords is an annotation')

  // OpenAPI's own annotations, as route schemas written for @fastify/swagger carry them; also
  // when the application names one of them itself.
  for (const ajv of [undefined, { keywords: ['example'] }]) {
    const swaggerStyle = Fastify()
    t.teardown(() => swaggerStyle.close())
    await swaggerStyle.register(problem)
    await swaggerStyle.register(validation, ajv === undefined ? {} : { ajv })
    swaggerStyle.post('/s', { schema: { body: { type: 'object', properties: { a: { type: 'string', example: 'hi', xml: { name: 'a' } } }, example: { a: 'hi' }, externalDocs: { url: 'https://example.com' } } } }, async () => ({}))
    t.equal((await swaggerStyle.inject({ method: 'POST', url: '/s', payload: { a: 1 } })).statusCode, 400, 'compiled, and still validating')
  }
})

t.test('the schema builders\' own keywords and formats compile under the strict keyword check', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  app.post('/b', {
    schema: {
      body: Type.Object({ amount: Decimal({ minimum: '0', maximum: '10', maxFractionDigits: 2 }), at: DateTime(), on: DateOnly(), every: Duration(), count: Int32({ minimum: 0, maximum: 5 }), big: Int64() }),
      querystring: Type.Object({ limit: Type.Optional(Int32({ minimum: 1, maximum: 5 })) })
    }
  }, async () => ({}))
  await app.ready()
  const bad = await app.inject({ method: 'POST', url: '/b', payload: { amount: '10.001', at: 'x', on: 'x', every: 'x', count: 6, big: 'x' } })
  t.strictSame(JSON.parse(bad.body).context.map((c: { field: string }) => c.field).sort(), ['amount', 'at', 'big', 'count', 'every', 'on'])
})

t.test('plugin options are checked at registration', async t => {
  const table: Array<[unknown, RegExp]> = [
    [{ ajvv: {} }, /^validation plugin: unknown option ajvv \(did you mean ajv\?\); the options are ajv, plugins$/],
    [{ plugins: evenKeyword }, /^validation plugin: plugins must be an array of Ajv plugins, got a function$/],
    [{ plugins: 'ajv-keywords' }, /^validation plugin: plugins must be an array of Ajv plugins, got "ajv-keywords"$/],
    [{ plugins: ['ajv-keywords'] }, /^validation plugin: plugins\[0\] must be an Ajv plugin or \[plugin, options\], got "ajv-keywords"$/],
    [{ plugins: [[evenKeyword]] }, /plugins\[0\] must be an Ajv plugin or \[plugin, options\]/],
    [{ ajv: [] }, /^validation plugin: ajv must be an object of Ajv options$/],
    [{ ajv: { keywords: 'x-internal' } }, /^validation plugin: ajv.keywords must be an array of keywords such as \["x-internal"\], got "x-internal"$/]
  ]
  for (const [opts, message] of table) {
    await t.rejects(async () => { await Fastify().register(validation, opts as never).ready() }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
})

t.test('a lone surrogate is refused like U+0000 (fuzz regression: jsonb refused its escape, the store answered 500)', async t => {
  const cases: Array<[unknown, string[]]> = [
    [{ name: 'a\ud800' }, ['/name: must be well-formed Unicode text (no lone surrogate)']],
    [{ name: '\udfffb' }, ['/name: must be well-formed Unicode text (no lone surrogate)']],
    [{ name: 'a\udfff\ud800b' }, ['/name: must be well-formed Unicode text (no lone surrogate)']],
    [{ name: '😀 \ud83d\ude00' }, []],
    [{ 'k\udc00': 1 }, ['/k\udc00: must be well-formed Unicode text (no lone surrogate) in a property name']],
    [{ name: '\u0000\ud800' }, ['/name: must not contain the NUL character (U+0000)']]
  ]
  for (const [data, expected] of cases) t.strictSame(nulErrors(data).map((e) => `${e.instancePath}: ${e.message as string}`), expected, JSON.stringify(data))
})

t.test('a schema repeated across routes is compiled once, and each route still validates by it', async t => {
  const { Ajv: AjvClass } = await import('ajv')
  const compile = AjvClass.prototype.compile
  // The route schemas compiled (each Ajv instance also compiles its keywords' own schemas).
  const compiled: string[] = []
  AjvClass.prototype.compile = function (this: Ajv, ...args: Parameters<Ajv['compile']>) {
    const properties = (args[0] as { properties?: object }).properties ?? {}
    if ('text' in properties || 'q' in properties) compiled.push(JSON.stringify(args[0]))
    return compile.apply(this, args)
  } as Ajv['compile']
  t.teardown(() => { AjvClass.prototype.compile = compile })
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  // Equal schemas written twice (distinct objects), and one that differs only by a bound.
  const note = (max: number): ReturnType<typeof Type.Object> => Type.Object({ text: Type.String({ maxLength: max }) }, { additionalProperties: false })
  for (const [url, max] of [['/a', 3], ['/b', 3], ['/c', 5]] as const) {
    app.post(url, { schema: { body: note(max), querystring: Type.Object({ q: Type.Optional(Type.Integer()) }) } }, async (request) => ({ query: request.query }))
  }
  await app.ready()
  t.equal(compiled.length, 3, 'two body schemas and one query schema: three compiles for six')
  t.equal(new Set(compiled).size, 3, 'none of them twice')
  for (const [url, text, status] of [['/a', 'abcd', 400], ['/b', 'abcd', 400], ['/b', 'abc', 200], ['/c', 'abcd', 200], ['/c', 'abcdef', 400]] as const) {
    const res = await app.inject({ method: 'POST', url: `${url}?q=7`, payload: { text } })
    t.equal(res.statusCode, status, `${url} with ${text.length} characters`)
    if (status === 200) t.strictSame(JSON.parse(res.body), { query: { q: 7 } }, 'its query coerced by the shared validator')
  }
  await app.close()
})
