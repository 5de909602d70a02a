import t from 'tap'
import { readFileSync } from 'node:fs'
import * as fastifyModule from 'fastify'
import type { FastifyInstance, FastifyServerOptions, RouteOptions } from 'fastify'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { lintOpenApi } from '../../plugins/lint/openapi.js'
import { lintRouteConfig, lintRouteSchema } from '../../plugins/lint/route.js'
import type { Violation } from '../../plugins/lint/rules.js'

// Counts per rule: a readable diff when the service or an example breaks a rule.
const summary = (violations: Violation[]): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const v of violations) counts[v.rule] = (counts[v.rule] ?? 0) + 1
  return counts
}

/**
 * A Fastify factory that keeps every route it is given, for `lintRoutes` once the app is ready,
 * when the plugins' own onRoute hooks (query) have completed each schema.
 */
function keepingRoutes (routes: RouteOptions[]): typeof fastifyModule.default {
  return ((opts?: FastifyServerOptions): FastifyInstance => {
    const app = fastifyModule.default(opts)
    app.addHook('onRoute', (route) => { routes.push(route) })
    return app
  }) as typeof fastifyModule.default
}

/** What the lint plugin checks as each route is added: its config's media types and its schemas. */
const lintRoutes = (routes: RouteOptions[]): Violation[] => routes.flatMap(route =>
  [...lintRouteConfig(route.config), ...lintRouteSchema(route.url, route.schema)].map(v => ({ ...v, path: `${String(route.method)} ${route.url} ${v.path}` })))

t.test('the reference service\'s routes and OpenAPI document follow the conventions', async t => {
  // The lint plugin in mode error: a route that breaks a rule stops the build, a document that
  // does stops ready; the summary below then names the rules.
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: 'memory' }).config, { lint: true })
  t.teardown(async () => { await app.close() })
  await app.ready()
  t.ok(app.hasPlugin('svc-lint'), 'linted by the plugin')
  const violations = lintOpenApi(app.swagger())
  t.strictSame(summary(violations), {}, 'no violations', { violations: violations.slice(0, 20) })
})

/** Every entry of the package (the root and its subpaths) as its TypeScript source module. */
async function sourceEntries (): Promise<Record<string, unknown>> {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, string | Record<string, string>> }
  const out: Record<string, unknown> = {}
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue
    out[key === '.' ? 'svc-conventions' : `svc-conventions/${key.slice(2)}`] = await import(new URL(`../../${target['svc-conventions-source'] as string}`, import.meta.url).href)
  }
  return out
}

// Each example's build, called as its own test calls it. examples/resource.ts registers the
// lint plugin itself (mode error), so its test proves it: its PGlite start is not paid twice here.
const SECRET = 'an example secret of at least 32 bytes'
const examples: Array<[string, string, (build: (...args: any[]) => Promise<FastifyInstance>) => Promise<FastifyInstance>]> = [
  ['memory-collection', '/books', async build => await build({ logger: false })],
  ['five-minute', '/v1/orders', async build => await build({ logger: false }, SECRET)]
]

for (const [name, url, build] of examples) {
  t.test(`examples/${name}.ts follows the conventions`, async t => {
    const routes: RouteOptions[] = []
    // The examples build their own Fastify: the wrapped factory keeps each route.
    const example = await t.mockImport<{ build: (...args: any[]) => Promise<FastifyInstance> }>(`../../examples/${name}.js`, {
      fastify: { ...fastifyModule, default: keepingRoutes(routes) },
      // The sources, not the package's built dist/ (which the mock loader would resolve to).
      ...await sourceEntries()
    })
    const app = await build(example.build)
    t.teardown(async () => { await app.close() })
    await app.ready()
    t.ok(routes.some(r => r.url === url), 'the wrapped factory saw the example\'s routes')
    const found = lintRoutes(routes)
    t.strictSame(summary(found), {}, 'no violations in the route schemas', { violations: found.slice(0, 20) })
    if (app.hasDecorator('swagger')) {
      const violations = lintOpenApi(app.swagger())
      t.strictSame(summary(violations), {}, 'no violations in the OpenAPI document', { violations: violations.slice(0, 20) })
    }
  })
}
