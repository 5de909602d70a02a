import t from 'tap'
import * as fastifyModule from 'fastify'
import type { FastifyServerOptions, RouteOptions } from 'fastify'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { lintRouteSchema } from '../../plugins/lint/route.js'
import type { Violation } from '../../plugins/lint/rules.js'

// Counts per rule: a readable diff when the service breaks rules. The todo marks stay until
// the findings reported to the lead are fixed in the plugins that produce them.
// What the reference service and the example break today (reported to the lead): these
// rules, and the draft RateLimit-* response headers, which are neither standard nor Svc-.
// Everything else is asserted clean now, so a regression there fails at once.
const KNOWN_RULES: ReadonlySet<string> = new Set(['string-max-length', 'integer-range', 'decimal-string', 'date-time-name', 'identifier-string'])
const known = (v: Violation): boolean => KNOWN_RULES.has(v.rule) || (v.rule === 'header-name' && /\/headers\/ratelimit-[a-z]+$/.test(v.path))

const summary = (violations: Violation[]): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const v of violations) counts[v.rule] = (counts[v.rule] ?? 0) + 1
  return counts
}

t.test('the reference service\'s OpenAPI document follows the conventions', async t => {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: 'memory' }).config)
  t.teardown(async () => { await app.close() })
  await app.ready()
  const violations = lintOpenApi(app.swagger())
  t.same(violations.filter(v => !known(v)), [], 'no violation of the other rules')
  t.same(summary(violations), {}, 'no violations', { todo: 'the reference service breaks rules the lint finds: see the lint helper\'s report', violations: violations.slice(0, 20) })
})

t.test('the examples\' routes follow the conventions', async t => {
  const routes: RouteOptions[] = []
  // The examples build their own Fastify: a wrapped factory keeps each route, linted once the
  // app is ready, when the plugins' own onRoute hooks (query) have completed its schema.
  const lintedFastify = (opts?: FastifyServerOptions): ReturnType<typeof fastifyModule.default> => {
    const app = fastifyModule.default(opts)
    app.addHook('onRoute', (route) => { routes.push(route) })
    return app
  }
  const example = await t.mockImport<typeof import('../../examples/memory-collection.js')>('../../examples/memory-collection.js', {
    fastify: { ...fastifyModule, default: lintedFastify }
  })
  const app = await example.build({ logger: false })
  await app.ready()
  t.ok(routes.some(r => r.url === '/books'), 'the wrapped factory saw the example\'s routes')
  const found = routes.flatMap(route => lintRouteSchema(route.url, route.schema).map(v => ({ ...v, path: `${String(route.method)} ${route.url} ${v.path}` })))
  t.same(found.filter(v => !known(v)), [], 'no violation of the other rules')
  t.same(summary(found), {}, 'no violations', { todo: 'examples/memory-collection.ts breaks rules the lint finds: see the lint helper\'s report', violations: found.slice(0, 20) })
  await app.close()
})
