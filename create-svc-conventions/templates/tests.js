import { example } from '../lib/fields.js'
import { exp, exportsLine, imp, js, literal, ts, withArticle } from '../lib/code.js'

/** test/helper.(ts|js): the service on an empty database in memory, and the headers of a client. */
export function helper (ctx) {
  return `${imp(ctx, 'fastify', { types: ['FastifyInstance'] })}${imp(ctx, 'svc-conventions/auth', { names: ['signToken'] })}${imp(ctx, '../config.js', { names: ['loadConfig'] })}${imp(ctx, '../app.js', { names: ['buildApp'] })}${imp(ctx, '../resources/index.js', { names: ['scopes'] })}
${js(ctx, '/** @returns {Promise<import(\'fastify\').FastifyInstance>} */\n')}${ts(ctx, '/** The service on an empty database in memory, quiet. The caller closes it. */\n')}${exp(ctx)}async function build ()${ts(ctx, ': Promise<FastifyInstance>')} {
  const { config } = loadConfig({ DATA_DIR: 'memory', LOG_LEVEL: 'silent' })
  return await buildApp(config)
}

${js(ctx, '/**\n * @param {string[]} [scope]\n * @returns {Record<string, string>}\n */\n')}${ts(ctx, '/** What every /v1 request carries: a token (with every scope unless told) and a User-Agent of the form <product>/<major-version>. */\n')}${exp(ctx)}function headers (scope${ts(ctx, ': string[]')} = scopes)${ts(ctx, ': Record<string, string>')} {
  const { config } = loadConfig({})
  return { authorization: \`Bearer \${signToken({ secret: config.jwtSecret, sub: 'tester', scope })}\`, 'user-agent': 'tests/1' }
}
${exportsLine(ctx, ['build', 'headers'])}`
}

/** test/<collection>.test.(ts|js): the resource's routes answer as the convention says. */
export function resourceTest (ctx) {
  const r = ctx.resource
  const path = `/v1/${r.collection}`
  return `${imp(ctx, 'node:test', { names: ['after', 'before', 'test'] })}${imp(ctx, 'node:assert/strict', { def: 'assert' })}${imp(ctx, 'fastify', { types: ['FastifyInstance'] })}${imp(ctx, './helper.js', { names: ['build', 'headers'] })}
const ${r.name} = ${literal(example(r))}
${js(ctx, '/** @type {import(\'fastify\').FastifyInstance} */\n')}let app${ts(ctx, ': FastifyInstance')}
before(async () => { app = await build() })
after(async () => { await app.close() })

test('POST creates ${withArticle(r.name)}, GET reads it back with its ETag', async () => {
  const created = await app.inject({ method: 'POST', url: '${path}', headers: headers(), payload: ${r.name} })
  assert.equal(created.statusCode, 201, created.body)
  const body = created.json()
  assert.equal(created.headers.location, \`${path}/\${body.id}\`)
  for (const [field, value] of Object.entries(${r.name})) assert.deepEqual(body[field], value, field)
  const read = await app.inject({ url: created.headers.location, headers: headers() })
  assert.equal(read.statusCode, 200)
  assert.equal(read.headers.etag, created.headers.etag)
})

test('GET on the collection answers a page in the collection envelope; POST …/search too', async () => {
  const created = await app.inject({ method: 'POST', url: '${path}', headers: headers(), payload: ${r.name} })
  const page = await app.inject({ url: '${path}?limit=1&ordering=-createdDateTime', headers: headers() })
  assert.equal(page.statusCode, 200)
  assert.equal(page.json().results[0].id, created.json().id)
  assert.equal(page.json().paging.limit, 1)
  const searched = await app.inject({ method: 'POST', url: '${path}/search', headers: headers(), payload: { ordering: ['-createdDateTime'], paging: { limit: 1 } } })
  assert.equal(searched.statusCode, 200)
  assert.deepEqual(searched.json().results, page.json().results)
})

test('PATCH on the collection applies bulk operations, each succeeding or failing alone', async () => {
  const res = await app.inject({
    method: 'PATCH',
    url: '${path}',
    headers: headers(),
    payload: { operations: [{ action: 'CREATE', entity: ${r.name} }, { action: 'CREATE', entity: { ...${r.name}, colour: 'red' } }] }
  })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().status, 'PARTIAL')
  assert.deepEqual(res.json().operations.map((o${ts(ctx, ': { result: { status: string } }')}) => o.result.status), ['SUCCEEDED', 'FAILED'])
})

test('refusals are problems: a bad body 400, no User-Agent 403, no token 401, no write scope 403', async () => {
  const bad = await app.inject({ method: 'POST', url: '${path}', headers: headers(), payload: { ...${r.name}, colour: 'red' } })
  assert.equal(bad.statusCode, 400)
  assert.match(String(bad.headers['content-type']), /^application\\/problem\\+json/)
  assert.equal(bad.json().title, 'Invalid Data')
  const { 'user-agent': _, ...noAgent } = headers()
  assert.equal((await app.inject({ method: 'POST', url: '${path}', headers: noAgent, payload: ${r.name} })).statusCode, 403)
  assert.equal((await app.inject({ url: '${path}', headers: { 'user-agent': 'tests/1' } })).statusCode, 401)
  assert.equal((await app.inject({ method: 'POST', url: '${path}', headers: headers(['${r.collection}:read']), payload: ${r.name} })).statusCode, 403)
})
`
}

/** test/config.test.(ts|js): production refuses the development values. */
export function configTest (ctx) {
  return `${imp(ctx, 'node:test', { names: ['test'] })}${imp(ctx, 'node:assert/strict', { def: 'assert' })}${imp(ctx, '../config.js', { names: ['loadConfig'] })}
const SECRETS = { AUTH_JWT_SECRET: 'a production secret of at least 32 characters', CURSOR_SECRET: 'another secret of 16+ characters' }

test('in development, the secrets have defaults, with a warning', () => {
  const { config, warnings } = loadConfig({})
  assert.equal(config.production, false)
  assert.equal(warnings.length, 2)
})

test('in production, the secrets are required and the data must outlive the process', () => {
  assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /AUTH_JWT_SECRET is required[^]*CURSOR_SECRET is required/)
  assert.throws(() => loadConfig({ NODE_ENV: 'production', ...SECRETS, DATA_DIR: 'memory' }), /DATA_DIR=memory/)
  assert.throws(() => loadConfig({ NODE_ENV: 'production', ...SECRETS, AUTH_JWT_SECRET: 'short' }), /AUTH_JWT_SECRET: at least 32 bytes \\(got 5, not shown\\)/)
  const { config, warnings } = loadConfig({ NODE_ENV: 'production', ...SECRETS })
  assert.equal(config.jwtSecret, SECRETS.AUTH_JWT_SECRET)
  assert.deepEqual(warnings, [])
})

test('the size of a secret counts bytes, as the plugins count them; only CURSOR_SECRET is a list', () => {
  assert.equal(loadConfig({ AUTH_JWT_SECRET: '€'.repeat(11) }).config.jwtSecret, '€'.repeat(11), '11 characters of 3 bytes each')
  assert.throws(() => loadConfig({ AUTH_JWT_SECRET: 'é'.repeat(15) }), /AUTH_JWT_SECRET: at least 32 bytes \\(got 30, not shown\\)/)
  assert.equal(loadConfig({ AUTH_JWT_SECRET: 'one secret, with commas, of 32 bytes or more' }).config.jwtSecret, 'one secret, with commas, of 32 bytes or more')
  assert.throws(() => loadConfig({ CURSOR_SECRET: 'a cursor key long enough, short' }), /CURSOR_SECRET: at least 16 bytes \\(got 5, not shown\\)/)
})

test('a bad value is named, every one at once', () => {
  assert.throws(() => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }), /PORT[^]*DATABASE_URL[^]*LOG_LEVEL/)
})
`
}
