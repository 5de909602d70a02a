import { PROBLEM_MEDIA_TYPE } from '../../schemas/problem.js'
import { ProblemError } from '../problem/index.js'
import { WEBHOOK_PREFIX } from '../webhooks/index.js'
import type { RouteFacts } from './facts.js'
import { conventionHeaders, responseHeaders } from './headers.js'

/*
 * The methods plugin's answers to a method a path does not serve (conventions: HTTP
 * methods; RFC 9110 §9.3.7, §15.5.6): OPTIONS gets 204 with `Allow`, any other method 405
 * with `Allow`. No route serves them, so @fastify/swagger never sees them: each path gets an
 * OPTIONS operation here, whose description also tells of the 405 (an operation of its
 * own per unserved method would be noise). Its summary is its Allow header.
 */

type Json = Record<string, unknown>

/** Header schemas as OpenAPI header objects (what @fastify/swagger makes of a route's). */
function headerObjects (headers: Record<string, unknown>): Json {
  return Object.fromEntries(Object.entries(headers).map(([name, schema]) => {
    const { description, ...rest } = schema as Json
    return [name, { schema: rest, description }]
  }))
}

function parametersOf (facts: RouteFacts): Json[] {
  const { properties, required } = conventionHeaders(facts, undefined) as { properties: Record<string, Json>, required: string[] }
  return Object.entries(properties).map(([name, schema]) => {
    // As @fastify/swagger writes a route's header: its example beside the schema, so both are one shape.
    const { description, examples, ...rest } = schema
    return { in: 'header', name, required: required.includes(name), description, schema: rest, ...(Array.isArray(examples) ? { example: examples[0] } : {}) }
  })
}

function problem (facts: RouteFacts, status: number, extra: Json = {}): Json {
  return {
    description: new ProblemError(status, 'SVC_DOC').title,
    headers: headerObjects({ ...responseHeaders(facts, status), ...extra }),
    content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } }
  }
}

// The CORS plugin's refusal of a preflight names its reason (conventions: Headers, Svc-Cors-Error).
const CORS_ERROR = { 'svc-cors-error': { type: 'string', maxLength: 20, description: 'Why a CORS preflight was refused: `bad origin`, `bad method` or `bad header`.' } }

/**
 * The OPTIONS operation of `path`, whose served methods are `allowed`. `facts` are those of a
 * request no route serves: the conventions plugin's rules for the app, no token, not counted.
 */
export function optionsOperation (path: string, operationId: string, allowed: readonly string[], facts: RouteFacts, cors: boolean): Json {
  const allow = { allow: { type: 'string', maxLength: 100, description: 'The methods the path serves, comma-separated (as the operation\'s summary lists them).' } }
  const preflight = cors ? ' A CORS preflight is answered by the CORS rules instead: 204 with the Access-Control-* headers, or 403 with Svc-Cors-Error.' : ''
  // What every path's OPTIONS shares is said once, by its 204 (a shared component); the summary lists the methods.
  const op: Json = {
    operationId,
    summary: `Allow: ${allowed.join(', ')}`,
    parameters: parametersOf(facts),
    security: [],
    responses: {
      204: { description: `No Content: the methods are in Allow. Any other method answers 405 Method Not Allowed, with the same Allow header and a problem body.${preflight}`, headers: headerObjects({ ...responseHeaders(facts, 204), ...allow }) },
      400: problem(facts, 400),
      403: problem(facts, 403, cors ? CORS_ERROR : {}),
      500: problem(facts, 500)
    }
  }
  // Webhook consumer endpoints are internal, every method of them (conventions: Webhook consumer endpoints).
  if (path.startsWith(WEBHOOK_PREFIX)) op['x-internal'] = true
  return op
}
