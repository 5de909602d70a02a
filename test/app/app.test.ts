import t, { type Test } from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../app.js'
import { DEV_CURSOR_SECRET, loadConfig } from '../../config.js'
import { tokenCommand } from '../../bin/token.js'
import { signToken } from 'svc-conventions/auth'
import { answerOf, silentRedis } from '../rate-limit/redis.js'

const UA = { 'user-agent': 'app-test/1 (tap)' }

async function start (t: Test, env: Record<string, string> = {}): Promise<{ url: string, token: string }> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: 'memory', CORS_ORIGINS: 'https://app.example.com', ...env })
  const app = await buildApp(config)
  app.get('/v1/probe', { config: { auth: { scopes: ['authors:read'] } } }, async (request) => ({ sub: request.principal?.sub, context: request.executionContext }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, token: tokenCommand(['--sub', 'user-1', '--scope', 'authors:read'], { LOG_LEVEL: 'silent', ...env }) }
}

t.test('the composed plugins over real HTTP', async t => {
  const { url, token } = await start(t)
  const auth = { ...UA, authorization: `Bearer ${token}` }

  const health = await fetch(`${url}/health`, { headers: { 'user-agent': '' } })
  t.equal(health.status, 200, '/health needs neither a token nor a User-Agent')
  t.strictSame(await health.json(), { status: 'UP' })

  const ok = await fetch(`${url}/v1/probe`, { headers: { ...auth, 'x-request-id': 'r-1', 'svc-execution-context': 'preprod' } })
  t.equal(ok.status, 200)
  t.strictSame(await ok.json(), { sub: 'user-1', context: 'preprod' })
  t.equal(ok.headers.get('x-request-id'), 'r-1')
  t.equal(ok.headers.get('svc-execution-context'), 'preprod')
  t.equal(ok.headers.get('cache-control'), 'no-store')
  t.equal(ok.headers.get('content-language'), 'en-US')

  const table: Array<[string, RequestInit, number, string]> = [
    ['no User-Agent', { headers: { authorization: `Bearer ${token}`, 'user-agent': '' } }, 403, 'Forbidden'],
    ['no token', { headers: UA }, 401, 'Invalid Request'],
    ['lowercase bearer', { headers: { ...UA, authorization: `bearer ${token}` } }, 401, 'Invalid Request'],
    ['bad token', { headers: { ...UA, authorization: 'Bearer abc.def.ghi' } }, 401, 'Invalid Token'],
    ['XML only', { headers: { ...auth, accept: 'application/xml' } }, 406, 'Not Acceptable'],
    ['unknown context', { headers: { ...auth, 'svc-execution-context': 'staging' } }, 400, 'Invalid Data'],
    ['bad idempotency key on GET', { headers: { ...auth, 'svc-idempotency-key': 'x' } }, 400, 'Invalid Data']
  ]
  for (const [name, init, status, title] of table) {
    const res = await fetch(`${url}/v1/probe`, init)
    t.equal(res.status, status, name)
    t.match(res.headers.get('content-type'), /^application\/problem\+json/, `${name}: problem media type`)
    const body = await res.json() as Record<string, unknown>
    t.equal(body.title, title, `${name}: title`)
    t.equal(body.status, status, `${name}: status in body`)
    t.type(body.requestId, 'string', `${name}: requestId`)
  }

  const options = await fetch(`${url}/v1/probe`, { method: 'OPTIONS', headers: UA })
  t.equal(options.status, 204)
  t.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS')
  const wrong = await fetch(`${url}/v1/probe`, { method: 'DELETE', headers: UA })
  t.equal(wrong.status, 405)
  t.equal(wrong.headers.get('allow'), 'GET, HEAD, OPTIONS')
  const unknown = await fetch(`${url}/v1/nothing`, { headers: UA })
  t.equal(unknown.status, 404)
  t.equal(((await unknown.json()) as { instance: string }).instance, '/v1/nothing')

  const preflight = await fetch(`${url}/v1/probe`, { method: 'OPTIONS', headers: { ...UA, origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } })
  t.equal(preflight.status, 204, 'a preflight needs no token')
  t.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com')
  const refused = await fetch(`${url}/v1/probe`, { method: 'OPTIONS', headers: { ...UA, origin: 'https://evil.example.com', 'access-control-request-method': 'GET' } })
  t.equal(refused.status, 403)
  t.equal(refused.headers.get('svc-cors-error'), 'bad origin')
})

t.test('REDIS_URL naming a Redis that connects and never answers: 503 problems, not requests held for ever', async t => {
  // The token-guessing throttle (auth) and the rate limit each ask it; each gives up after its command timeout.
  const { url, token } = await start(t, { REDIS_URL: await silentRedis(t) })
  // ioredis prints the errors of a client without an 'error' listener to stderr, outside the log.
  const printed: unknown[][] = []
  const consoleError = console.error
  console.error = (...args: unknown[]) => { printed.push(args) }
  t.teardown(() => { console.error = consoleError })
  for (const [name, headers] of [['a token', { ...UA, authorization: `Bearer ${token}` }], ['a bad token', { ...UA, authorization: 'Bearer abc.def.ghi' }]] as const) {
    const res = await answerOf(fetch(`${url}/v1/probe`, { headers }))
    if (res === 'no answer') return t.fail(`${name}: no answer, the request waits for Redis for ever`)
    t.equal(res.status, 503, name)
    t.equal(res.headers.get('retry-after'), '1', `${name}: Retry-After`)
    t.match(res.headers.get('content-type'), /^application\/problem\+json/, `${name}: a problem`)
  }
  t.strictSame(printed, [], 'every Redis client\'s errors go to the log, none to stderr')
})

t.test('HTTP/1.0 is refused with a problem', async t => {
  const { url } = await start(t)
  const port = Number(new URL(url).port)
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end('GET /v1/probe HTTP/1.0\r\nUser-Agent: raw/1\r\n\r\n'))
    let data = ''
    socket.on('data', (chunk) => { data += String(chunk) })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1\.1 400 /, 'a client error, never a 5xx')
  t.match(raw, /application\/problem\+json/)
  t.match(raw, /"title":"Bad Request"/, 'the title of its status (conventions: Common errors)')
  t.match(raw, /HTTP\/1\.0/, 'the detail names the version')
})

t.test('the OpenAPI document of the service', async t => {
  const { url } = await start(t)
  const res = await fetch(`${url}/openapi.json`, { headers: UA })
  t.equal(res.status, 200)
  const doc = await res.json() as { openapi: string, paths: Record<string, unknown>, components: { securitySchemes: Record<string, unknown> } }
  t.equal(doc.openapi, '3.1.0')
  t.ok(doc.components.securitySchemes.bearerAuth)
  t.ok(doc.paths['/v1/probe'])
})

t.test('configuration: production needs real secrets; bad values are named', async t => {
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), /AUTH_JWT_SECRET is required[\s\S]*WEBHOOK_SECRET_SCANNER is required[\s\S]*CURSOR_SECRET is required/)
  const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ PORT: 'eighty' }, /^- PORT: Expected integer \(got "eighty"\)$/m],
    [{ RATE_LIMIT_MAX: 'abc' }, /^- RATE_LIMIT_MAX: Expected integer \(got "abc"\)$/m],
    [{ CORS_ORIGINS: '*' }, /^- CORS_ORIGINS: .* \(got "\*"\)$/m],
    [{ EXECUTION_CONTEXTS: 'Bad Context' }, /^- EXECUTION_CONTEXTS: .* \(got "Bad Context"\)$/m],
    [{ AUTH_JWT_SECRET: 'short-secret-xyz' }, /^- AUTH_JWT_SECRET: expected at least 32 bytes \(got 16 bytes, not shown\)$/m],
    [{ DATABASE_URL: 'mysql://user:hunter2@db/x' }, /^- DATABASE_URL: .* \(got 25 characters, not shown\)$/m],
    [{ DATABASE_STATEMENT_TIMEOUT: '-5' }, /^- DATABASE_STATEMENT_TIMEOUT: Expected integer to be greater or equal to 0 \(got "-5"\)$/m],
    [{ DATABASE_STATEMENT_TIMEOUT: '2s' }, /^- DATABASE_STATEMENT_TIMEOUT: Expected integer \(got "2s"\)$/m],
    [{ CURSOR_SECRET: 'a-cursor-secret-long-enough,short' }, /^- CURSOR_SECRET: expected at least 16 bytes \(got 5 bytes, not shown\)$/m],
    [{ DATABASE_PGBOUNCER: 'yes' }, /^- DATABASE_PGBOUNCER: Expected boolean \(got "yes"\)$/m],
    [{ CURSOR_SECRET: ' , ' }, /^- CURSOR_SECRET: Expected array length to be greater or equal to 1 \(got 3 characters, not shown\)$/m],
    // A variable with a fixed set of values lists them; one of several forms names the forms.
    [{ LOG_LEVEL: 'verbose' }, /^- LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)$/m],
    [{ DATABASE_URL: 'mysql://db/x' }, /^- DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\/ URL \(got 12 characters, not shown\)$/m],
    [{ AUTH_JWKS_URL: 'ftp://idp/jwks' }, /^- AUTH_JWKS_URL: expected an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/idp\/jwks"\)$/m],
    [{ REDIS_URL: 'http://cache' }, /^- REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL \(got 12 characters, not shown\)$/m],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' }, /^- OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/collector"\)$/m],
    [{ TRUST_PROXY: '0' }, /^- TRUST_PROXY: a hop count is not taken: Fastify trusts no proxy for one, since it cannot tell the proxy from a client that reaches the service directly; give the proxies' addresses or ranges, such as 10\.0\.0\.0\/8 \(got "0"\)$/m],
    [{ TRUST_PROXY: '2' }, /^- TRUST_PROXY: a hop count is not taken: .* \(got "2"\)$/m],
    // Addresses Fastify would refuse at its start with a message that names no variable.
    [{ TRUST_PROXY: 'proxy.internal' }, /^- TRUST_PROXY: expected true, false, or comma-separated addresses or ranges of the proxies \(got "proxy\.internal"\)$/m],
    [{ TRUST_PROXY: '10.0.0.1, 10.0.0.0/33' }, /^- TRUST_PROXY: expected .* \(got "10\.0\.0\.1, 10\.0\.0\.0\/33"\)$/m],
    [{ TRUST_PROXY: '10.0.0.0/0' }, /^- TRUST_PROXY: expected .* \(got "10\.0\.0\.0\/0"\)$/m],
    [{ TRUST_PROXY: '::1/129' }, /^- TRUST_PROXY: expected .* \(got "::1\/129"\)$/m],
    [{ TRUST_PROXY: '10.0.0.0/255.0.255.0' }, /^- TRUST_PROXY: expected .* \(got "10\.0\.0\.0\/255\.0\.255\.0"\)$/m],
    [{ TRUST_PROXY: '10.0.0.1,' }, /^- TRUST_PROXY: expected .* \(got "10\.0\.0\.1,"\)$/m],
    [{ CORS_ORIGINS: 'https://a.example/path, *' }, /^- CORS_ORIGINS: expected comma-separated origins of a scheme and a host, such as https:\/\/app\.example\.com \(got "https:\/\/a\.example\/path, \*"\)$/m],
    [{ SHUTDOWN_TIMEOUT: '0' }, /^- SHUTDOWN_TIMEOUT: Expected integer to be greater or equal to 1 \(got "0"\)$/m],
    // Origins the cors plugin would refuse at start naming its option, not the variable: an origin is as a browser sends it.
    [{ CORS_ORIGINS: 'https://app.example.com:443' }, /^- CORS_ORIGINS: expected comma-separated origins .* \(got "https:\/\/app\.example\.com:443"\)$/m],
    [{ CORS_ORIGINS: 'https://a.example, https://App.example.com' }, /^- CORS_ORIGINS: expected .* \(got "https:\/\/a\.example, https:\/\/App\.example\.com"\)$/m],
    [{ CORS_ORIGINS: 'https://a.example:99999' }, /^- CORS_ORIGINS: expected .* \(got "https:\/\/a\.example:99999"\)$/m]
  ]
  for (const [env, message] of bad) t.throws(() => loadConfig(env), message, String(Object.keys(env)[0]))
  // Milliseconds that reach a timer (or PostgreSQL's statement_timeout): Node takes a delay past
  // 2147483647 as 1 ms, so a stop would give up at once, a statement fail at once, a lease be renewed every millisecond.
  const timers: Array<[string, keyof ReturnType<typeof loadConfig>['config']]> = [
    ['DATABASE_STATEMENT_TIMEOUT', 'databaseStatementTimeout'], ['JOB_LEASE_MILLIS', 'jobLeaseMillis'], ['SHUTDOWN_TIMEOUT', 'shutdownTimeout']
  ]
  for (const [variable, key] of timers) {
    t.equal(loadConfig({ [variable]: '2147483647' }).config[key], 2147483647, `${variable}=2147483647, the longest a timer waits`)
    for (const value of ['2147483648', '3000000000']) {
      t.throws(() => loadConfig({ [variable]: value }), { message: `Invalid configuration:\n- ${variable}: Expected integer to be less or equal to 2147483647 (got "${value}")` }, `${variable}=${value}`)
    }
  }
  t.strictSame(loadConfig({ CURSOR_SECRET: 'the-new-cursor-secret-first, the-old-cursor-secret-after' }).config.cursorSecret, ['the-new-cursor-secret-first', 'the-old-cursor-secret-after'], 'CURSOR_SECRET: a comma-separated list of keys, the signing one first')
  t.strictSame(loadConfig({}).config.cursorSecret, [DEV_CURSOR_SECRET], 'the development key alone')
  t.equal(loadConfig({ DATABASE_PGBOUNCER: 'true' }).config.databasePgbouncer, true)
  t.equal(loadConfig({}).config.databasePgbouncer, false)
  const { config: badRetention } = loadConfig({ WEBHOOK_DELIVERY_RETENTION: 'a while', DATA_DIR: 'memory', LOG_LEVEL: 'silent' })
  await t.rejects(buildApp(badRetention), /WEBHOOK_DELIVERY_RETENTION: must be a duration such as "7 days" or "36h" \(got "a while"\)/)
  // A window the rate limit cannot take is named by its variable, as every other bad value is.
  for (const window of ['a while', '0', '0.1 ms', '5 fortnights']) {
    const { config: badWindow } = loadConfig({ RATE_LIMIT_WINDOW: window, DATA_DIR: 'memory', LOG_LEVEL: 'silent' })
    await t.rejects(buildApp(badWindow), { message: `Invalid configuration:\n- RATE_LIMIT_WINDOW: must be milliseconds or a duration such as "1 minute" or "30s" (got ${JSON.stringify(window)})` }, `RATE_LIMIT_WINDOW=${window}`)
  }
  t.throws(() => loadConfig({ NODE_ENV: 'production', AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' }), /^(?![\s\S]*AUTH_JWT_SECRET)[\s\S]*WEBHOOK_SECRET_SCANNER is required[\s\S]*CURSOR_SECRET is required/, 'with a JWKS, no HS256 secret is needed; the others still are')
  let two = ''
  try { loadConfig({ CORS_ORIGINS: 'x, y' }) } catch (err) { two = (err as Error).message }
  t.equal(two.split('\n').filter((line) => line.startsWith('- CORS_ORIGINS')).length, 1, 'one line per variable, however many of its items are wrong')
  for (const secret of ['short-secret-xyz', 'hunter2']) {
    let text = ''
    try { loadConfig({ AUTH_JWT_SECRET: secret, DATABASE_URL: `mysql://u:${secret}@db/x` }) } catch (err) { text = (err as Error).message }
    t.notMatch(text, secret, 'a secret is never repeated in the message')
  }
  const { config, warnings } = loadConfig({ TRUST_PROXY: '10.0.0.1', EXECUTION_CONTEXTS: 'qa, load-test', AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' })
  t.equal(config.trustProxy, '10.0.0.1')
  t.strictSame(config.executionContexts, ['qa', 'load-test'])
  t.equal(config.jwksUrl, 'https://idp.example.com/jwks.json')
  t.notOk(warnings.some(w => /AUTH_JWT_SECRET/.test(w)), 'no secret warning when JWKS is used')
  t.equal(config.databaseStatementTimeout, 30_000, 'a statement waits 30 s by default')
  t.equal(loadConfig({ DATABASE_STATEMENT_TIMEOUT: '0' }).config.databaseStatementTimeout, 0)
  t.strictSame(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173, https://[::1]:8443' }).config.corsOrigins, ['https://app.example.com', 'http://localhost:5173', 'https://[::1]:8443'])
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).config.trustProxy, true)
  t.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).config.trustProxy, '10.0.0.0/8')
  // Every form Fastify takes: addresses, ranges (prefix length or IPv4 netmask), proxy-addr's names.
  for (const value of ['10.0.0.1', '10.0.0.0/8, 192.168.0.0/255.255.0.0', 'loopback, linklocal, uniquelocal', '::1, fc00::/7', '::ffff:10.0.0.1']) {
    t.equal(loadConfig({ TRUST_PROXY: value }).config.trustProxy, value, `TRUST_PROXY=${value}`)
  }
})

t.test('configuration: a variable set empty takes its default, as an unset one does', async t => {
  const defaults = loadConfig({}).config
  const cases: Array<[string, keyof typeof defaults]> = [
    ['HOST', 'host'], ['PORT', 'port'], ['DATA_DIR', 'dataDir'], ['DATABASE_URL', 'databaseUrl'], ['MIGRATIONS_DIR', 'migrationsDir'],
    ['RATE_LIMIT_MAX', 'rateLimitMax'], ['RATE_LIMIT_WINDOW', 'rateLimitWindow'], ['LOG_LEVEL', 'logLevel'], ['SHUTDOWN_TIMEOUT', 'shutdownTimeout'],
    ['WEBHOOK_DELIVERY_RETENTION', 'webhookDeliveryRetention'], ['SERVICE_NAME', 'serviceName'], ['CURSOR_SECRET', 'cursorSecret']
  ]
  for (const [variable, key] of cases) {
    let config
    try { ({ config } = loadConfig({ [variable]: '' })) } catch (err) { t.fail(`${variable}="" refused: ${(err as Error).message}`); continue }
    t.strictSame(config[key], defaults[key], `${variable}=""`)
  }
})

t.test('configuration: insecure webhook targets are announced as a warning, as the development secrets are', async t => {
  const insecure = loadConfig({ WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' }).warnings.filter(w => w.startsWith('WEBHOOK_ALLOW_INSECURE_TARGETS'))
  t.strictSame(insecure, ['WEBHOOK_ALLOW_INSECURE_TARGETS=true: webhook subscriptions may name http:// URLs and internal addresses, so a client can make the service call its own network (local development and tests only, never in production)'])
  t.notOk(loadConfig({}).warnings.some(w => w.includes('WEBHOOK_ALLOW_INSECURE_TARGETS')), 'not when unset')
  t.notOk(loadConfig({ WEBHOOK_ALLOW_INSECURE_TARGETS: 'false' }).warnings.some(w => w.includes('WEBHOOK_ALLOW_INSECURE_TARGETS')), 'not when false')
})

t.test('configuration: AUTH_ISSUER and AUTH_AUDIENCE are the iss and aud a token must carry', async t => {
  const { config, warnings } = loadConfig({ AUTH_ISSUER: 'https://idp.example.com/, https://old-idp.example.com/', AUTH_AUDIENCE: 'documents-api', AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' })
  t.strictSame([config.authIssuer, config.authAudience], [['https://idp.example.com/', 'https://old-idp.example.com/'], ['documents-api']])
  t.notOk(warnings.some(w => w.startsWith('AUTH_JWKS_URL')), 'no warning with an audience')
  t.strictSame(loadConfig({ AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' }).warnings.filter(w => w.startsWith('AUTH_JWKS_URL')),
    ['AUTH_JWKS_URL without AUTH_AUDIENCE: a token the identity provider issued for any other service is accepted too (set AUTH_AUDIENCE, and AUTH_ISSUER, to the values its tokens for this service carry)'])
  t.notOk(loadConfig({}).warnings.some(w => w.startsWith('AUTH_JWKS_URL')), 'nor with the HS256 secret, which only this service signs with')
  t.strictSame([loadConfig({}).config.authIssuer, loadConfig({}).config.authAudience], [[], []], 'unset: neither is checked')

  const env = { AUTH_ISSUER: 'https://idp.example.com/, https://old-idp.example.com/', AUTH_AUDIENCE: 'documents-api, documents-admin' }
  const { url, token } = await start(t, env)
  const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
  t.strictSame([payload.iss, payload.aud], ['https://idp.example.com/', ['documents-api', 'documents-admin']], 'npm run token signs with the configured claims')
  const secret = loadConfig({}).config.jwtSecret
  const cases: Array<[string, Partial<{ issuer: string, audience: string | string[] }>, number]> = [
    ['npm run token\'s', { issuer: 'https://idp.example.com/', audience: ['documents-api', 'documents-admin'] }, 200],
    ['the second issuer, one audience', { issuer: 'https://old-idp.example.com/', audience: 'documents-admin' }, 200],
    ['another service\'s audience', { issuer: 'https://idp.example.com/', audience: 'billing-api' }, 401],
    ['another issuer', { issuer: 'https://evil.example.com/', audience: 'documents-api' }, 401],
    ['no aud', { issuer: 'https://idp.example.com/' }, 401],
    ['no iss', { audience: 'documents-api' }, 401]
  ]
  for (const [name, claims, status] of cases) {
    const bearer = signToken({ secret, sub: 'user-1', scope: 'authors:read', ...claims })
    const res = await fetch(`${url}/v1/probe`, { headers: { ...UA, authorization: `Bearer ${bearer}` } })
    t.equal(res.status, status, name)
    if (status === 401) t.match(await res.json(), { status: 401, title: 'Invalid Token' }, `${name}: the token is named`)
  }
})

t.test('npm run token prints a verifiable token with the asked claims', async t => {
  const token = tokenCommand(['--sub', 'alice', '--scope', 'documents:read', '--expires-in', '120'], { LOG_LEVEL: 'silent' })
  const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
  t.equal(payload.sub, 'alice')
  t.equal(payload.scope, 'documents:read')
  t.ok(Math.abs((payload.exp as number) - (Date.now() / 1000 + 120)) < 5)
  t.throws(() => tokenCommand(['--nope'], {}), /nope/)
})
