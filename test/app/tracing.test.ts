import t from 'tap'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { EXECUTION_CONTEXT_ATTRIBUTE, REQUEST_ID_ATTRIBUTE } from '../../tracing.js'
import { TEST_DATABASE_URL, postgres } from '../support/databases.js'
import { headers } from '../resource/helper.js'

// Tracing (issue 24): off unless configured; configured, one request makes a request span
// with the route, requestId and execution context, and its SQL statements spans beneath it.

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

t.test('off unless configured', async (t) => {
  const { config } = loadConfig({ DATA_DIR: 'memory', LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET })
  t.equal(config.otelEndpoint, null)
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  t.notOk(app.hasRequestDecorator('opentelemetry'), 'no tracing plugin')
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).config.otelEndpoint, 'http://127.0.0.1:4318')
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT/)
})

t.test('one request\'s spans, with the SQL beneath it on a PostgreSQL server', { skip: TEST_DATABASE_URL === undefined ? 'the pg instrumentation needs a PostgreSQL server (TEST_DATABASE_URL)' : false }, async (t) => {
  const exporter = new InMemorySpanExporter()
  const store = await postgres.create(t)
  const { config } = loadConfig({ DATA_DIR: 'memory', LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET })
  const app = await buildApp(config, { store, tracing: { exporter } })
  t.teardown(() => app.close())
  await app.ready()
  exporter.reset()
  const res = await app.inject({ url: '/v1/authors?limit=1', headers: headers({ 'x-request-id': 'trace-me-1', 'svc-execution-context': 'preprod' }) })
  t.equal(res.statusCode, 200)
  const spans = exporter.getFinishedSpans()
  const request = spans.find((s) => s.name === 'request')
  t.ok(request, `a request span among ${spans.map((s) => s.name).join(', ')}`)
  t.match(request?.attributes, { 'http.route': '/v1/authors', [REQUEST_ID_ATTRIBUTE]: 'trace-me-1', [EXECUTION_CONTEXT_ATTRIBUTE]: 'preprod', 'http.request.method': 'GET' })
  const traceId = request?.spanContext().traceId
  const sql = spans.filter((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql')
  // The background workers (jobs, deliveries, purges) query the same server on traces of their own.
  const mine = sql.filter((s) => s.spanContext().traceId === traceId)
  const text = (s: typeof sql[number]): string => String(s.attributes['db.statement'] ?? s.attributes['db.query.text'] ?? '')
  t.ok(mine.some((s) => /FROM\s+"?authors"?/i.test(text(s))), `the page's statement in the request's trace (${mine.map(text).join(' | ')})`)
})
