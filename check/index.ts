// `check(options)`: probes a running service over HTTP, rule by rule, and answers a verdict per
// rule with the exchange that proves a failure. It uses nothing of the suite's runtime: the
// service may be written in any language.
import { createRequire } from 'node:module'
import { isEnvelope, notChecked, type Context, type Outcome, type Sample } from './context.js'
import { BudgetSpent, HttpClient, NoAnswer } from './http.js'
import { bareCollection, modelOf, type ServiceModel } from './openapi.js'
import { RULES, type Rule } from './rules/index.js'
import { cleanUp, createEntities } from './rules/writes.js'
import { CheckError, type CheckOptions, type CheckResult, type Exchange, type Verdict } from './types.js'

export { RULES, ruleOf, type Rule } from './rules/index.js'
export { CheckError } from './types.js'
export type { Answer, CheckOptions, CheckResult, Exchange, OutputFormat, SentRequest, Verdict, VerdictKind } from './types.js'
export { formatText } from './report/text.js'
export { formatJson } from './report/json.js'
export { formatJunit } from './report/junit.js'
export { formatTap } from './report/tap.js'

const VERSION = (createRequire(import.meta.url)('svc-conventions/package.json') as { version: string }).version
/** The check's own User-Agent, of the convention's form. */
export const USER_AGENT = `svc-conventions-check/${VERSION.split('.')[0] ?? '0'} (svc-conventions check)`

// Collections sampled at the start: enough to see the shapes, few enough to stay cheap.
const MAX_SAMPLES = 6

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The service's document: the one given, else `<base>/openapi.json` when it answers one. */
// A document named by its URL may be YAML (a file a static server serves, say).
const DOCUMENT_ACCEPT = 'application/json, application/yaml;q=0.9, */*;q=0.1'

/** A body that is no JSON, read as YAML; undefined when it is neither. */
async function yamlOf (text: string): Promise<unknown> {
  if (text.trim() === '') return undefined
  try {
    return (await import('yaml')).parse(text) as unknown
  } catch {
    return undefined
  }
}

async function documentOf (http: HttpClient, openapi: CheckOptions['openapi']): Promise<{ doc: Record<string, unknown>, source: string } | null> {
  if (isObject(openapi)) return { doc: openapi, source: 'given' }
  const url = openapi ?? '/openapi.json'
  const target = http.url(url)
  // The token goes to the service's own origin only: a document elsewhere is read without it.
  const ex = await http.send({ path: target.href, follow: true, auth: http.sameOrigin(target), ...(openapi === undefined ? {} : { headers: { accept: DOCUMENT_ACCEPT } }) }).catch((err: unknown) => {
    if (err instanceof NoAnswer) throw new CheckError('unreachable', `GET ${target.href}: ${err.message}`)
    throw err
  })
  const doc = ex.response.json ?? (ex.response.status === 200 && openapi !== undefined ? await yamlOf(ex.response.text) : undefined)
  if (ex.response.status === 200 && isObject(doc) && typeof doc.openapi === 'string') return { doc, source: target.href }
  if (openapi !== undefined) throw new CheckError('document', `${target.href} answered ${ex.response.status}, not an OpenAPI document`)
  return null
}

/**
 * A document whose paths all start with the base URL's path prefix wrote them from the host's
 * root (as a Fastify app registered under a prefix documents itself): the probes, relative to
 * the base URL, take them without it.
 */
function relativeToBase (model: ServiceModel, doc: Record<string, unknown>, prefix: string): void {
  const paths = isObject(doc.paths) ? Object.keys(doc.paths) : []
  if (prefix === '' || paths.length === 0 || !paths.every(p => p.startsWith(`${prefix}/`))) return
  const strip = (p: string): string => p.slice(prefix.length)
  for (const c of model.collections) {
    c.path = strip(c.path)
    if (c.itemPath !== null) c.itemPath = strip(c.itemPath)
  }
  model.pathsWithoutGet = model.pathsWithoutGet.map(strip)
}

function validate (options: CheckOptions): void {
  let url: URL
  try { url = new URL(options.baseUrl) } catch { throw new CheckError('usage', `not a URL: ${JSON.stringify(options.baseUrl)}`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CheckError('usage', `the base URL must be http or https, got ${url.protocol}`)
  for (const [name, value, min] of [['maxRequests', options.maxRequests, 1], ['concurrency', options.concurrency, 1], ['timeoutMillis', options.timeoutMillis, 1]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < min)) throw new CheckError('usage', `${name} must be an integer of at least ${min}, got ${String(value)}`)
  }
  // Paths are joined to the base URL's origin; one that does not begin with / would not stay on it.
  const notPath = (options.collections ?? []).find(p => !p.startsWith('/'))
  if (notPath !== undefined) throw new CheckError('usage', `a collection is a path beginning with /, got ${JSON.stringify(notPath)}`)
  if (typeof options.openapi === 'string' && !/^https?:\/\//i.test(options.openapi) && !options.openapi.startsWith('/')) {
    throw new CheckError('usage', `openapi must be an http(s) URL, a path on the service or a parsed document, got ${JSON.stringify(options.openapi)}`)
  }
  if (isObject(options.openapi) && typeof options.openapi.openapi !== 'string') throw new CheckError('document', 'the document given is not an OpenAPI document (it has no "openapi" version field)')
  for (const id of [...(options.only ?? []), ...(options.skip ?? [])]) {
    if (!RULES.some(r => r.id === id)) throw new CheckError('usage', `no rule ${JSON.stringify(id)} (the rules: svc-conventions check --list)`)
  }
}

/**
 * Runs one rule; a spent budget or a probe without answer is its verdict, not the check's end.
 * When the budget ran out before the first pages were read (`spent`), only the rules that
 * judge what was seen run.
 */
async function runRule (rule: Rule, ctx: Context, spent: string | null): Promise<Outcome> {
  if (rule.unobservable !== undefined) return { verdict: 'not checked', reason: `not observable from outside: ${rule.unobservable}` }
  if (rule.run === undefined) return { verdict: 'not checked', reason: 'no probe' }
  if (spent !== null && rule.observes !== true) return notChecked(spent)
  try {
    return await rule.run(ctx)
  } catch (err) {
    if (err instanceof BudgetSpent) return { verdict: 'not checked', reason: err.message }
    if (err instanceof NoAnswer) return { verdict: 'fail', reason: `${err.request.method} ${err.request.path}: ${err.message}`, exchange: { request: err.request, response: { status: 0, headers: {}, text: '', json: undefined } } }
    throw err
  }
}

/**
 * Reads each collection's first page (a few): the samples the rules start from. A page without
 * its whole answer in time is a sample of status 0, and the rules that need it say so. Answers
 * the budget's message when it could not pay for them all, else null.
 */
async function readFirstPages (ctx: Context): Promise<string | null> {
  for (const collection of ctx.model.collections.slice(0, MAX_SAMPLES)) {
    let exchange: Exchange
    try {
      exchange = await ctx.http.send({ path: collection.path })
    } catch (err) {
      if (err instanceof BudgetSpent) return err.message
      if (!(err instanceof NoAnswer)) throw err
      exchange = { request: err.request, response: { status: 0, headers: {}, text: '', json: undefined } }
    }
    if (exchange.response.status === 401 && ctx.hasToken) {
      throw new CheckError('token', `the token was refused: GET ${exchange.request.path} answered 401${typeof (exchange.response.json as { title?: unknown } | undefined)?.title === 'string' ? ` (${(exchange.response.json as { title: string }).title})` : ''}; check --token`)
    }
    const body = exchange.response.json
    ctx.samples.push({ collection, exchange, items: exchange.response.status === 200 && isEnvelope(body) ? body.results.filter(isObject) : [] } satisfies Sample)
  }
  // Fullest first: the probes that need items take the first collection that has enough.
  ctx.samples.sort((a, b) => b.items.length - a.items.length)
  return null
}

/** Probes the service at `options.baseUrl` and answers a verdict per rule. */
export async function check (options: CheckOptions): Promise<CheckResult> {
  validate(options)
  const started = performance.now()
  const http = new HttpClient({
    baseUrl: options.baseUrl,
    token: options.token,
    limitedToken: options.limitedToken,
    maxRequests: options.maxRequests ?? 500,
    concurrency: options.concurrency ?? 2,
    timeoutMillis: options.timeoutMillis ?? 10_000,
    ca: options.ca,
    userAgent: USER_AGENT
  })
  try {
    const found = await documentOf(http, options.openapi)
    const model: ServiceModel = found === null ? { documentSource: null, collections: [], pathsWithoutGet: [] } : modelOf(found.doc, found.source)
    if (found !== null) relativeToBase(model, found.doc, http.prefix)
    const wanted = options.collections ?? []
    if (wanted.length > 0) {
      const known = model.collections.filter(c => wanted.includes(c.path))
      model.collections = [...known, ...wanted.filter(p => !known.some(c => c.path === p)).map(bareCollection)]
    }
    if (model.collections.length === 0) {
      throw new CheckError('no-collection', found === null
        ? `${http.url('/openapi.json').href} answers no OpenAPI document: name one with --openapi, or the collections with --collection`
        : 'the document names no collection (a GET answering {results, paging}): name them with --collection')
    }
    const ctx: Context = { http, model, document: found?.doc ?? null, hasToken: options.token !== undefined, hasLimitedToken: options.limitedToken !== undefined, origin: options.origin, writes: options.writes === true, samples: [], created: [], createFailure: null, leftBehind: [], usedKey: null }
    const spent = await readFirstPages(ctx)

    const selected = RULES.filter(r => (options.only === undefined || options.only.length === 0 || options.only.includes(r.id)) && !(options.skip ?? []).includes(r.id))
    const outcomes = new Map<string, Outcome>()
    const later = (r: Rule): boolean => ctx.writes && (r.writes === true || r.usesEntities === true)
    // Reads first, on the data as it was; then the check's own entities; their deletion last;
    // what was seen is judged once nothing more is sent.
    const phases: Array<(r: Rule) => boolean> = [
      r => r.observes !== true && !later(r),
      r => r.observes !== true && later(r) && r.id !== 'methods.delete',
      r => r.id === 'methods.delete',
      r => r.observes === true
    ]
    try {
      for (const [i, inPhase] of phases.entries()) {
        if (i === 1 && spent === null && ctx.writes && selected.some(r => later(r))) {
          await createEntities(ctx).catch((err: unknown) => {
            if (!(err instanceof BudgetSpent)) throw err
            ctx.createFailure = err.message
          })
        }
        for (const rule of selected.filter(inPhase)) outcomes.set(rule.id, await runRule(rule, ctx, spent))
        if (i === 2) await cleanUp(ctx)
      }
    } catch (err) {
      // The check cannot go on: its entities are deleted when they can be, and what stays is named.
      await cleanUp(ctx)
      if (err instanceof CheckError && ctx.leftBehind.length > 0) throw new CheckError(err.kind, `${err.message}; left behind: ${ctx.leftBehind.join('; ')}`)
      throw err
    }
    const verdicts: Verdict[] = selected.map(rule => {
      const o = outcomes.get(rule.id) as Outcome
      return { id: rule.id, section: rule.section, title: rule.title, verdict: o.verdict, ...(o.verdict === 'pass' ? {} : { reason: o.reason, ...(o.exchange === undefined ? {} : { exchange: o.exchange }) }) }
    })
    return { baseUrl: options.baseUrl, writes: ctx.writes, verdicts, requests: http.count, durationMillis: Math.round(performance.now() - started), leftBehind: ctx.leftBehind }
  } finally {
    await http.close()
  }
}
