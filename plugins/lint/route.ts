import { checkCustomHeaderName, declaredHeaderNames } from '../shared/header-names.js'
import { WEBHOOK_PREFIX } from '../webhooks/index.js'
import { checkMediaType } from './media-types.js'
import { checkName } from './names.js'
import { Collector, pointer, type RuleSwitches, type Violation } from './rules.js'
import { jsonValued, lintSchema } from './schema.js'

type Obj = Record<string, unknown>

function obj (value: unknown): Obj {
  return typeof value === 'object' && value !== null ? value as Obj : {}
}

/** The body schemas of one Fastify response entry: `{ content: { type: { schema } } }` or the schema itself. */
function responseBodies (entry: Obj, path: string): Array<[unknown, string]> {
  if (entry.content === undefined) return [[entry, path]]
  return Object.entries(obj(entry.content)).map(([type, media]) => [obj(media).schema, `${path}/content/${pointer(type)}/schema`])
}

/**
 * Lints the schemas of one route as Fastify holds them (`body`, `querystring`, `params`,
 * `headers`, `response`). Paths start at `#/<part>`. Routes under `/_webhooks/` skip their
 * request parts: the payload is the producer's (Webhook consumer endpoints).
 */
export function lintRouteSchema (url: string, schema: unknown, rules?: RuleSwitches): Violation[] {
  const out = new Collector(rules)
  const s = obj(schema)
  const opts = { rules }
  for (const name of declaredHeaderNames(url.startsWith(WEBHOOK_PREFIX) ? { response: s.response } : s)) {
    const why = checkCustomHeaderName(name)
    if (why !== null) out.add('header-name', `#/headers/${pointer(name)}`, `${name}: ${why}`)
  }
  if (!url.startsWith(WEBHOOK_PREFIX)) {
    out.violations.push(...lintSchema(s.body, { ...opts, path: '#/body' }))
    // Header names follow the header rules above, not the property rules: only their schemas here.
    for (const [name, value] of Object.entries(obj(obj(s.headers).properties))) {
      out.violations.push(...lintSchema(value, { ...opts, path: `#/headers/properties/${pointer(name)}` }))
    }
    for (const part of ['querystring', 'params'] as const) {
      // Parameters: the names follow the name rules; their types are what a query string carries.
      for (const [name, value] of Object.entries(obj(obj(s[part]).properties))) {
        const path = `#/${part}/properties/${pointer(name)}`
        checkName(name, path, out)
        if (part === 'querystring' && jsonValued(value)) out.add('query-json', path, `the query parameter "${name}" takes objects: its values would be serialized JSON; make each member a parameter of its own`)
        out.violations.push(...lintSchema(value, { ...opts, path, name }))
      }
    }
  }
  for (const [status, entry] of Object.entries(obj(s.response))) {
    for (const [body, path] of responseBodies(obj(entry), `#/response/${pointer(status)}`)) {
      out.violations.push(...lintSchema(body, { ...opts, path, root: 'response' }))
    }
  }
  return out.violations
}

/**
 * Lints the media types a route's `config.conventions` declares it produces and accepts
 * (Media types: custom types are `application/vnd.svc-<name>[.v<n>]+json` or `+xml`), so a
 * misspelt custom type stops the boot where the route is added. Paths start at `#/config`.
 */
export function lintRouteConfig (config: unknown, rules?: RuleSwitches): Violation[] {
  const out = new Collector(rules)
  const conventions = obj(obj(config).conventions)
  for (const key of ['produces', 'contentTypes'] as const) {
    const types = conventions[key]
    if (!Array.isArray(types)) continue
    types.forEach((type, i) => {
      const why = typeof type === 'string' ? checkMediaType(type) : null
      if (why !== null) out.add('media-type', `#/config/conventions/${key}/${i}`, why)
    })
  }
  return out.violations
}
