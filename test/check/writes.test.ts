import type { ServerResponse } from 'node:http'
import t from 'tap'
import { check, type CheckResult } from '../../check/index.js'
import { itemsDocument, startItems, type Hook } from './items.js'

// The probes that write on a service that checks the token: a refusal for the token (401, 403)
// says nothing of the rule, whichever the service checks first.

const verdictsOf = (result: CheckResult): Record<string, [string, string | undefined]> =>
  Object.fromEntries(result.verdicts.map(v => [v.id, [v.verdict, v.reason]]))

const problem = (res: ServerResponse, status: number, title: string, more: Record<string, unknown> = {}): true => {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}) })
    .end(JSON.stringify({ title, status, requestId: 'r', ...more }))
  return true
}

/**
 * A service that checks the token (`tokens`: what each may do) before the body, or after the
 * Content-Type, the idempotency key and a bulk body: both orders follow the convention.
 */
function guarded (order: 'token first' | 'token last', tokens: Record<string, 'write' | 'read' | 'collection only' | 'nothing'>): Hook {
  return (request, res) => {
    if (request.url === '/openapi.json') return false
    const scope = tokens[/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '']
    const writes = request.method !== 'GET' && request.method !== 'HEAD'
    const refused = (): boolean => {
      if (scope === undefined || (scope === 'collection only' && !(request.method === 'GET' && request.url === '/items'))) return problem(res, 401, 'Unauthorized')
      if (scope === 'nothing' || (writes && scope !== 'write')) return problem(res, 403, 'Forbidden', { detail: `not permitted on ${request.url}` })
      return false
    }
    if (order === 'token first' && refused()) return true
    if (writes && !/^application\/json\b/.test(request.headers['content-type'] ?? '')) return problem(res, 415, 'Unsupported Media Type')
    if (request.headers['svc-idempotency-key'] === 'Not A Key') return problem(res, 400, 'Invalid Data', { context: [{ code: 'INPUT_INVALID', message: 'malformed', field: 'Svc-Idempotency-Key', source: 'header' }] })
    if (request.method === 'PATCH' && request.url === '/items' && !('operations' in (JSON.parse(request.body) as object))) return problem(res, 400, 'Invalid Data')
    return order === 'token last' && refused()
  }
}

t.test('a write probe refused for its token (401, 403) is not checked, saying what it needs', async t => {
  const tokens = { writer: 'write', reader: 'read', partial: 'collection only', none: 'nothing' } as const
  const RULES = ['headers.content-type', 'headers.idempotency-key', 'methods.not-found', 'bulk.request']
  const unknown = /^GET \/svc-conventions-check-svc-check-missing-\w+ answers/
  const cases: Array<[string, 'token first' | 'token last', keyof typeof tokens | undefined, Record<string, [string, RegExp | string | undefined]>]> = [
    ['no token, checked first', 'token first', undefined, {
      'headers.content-type': ['not checked', 'POST /items answers 401: needs --token'],
      'headers.idempotency-key': ['not checked', 'POST /items answers 401: needs --token'],
      'methods.not-found': ['not checked', new RegExp(`${unknown.source} 401: needs --token$`)],
      'bulk.request': ['not checked', 'PATCH /items answers 401: needs --token']
    }],
    ['a token without write scope, checked first', 'token first', 'reader', {
      'headers.content-type': ['not checked', 'POST /items answers 403: needs a token with write scope'],
      'headers.idempotency-key': ['not checked', 'POST /items answers 403: needs a token with write scope'],
      'methods.not-found': ['pass', undefined],
      'bulk.request': ['not checked', 'PATCH /items answers 403: needs a token with write scope']
    }],
    ['no token, checked after the body', 'token last', undefined, {
      'headers.content-type': ['pass', undefined],
      'headers.idempotency-key': ['pass', undefined],
      'methods.not-found': ['not checked', new RegExp(`${unknown.source} 401: needs --token$`)],
      'bulk.request': ['pass', undefined]
    }],
    ['a token refused off the collection', 'token first', 'partial', {
      'headers.content-type': ['not checked', 'POST /items answers 401: the token is refused there'],
      'headers.idempotency-key': ['not checked', 'POST /items answers 401: the token is refused there'],
      'methods.not-found': ['not checked', new RegExp(`${unknown.source} 401: the token is refused there$`)],
      'bulk.request': ['not checked', 'PATCH /items answers 401: the token is refused there']
    }],
    ['a token that may read nothing', 'token first', 'none', {
      'headers.content-type': ['not checked', 'POST /items answers 403: needs a token with write scope'],
      'headers.idempotency-key': ['not checked', 'POST /items answers 403: needs a token with write scope'],
      'methods.not-found': ['not checked', new RegExp(`${unknown.source} 403: needs a token with read scope$`)],
      'bulk.request': ['not checked', 'PATCH /items answers 403: needs a token with write scope']
    }],
    ['a token with write scope', 'token first', 'writer', {
      'headers.content-type': ['pass', undefined],
      'headers.idempotency-key': ['pass', undefined],
      'methods.not-found': ['pass', undefined],
      'bulk.request': ['pass', undefined]
    }]
  ]
  for (const [name, order, token, expected] of cases) {
    const service = await startItems(t, { document: itemsDocument({ bulk: true }), hook: guarded(order, tokens) })
    const result = await check({ baseUrl: service.base, only: RULES, ...(token === undefined ? {} : { token }) })
    t.match(verdictsOf(result), expected, name)
    t.strictSame(Object.keys(verdictsOf(result)).sort(), [...RULES].sort(), `${name}: every rule has its verdict`)
  }
})
