import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { lintOpenApi } from './openapi.js'
import { lintRouteConfig, lintRouteSchema } from './route.js'
import { RULES, type RuleSwitches, type Violation } from './rules.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { once } from '../shared/dependencies.js'

export { lintSchema, type SchemaLintOptions } from './schema.js'
export { lintOpenApi, type OpenApiLintOptions } from './openapi.js'
export { lintRouteConfig, lintRouteSchema } from './route.js'
export { RULES, RULE_IDS, type RuleId, type RuleSwitches, type Violation } from './rules.js'
export { formatReport, formatJson, countByRule } from './report.js'

export interface LintPluginOptions {
  /** `error` throws at registration (and from `ready()`); `warn` logs with `fastify.log.warn`. Default `error`. */
  mode?: 'error' | 'warn'
  /** Rules switched off by id, e.g. `{ 'array-plural': false }`. Default: all on. */
  rules?: RuleSwitches
  /** Lints the whole OpenAPI document at `onReady` when `fastify.swagger` exists. Default true. */
  openapi?: boolean
}

const defaults = { mode: 'error' as const, openapi: true }
const OPTION_KEYS: OptionKeys<LintPluginOptions> = { mode: true, rules: true, openapi: true }

function validate (opts: LintPluginOptions): void {
  refuseUnknownOptions('lint', opts, OPTION_KEYS)
  if (opts.mode !== undefined && opts.mode !== 'error' && opts.mode !== 'warn') {
    throw new TypeError(`lint plugin: mode must be 'error' or 'warn', got ${JSON.stringify(opts.mode)}`)
  }
  for (const [id, on] of Object.entries(opts.rules ?? {})) {
    if (!(id in RULES)) throw new TypeError(`lint plugin: rules.${id} is not a rule; the rules are ${Object.keys(RULES).join(', ')}`)
    if (typeof on !== 'boolean') throw new TypeError(`lint plugin: rules.${id} must be a boolean, got ${JSON.stringify(on)}`)
  }
  if (opts.openapi !== undefined && typeof opts.openapi !== 'boolean') {
    throw new TypeError(`lint plugin: openapi must be a boolean, got ${JSON.stringify(opts.openapi)}`)
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` leaves this route's schemas out of the convention linter. */
    lint?: false
  }
}

/** Whether an OpenAPI document (the openapi plugin's @fastify/swagger) is registered already. */
function hasDocument (fastify: FastifyInstance): boolean {
  return typeof (fastify as unknown as { swagger?: unknown }).swagger === 'function'
}

function describe (where: string, violations: Violation[]): string {
  return `svc-lint: ${where} breaks the conventions:\n${violations.map(v => `  ${v.path}: ${v.message} [${v.rule}]`).join('\n')}`
}

// Fastify's `/a/:id` as OpenAPI's `/a/{id}`, to match the document's paths.
function openApiPath (url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/**
 * Lints every route's schemas against the convention as it is registered, and the whole
 * OpenAPI document once the app is ready: mistakes show at startup, not in review.
 * Fastify runs onRoute hooks in registration order, so register this plugin after the
 * plugins whose onRoute hooks complete route schemas (query) and before the routes.
 */
async function lintPlugin (fastify: FastifyInstance, opts: LintPluginOptions): Promise<void> {
  validate(opts)
  const mode = opts.mode ?? defaults.mode
  const checkDocument = opts.openapi ?? defaults.openapi
  const skipped = new Set<string>()

  const report = (where: string, violations: Violation[]): void => {
    if (violations.length === 0) return
    const message = describe(where, violations)
    if (mode === 'error') throw new Error(message)
    fastify.log.warn({ violations }, message)
  }

  // Fastify adds a HEAD route for each GET, with the GET's schemas: what it breaks was
  // reported with the GET (by url, the violations as JSON), so a warning is not logged twice.
  const reportedGets = new Map<string, string>()

  fastify.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method)
    if (route.config?.lint === false) {
      for (const method of methods) skipped.add(`${method.toLowerCase()} ${openApiPath(route.url)}`)
      return
    }
    const violations = [...lintRouteConfig(route.config, opts.rules), ...lintRouteSchema(route.url, route.schema, opts.rules)]
    if (violations.length === 0) return
    const seen = JSON.stringify(violations)
    if (methods.includes('GET')) reportedGets.set(route.url, seen)
    else if (methods.length === 1 && methods[0] === 'HEAD' && reportedGets.get(route.url) === seen) return
    report(`${methods.join(',')} ${route.url}`, violations)
  })

  // Hooks run in registration order, and @fastify/swagger builds the document in an onReady
  // hook of its own: registered after this plugin, the document is not there yet when it is read.
  const documentBefore = hasDocument(fastify)
  fastify.addHook('onReady', async () => {
    const swagger = (fastify as unknown as { swagger?: () => unknown }).swagger
    if (!checkDocument || typeof swagger !== 'function') return
    if (!documentBefore) {
      const message = 'svc-lint: the OpenAPI document cannot be linted at ready(): register the lint plugin after openapi (or @fastify/swagger), or with { openapi: false }'
      if (mode === 'error') throw new Error(message)
      fastify.log.warn(message)
      return
    }
    const document = swagger.call(fastify)
    report('the OpenAPI document', lintOpenApi(document, { rules: opts.rules, skip: (path, method) => skipped.has(`${method} ${path}`) }))
  })
}

export default fp(once('lint', lintPlugin), { fastify: '5.x', name: 'svc-lint' })
