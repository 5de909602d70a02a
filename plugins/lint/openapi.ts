import { checkCustomHeaderName } from '../shared/header-names.js'
import { WEBHOOK_PREFIX } from '../webhooks/index.js'
import { checkMediaType } from './media-types.js'
import { checkName } from './names.js'
import { Collector, CONVENTION_SCHEMAS, pointer, type RuleSwitches, type Violation } from './rules.js'
import { lintSchema } from './schema.js'

export interface OpenApiLintOptions {
  /** Rules switched off by id. */
  rules?: RuleSwitches
  /** Operations not to lint, by path and lowercase method (the plugin passes routes with `config.lint: false`). */
  skip?: (path: string, method: string) => boolean
}

type Obj = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const PROBLEM = 'application/problem+json'
// Webhook consumer endpoints: "Segments use kebab-case".
const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

function obj (value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Obj : {}
}

interface Context {
  doc: Obj
  out: Collector
  rules: RuleSwitches | undefined
}

/** Follows a local `$ref` (`#/components/...`), once per level, as OpenAPI allows for parameters, bodies, responses and headers. */
function deref (ctx: Context, value: unknown): Obj {
  let node = obj(value)
  for (let depth = 0; typeof node.$ref === 'string' && depth < 10; depth++) {
    const ref = node.$ref
    node = ref.startsWith('#/')
      ? obj(ref.slice(2).split('/').reduce<unknown>((at, key) => obj(at)[key.replace(/~1/g, '/').replace(/~0/g, '~')], ctx.doc))
      : {}
  }
  return node
}

function lintSchemaAt (ctx: Context, schema: unknown, path: string, root?: 'response', name?: string): void {
  ctx.out.violations.push(...lintSchema(schema, { path, rules: ctx.rules, ...(root === undefined ? {} : { root }), ...(name === undefined ? {} : { name }) }))
}

function lintHeaderName (ctx: Context, name: string, path: string): void {
  const why = checkCustomHeaderName(name)
  if (why !== null) ctx.out.add('header-name', path, `${name}: ${why}`)
}

function lintContent (ctx: Context, content: unknown, path: string, schemas: boolean, root?: 'response'): void {
  for (const [type, media] of Object.entries(obj(content))) {
    const at = `${path}/content/${pointer(type)}`
    const why = checkMediaType(type)
    if (why !== null) ctx.out.add('media-type', at, why)
    // The error object is the convention's own schema.
    if (schemas && type !== PROBLEM) lintSchemaAt(ctx, obj(media).schema, `${at}/schema`, root)
  }
}

function lintParameters (ctx: Context, parameters: unknown, path: string, webhook: boolean, key = 'parameters'): void {
  if (!Array.isArray(parameters)) return
  parameters.forEach((ref, i) => {
    const param = deref(ctx, ref)
    const at = `${path}/${key}/${i}`
    const name = String(param.name)
    // Webhook consumer endpoints: the payload, and the producer's headers, may break the standards.
    if (webhook) return
    if (param.in === 'header') lintHeaderName(ctx, name, at)
    else if (param.in === 'query' || param.in === 'path') checkName(name, at, ctx.out)
    // A parameter described by a media type is serialized in it (OpenAPI 3, Parameter Object `content`).
    const json = Object.keys(obj(param.content)).filter(type => /^application\/(?:[\w.+-]+\+)?json(?:;|$)/i.test(type))
    if (param.in === 'query' && json.length > 0) ctx.out.add('query-json', `${at}/content`, `the query parameter "${name}" is serialized as ${json[0] as string}: make each member a parameter of its own`)
    lintSchemaAt(ctx, param.schema, `${at}/schema`, undefined, name)
  })
}

/** `head`: RFC 9110 §9.3.2, a HEAD response has no content, so its problems are documented without a body. */
function lintResponses (ctx: Context, responses: unknown, path: string, head: boolean): void {
  const statuses = Object.keys(obj(responses))
  // A `default` problem response stands for every status not listed, 4xx and 500 among them.
  const byDefault = statuses.includes('default') && Object.keys(obj(deref(ctx, obj(responses).default).content)).includes(PROBLEM)
  if (!byDefault && !statuses.some(s => s.startsWith('4'))) ctx.out.add('problem-response', `${path}/responses`, 'an operation must declare at least one 4xx problem response')
  if (!byDefault && !statuses.some(s => s === '500' || s.toUpperCase() === '5XX')) ctx.out.add('problem-response', `${path}/responses`, 'an operation must declare the 500 problem response')
  for (const [status, ref] of Object.entries(obj(responses))) {
    const response = deref(ctx, ref)
    const at = `${path}/responses/${pointer(status)}`
    const types = Object.keys(obj(response.content))
    if ((/^[45]/.test(status) || status === 'default') && !head && !types.includes(PROBLEM)) ctx.out.add('problem-response', at, `a ${status} response must have an ${PROBLEM} body`)
    if (status.startsWith('2') && types.includes(PROBLEM)) ctx.out.add('problem-response', at, `a ${status} response never uses the error object`)
    for (const [name, header] of Object.entries(obj(response.headers))) {
      const headerAt = `${at}/headers/${pointer(name)}`
      lintHeaderName(ctx, name, headerAt)
      lintSchemaAt(ctx, deref(ctx, header).schema, `${headerAt}/schema`)
    }
    lintContent(ctx, response.content, at, true, 'response')
  }
}

function lintWebhookPath (ctx: Context, path: string, item: Obj, at: string, methods: readonly string[]): void {
  const segments = path.slice(WEBHOOK_PREFIX.length).split('/')
  // A trailing slash (`/_webhooks/<producer>/`) leaves one empty last segment.
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop()
  const bad = segments.filter(s => !KEBAB_CASE.test(s))
  if (bad.length > 0) ctx.out.add('webhook-path', at, `the webhook path ${path} has segments that are not kebab-case: ${bad.map(s => JSON.stringify(s)).join(', ')}`)
  for (const method of methods) {
    if (obj(item[method])['x-internal'] !== true) {
      ctx.out.add('webhook-internal', `${at}/${method}`, `the webhook consumer ${method.toUpperCase()} ${path} is not marked x-internal: true`)
    }
  }
}

function lintOperation (ctx: Context, path: string, item: Obj, method: string, webhook: boolean): void {
  const op = obj(item[method])
  const at = `#/paths/${pointer(path)}/${method}`
  lintParameters(ctx, op.parameters, at, webhook)
  // Webhook consumer endpoints: "Payload: owned by the producer, may break the API standards."
  lintContent(ctx, deref(ctx, op.requestBody).content, `${at}/requestBody`, !webhook)
  lintResponses(ctx, op.responses, at, method === 'head')
}

/**
 * Lints an OpenAPI 3.x document: the component schemas, and per operation its parameters,
 * request body, responses, headers and media types, and the webhook consumer rules.
 */
export function lintOpenApi (document: unknown, opts: OpenApiLintOptions = {}): Violation[] {
  const doc = obj(document)
  const ctx: Context = { doc, out: new Collector(opts.rules), rules: opts.rules }
  for (const [name, schema] of Object.entries(obj(obj(doc.components).schemas))) {
    if (!CONVENTION_SCHEMAS.has(name)) lintSchemaAt(ctx, schema, `#/components/schemas/${pointer(name)}`)
  }
  // The headers a document states once for every operation (the openapi plugin's `stateOnce`).
  lintParameters(ctx, doc['x-request-headers'], '#', false, 'x-request-headers')
  for (const [name, header] of Object.entries(obj(doc['x-response-headers']))) {
    const at = `#/x-response-headers/${pointer(name)}`
    lintHeaderName(ctx, name, at)
    lintSchemaAt(ctx, deref(ctx, header).schema, `${at}/schema`)
  }
  for (const [path, value] of Object.entries(obj(doc.paths))) {
    const item = deref(ctx, value)
    const webhook = path.startsWith(WEBHOOK_PREFIX)
    const linted = METHODS.filter(method => item[method] !== undefined && opts.skip?.(path, method) !== true)
    // A path and its own parameters belong to its operations: nothing to lint when every one is skipped.
    if (linted.length === 0) continue
    if (webhook) lintWebhookPath(ctx, path, item, `#/paths/${pointer(path)}`, linted)
    lintParameters(ctx, item.parameters, `#/paths/${pointer(path)}`, webhook)
    for (const method of linted) lintOperation(ctx, path, item, method, webhook)
  }
  return ctx.out.violations
}
