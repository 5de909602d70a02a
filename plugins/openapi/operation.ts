import type { RouteOptions } from 'fastify'
import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { essenceOf } from '../shared/media-type.js'
import type { RouteFacts } from './facts.js'
import { cacheableRead, conventionHeaders, responseHeaders } from './headers.js'
import { nameOperation, successDescription } from './naming.js'
import { statusesOf } from './statuses.js'
import { problemExample } from './examples.js'
import { OPTIONAL_BODY } from './document.js'

type Json = Record<string, unknown>

/** What every operation shares: the common problems and the served collections (`authors` → `author`). */
export interface DocumentContext {
  commonProblems: readonly number[]
  collections: ReadonlyMap<string, string>
}

// @fastify/swagger takes a response's description from this key, and leaves it out of the body schema.
const DESCRIPTION = 'x-response-description'

/**
 * A problem response of `status`: described by its title, with an example of its own status
 * (the Problem schema's is a 400). The operations that answer a status with the same headers
 * share one response object in the document (lean.ts).
 */
function problemResponse (status: number): Json {
  const example = problemExample(status)
  return { description: example.title, content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: 'Problem#' }, example } } }
}

// Keys of a response entry that describe the response itself, not its body.
const RESPONSE_KEYS: ReadonlySet<string> = new Set([DESCRIPTION, 'headers'])

/** Whether a produced type carries the JSON body schema: JSON itself and `+json` types (RFC 6839 §3.1). */
function isJsonType (type: string): boolean {
  return type === 'application/json' || type.endsWith('+json')
}

/**
 * A success response of a route that produces more than JSON: one content entry per produced
 * type (conventions: Media types), the JSON ones with the body schema, the others text.
 */
function withContent (response: Json, produced: readonly string[]): Json {
  const out: Json = {}
  const schema: Json = {}
  for (const [key, value] of Object.entries(response)) (RESPONSE_KEYS.has(key) ? out : schema)[key] = value
  if (typeof schema.description === 'string' && out[DESCRIPTION] === undefined) out[DESCRIPTION] = schema.description
  // A body that is not JSON has no JSON schema to show: any content of its type.
  out.content = Object.fromEntries(produced.map((type) => [type, { schema: isJsonType(type) ? schema : {} }]))
  return out
}

/** The description a response shows: its own, else @fastify/swagger's fallback. */
function descriptionOf (response: Json): string | undefined {
  const own = response[DESCRIPTION] ?? response.description
  return typeof own === 'string' ? own : undefined
}

/**
 * A route's schema as the document shows it (`transform` of @fastify/swagger): the
 * convention's parts no route schema states are added here, so they shape the document
 * only and cost nothing per request. The route's own schema is not changed.
 */
export function describeOperation (route: RouteOptions, schema: Json, facts: RouteFacts, ctx: DocumentContext): Json {
  const doc: Json = { ...schema }
  const { config, methods } = facts
  const method = methods.length === 1 ? methods[0] as string : null
  const response: Record<string, Json> = { ...(doc.response as Record<string, Json> | undefined) }
  // A route without a success schema answers something: @fastify/swagger's own default, a 200.
  if (!Object.keys(response).some(s => s.startsWith('2'))) response[200] = {}
  for (const status of statusesOf(route, doc, ctx.commonProblems, facts)) response[status] ??= problemResponse(status)
  doc.headers = conventionHeaders(facts, doc.headers as Json | undefined)
  // RFC 9110 §15.4.5: a read with a matching If-None-Match answers 304 without a body.
  if (cacheableRead(facts) && response[200] !== undefined) response[304] ??= { type: 'null', description: 'Not Modified' }

  const name = method === null ? null : nameOperation(method, route.url, ctx.collections, config.collection !== undefined && config.collection !== false)
  for (const [status, r] of Object.entries(response)) {
    const code = Number(status)
    let out: Json = r
    if (name !== null && code >= 200 && code < 300 && descriptionOf(r) === undefined) out = { ...out, [DESCRIPTION]: successDescription(method as string, code, name, ctx.collections) }
    const headers = responseHeaders(facts, code)
    if (Object.keys(headers).length > 0) out = { ...out, headers: { ...headers, ...out.headers as Json | undefined } }
    // A representation that is not JSON (a file's own type): its media types, documented only.
    const content = config.openapi?.content?.[status]
    if (content !== undefined) out = { ...out, content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])) }
    response[status] = out
  }
  // Every type Accept can pick on this route, per success status with a body.
  const produced = facts.conventions?.accept?.produces.map(essenceOf) ?? []
  if (produced.length > 1 || (produced.length === 1 && produced[0] !== 'application/json')) {
    for (const [status, r] of Object.entries(response)) {
      if (status.startsWith('2') && r.type !== 'null' && r.content === undefined) response[status] = withContent(r, produced)
    }
  }
  doc.response = response

  if (name !== null && doc.operationId === undefined) doc.operationId = name.operationId
  // A body the route reads itself (not validated by Fastify), by media type.
  const body = config.openapi?.body
  if (body !== undefined && doc.body === undefined) doc.body = { content: Object.fromEntries(Object.entries(body).map(([type, schema]) => [type, { schema }])) }
  // The media types the conventions plugin accepts on this route (415 for any other).
  const consumes = facts.conventions?.consumes
  if (doc.body !== undefined && doc.consumes === undefined && consumes !== null && consumes !== undefined) doc.consumes = consumes.map(essenceOf)
  // Scopes are listed with the scheme (OpenAPI 3.1 §4.8.30: any scheme may list roles).
  if (config.auth === false) doc.security = []
  else if (facts.scopes.length > 0) doc.security = [{ bearerAuth: facts.scopes }]
  // A route that checks its scopes itself, any one set of several (the jobs of each collection):
  // one security requirement per set, any of which grants it (OpenAPI 3.1 §4.8.30).
  const alternatives = config.openapi?.scopeAlternatives?.()
  if (alternatives !== undefined && alternatives.length > 0) doc.security = alternatives.map(scopes => ({ bearerAuth: scopes }))
  const own = config.openapi
  if (own?.description !== undefined) doc.description = [doc.description, own.description].filter(d => d !== undefined).join('\n\n')
  if (own?.internal === true) doc['x-internal'] = true
  if (own?.optionalBody === true) doc[OPTIONAL_BODY] = true
  return doc
}
