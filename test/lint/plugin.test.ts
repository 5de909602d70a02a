import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import lint, { type LintPluginOptions } from '../../plugins/lint/index.js'
import openapi from '../../plugins/openapi/index.js'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'

const handler = async (): Promise<Record<string, never>> => ({})

async function build (opts: LintPluginOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(problem)
  await app.register(validation)
  await app.register(lint, opts)
  return app
}

t.test('option validation names the option and its value', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [{ mode: 'loud' }, /mode must be 'error' or 'warn', got "loud"/],
    [{ rules: { 'no-such-rule': false } }, /rules\.no-such-rule is not a rule/],
    [{ rules: { 'array-plural': 'off' } }, /rules\.array-plural must be a boolean, got "off"/],
    [{ openapi: 'yes' }, /openapi must be a boolean, got "yes"/]
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(lint, opts as LintPluginOptions) }, { name: 'TypeError', message }, JSON.stringify(opts))
  }
})

t.test('a route that follows the convention registers', async t => {
  const app = await build()
  app.post('/v1/authors', {
    schema: {
      body: Type.Object({ name: Type.String({ maxLength: 100 }), active: Type.Boolean() }),
      querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }), ordering: Type.Array(Type.String({ enum: ['name', '-name'] })) }),
      params: Type.Object({}),
      headers: Type.Object({ 'svc-execution-context': Type.String({ maxLength: 100 }) }),
      response: {
        200: Type.Object({ results: Type.Array(Type.Object({ id: Type.String({ maxLength: 10 }) })), paging: Type.Object({}) }),
        201: { description: 'Created', content: { 'application/json': { schema: Type.Object({ id: Type.String({ maxLength: 10 }) }) } } }
      }
    }
  }, handler)
  await t.resolves(async () => { await app.ready() })
  await app.close()
})

t.test('a route that breaks a rule throws at registration with method, url, path and rule', async t => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['body', { body: Type.Object({ documentID: Type.String({ maxLength: 5 }) }) }, /POST \/v1\/things breaks the conventions:\n {2}#\/body\/properties\/documentID: .*\[property-camel-case\]/],
    ['querystring name', { querystring: Type.Object({ page_size: Type.Integer({ minimum: 1, maximum: 5 }) }) }, /#\/querystring\/properties\/page_size: .*\[property-camel-case\]/],
    ['querystring schema', { querystring: Type.Object({ limit: Type.Integer() }) }, /#\/querystring\/properties\/limit: .*\[integer-range\]/],
    ['querystring object', { querystring: Type.Object({ filter: Type.Object({ name: Type.String({ maxLength: 5 }) }) }) }, /#\/querystring\/properties\/filter: the query parameter "filter" takes objects: its values would be serialized JSON.*\[query-json\]/],
    ['querystring list of objects', { querystring: Type.Object({ names: Type.Array(Type.Object({})) }) }, /#\/querystring\/properties\/names: .*\[query-json\]/],
    ['params', { params: Type.Object({ thingId: Type.String() }) }, /#\/params\/properties\/thingId: .*\[string-max-length\]/],
    ['header name', { headers: Type.Object({ 'x-tenant': Type.String({ maxLength: 5 }) }) }, /#\/headers\/x-tenant: x-tenant: a custom header starts with Svc-.*\[header-name\]/],
    ['header schema', { headers: Type.Object({ 'svc-tenant': Type.String() }) }, /#\/headers\/properties\/svc-tenant: .*\[string-max-length\]/],
    ['response', { response: { 200: Type.Array(Type.Object({})) } }, /#\/response\/200: .*\[response-root-array\]/],
    ['response content', { response: { 200: { content: { 'application/json': { schema: Type.Object({ isOn: Type.Boolean() }) } } } } }, /#\/response\/200\/content\/application~1json\/schema\/properties\/isOn: .*\[boolean-prefix\]/]
  ]
  for (const [name, schema, message] of cases) {
    const app = await build()
    t.throws(() => app.post('/v1/things', { schema }, handler), { message }, name)
    await app.close()
  }
})

t.test('the media types a route produces or accepts are checked at registration', async t => {
  const cases: Array<[Record<string, unknown>, RegExp | null]> = [
    [{ produces: ['application/json', 'text/csv', 'application/vnd.svc-report.v2+json', 'application/vnd.svc-report+xml'] }, null],
    [{ produces: ['application/json', 'application/vnd.acme-report+json'] }, /#\/config\/conventions\/produces\/1: the custom media type application\/vnd\.acme-report\+json is written application\/vnd\.svc-<name>\[\.v<n>\]\+json or \+xml \[media-type\]/],
    [{ produces: ['application/x-report'] }, /#\/config\/conventions\/produces\/0: .*\[media-type\]/],
    [{ produces: ['application/vnd.svc-report.2+json'] }, /produces\/0: .*\[media-type\]/],
    [{ contentTypes: ['application/json', 'application/vnd.svc_report+json'] }, /#\/config\/conventions\/contentTypes\/1: .*\[media-type\]/],
    [{ produces: 'application/json' }, null],
    [{ produces: [42] }, null]
  ]
  for (const [conventions, message] of cases) {
    const app = await build()
    const add = (): unknown => app.get('/v1/reports', { config: { conventions } as never }, handler)
    if (message === null) t.doesNotThrow(add, JSON.stringify(conventions))
    else t.throws(add, { message }, JSON.stringify(conventions))
    await app.close()
  }
  const off = await build({ rules: { 'media-type': false } })
  t.doesNotThrow(() => off.get('/v1/reports', { config: { conventions: { produces: ['application/x-report'] } } }, handler), 'the rule switched off')
  await off.close()
})

t.test('rules switched off, config.lint = false, and webhook payloads', async t => {
  const app = await build({ rules: { 'boolean-prefix': false } })
  app.post('/v1/a', { schema: { body: Type.Object({ isOn: Type.Boolean() }) } }, handler)
  app.post('/v1/b', { schema: { body: Type.Object({ bad_name: Type.Number() }) }, config: { lint: false } }, handler)
  app.post('/_webhooks/scanner/done', { schema: { body: Type.Object({ document_ID: Type.Number() }), headers: Type.Object({ 'webhook-id': Type.String() }) } }, handler)
  t.throws(() => app.post('/_webhooks/scanner/done2', { schema: { response: { 200: Type.Array(Type.String()) } } }, handler), /\[response-root-array\]/, 'a webhook response is still the service\'s')
  await t.resolves(async () => { await app.ready() })
  await app.close()
})

t.test('warn mode logs instead of throwing', async t => {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(lint, { mode: 'warn' })
  app.get('/v1/a', { schema: { querystring: Type.Object({ page_size: Type.Integer({ minimum: 1, maximum: 5 }) }) } }, handler)
  app.get('/v1/b', handler)
  await app.ready()
  t.equal(lines.length, 1, 'once: the HEAD route Fastify adds has the GET\'s schemas')
  const entry = JSON.parse(lines[0] as string) as { level: number, msg: string, violations: Array<{ rule: string }> }
  t.equal(entry.level, 40)
  t.match(entry.msg, /GET \/v1\/a breaks the conventions/)
  t.strictSame(entry.violations.map(v => v.rule), ['property-camel-case'])
  await app.close()
})

t.test('warn mode: a HEAD route of its own is reported for what it breaks besides its GET', async t => {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(lint, { mode: 'warn' })
  const query = (name: string): { querystring: ReturnType<typeof Type.Object> } => ({ querystring: Type.Object({ [name]: Type.Integer({ minimum: 1, maximum: 5 }) }) })
  app.head('/v1/a', { schema: query('page_size') }, handler)
  app.get('/v1/a', { schema: query('page_size') }, handler)
  app.get('/v1/b', { schema: query('page_size'), exposeHeadRoute: false }, handler)
  app.head('/v1/b', { schema: query('max_size') }, handler)
  await app.ready()
  const messages = lines.map(line => (JSON.parse(line) as { msg: string }).msg.split(' breaks')[0])
  t.strictSame(messages, ['svc-lint: HEAD /v1/a', 'svc-lint: GET /v1/a', 'svc-lint: GET /v1/b', 'svc-lint: HEAD /v1/b'])
  await app.close()
})

async function withOpenApi (opts: LintPluginOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(problem)
  await app.register(validation)
  // Per status: a `default` problem response would stand for the 4xx the first case leaves out.
  await app.register(openapi, { commonProblems: [500], stateOnce: false })
  await app.register(lint, opts)
  return app
}

t.test('the OpenAPI document is linted when the app is ready', async t => {
  // Without a 4xx a route's document operation breaks problem-response, which no route schema shows.
  const app = await withOpenApi({})
  app.get('/v1/a', handler)
  await t.rejects(async () => { await app.ready() }, /the OpenAPI document breaks the conventions:\n[\s\S]* {2}#\/paths\/~1v1~1a\/get\/responses: .*\[problem-response\]/)

  const skipped = await withOpenApi({})
  skipped.get('/v1/a/:id', { config: { lint: false } }, handler)
  await t.resolves(async () => { await skipped.ready() }, 'config.lint = false leaves the operation out of the document lint too')
  await skipped.close()

  // A webhook consumer's path rules (kebab-case, x-internal) are its operations' too.
  const webhook = await withOpenApi({})
  webhook.post('/_webhooks/Bad_Producer/evt', { config: { lint: false } }, handler)
  await t.resolves(async () => { await webhook.ready() }, 'config.lint = false leaves a webhook consumer out too')
  await webhook.close()
  const linted = await withOpenApi({})
  linted.post('/_webhooks/Bad_Producer/evt', { schema: { response: { 204: { type: 'null' }, 400: { $ref: 'Problem#' } } } }, handler)
  await t.rejects(async () => { await linted.ready() }, /\[webhook-path\][\s\S]*\[webhook-internal\]/, 'and lints it without')
  await linted.close()

  const off = await withOpenApi({ openapi: false })
  off.get('/v1/a', handler)
  await t.resolves(async () => { await off.ready() }, 'openapi: false')
  await off.close()
})

t.test('registered before openapi: the document cannot be linted, and the error says to register lint after it', async t => {
  const message = 'svc-lint: the OpenAPI document cannot be linted at ready(): register the lint plugin after openapi (or @fastify/swagger), or with { openapi: false }'
  const early = await build({})
  await early.register(openapi)
  await t.rejects(async () => { await early.ready() }, { message }, 'mode error: the boot fails, naming the order')
  await early.close()

  const lines: string[] = []
  const warned = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await warned.register(problem)
  await warned.register(lint, { mode: 'warn' })
  await warned.register(openapi)
  await t.resolves(async () => { await warned.ready() }, 'mode warn: the boot goes on')
  t.strictSame(lines.map(l => (JSON.parse(l) as { msg: string }).msg), [message], 'and says why the document was not linted')
  await warned.close()

  const off = await build({ openapi: false })
  await off.register(openapi)
  await t.resolves(async () => { await off.ready() }, 'openapi: false needs no order')
  await off.close()
})
