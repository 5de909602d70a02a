import type { ServerResponse } from 'node:http'
import t from 'tap'
import { check, CheckError, ruleOf, type CheckResult } from '../../check/index.js'
import { itemsDocument, startItems, type Hook } from './items.js'

// What --writes leaves on a service: each entity a POST of the check's made is deleted at the
// end, on requests the budget held back for it, or named as left behind; and the probes that
// write judge only what they observe.

const verdictsOf = (result: CheckResult): Record<string, [string, string | undefined]> =>
  Object.fromEntries(result.verdicts.map(v => [v.id, [v.verdict, v.reason]]))

const problem = (res: ServerResponse, status: number, title: string, more: Record<string, unknown> = {}): true => {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}) })
    .end(JSON.stringify({ title, status, requestId: 'r', ...more }))
  return true
}

/** Requests of these methods get their connection cut, as from a service that went away. */
const cutOff = (...methods: string[]): Hook => (request, res) => {
  if (!methods.includes(request.method)) return false
  res.socket?.destroy()
  return true
}

/** A service without a document: /openapi.json is a 404. */
const noDocument: Hook = (request, res) => request.url === '/openapi.json' && problem(res, 404, 'Not Found')

/** Every POST creates, whatever its body, and answers 201 with the id (`made-1`, `made-2`…), holding nothing. */
function takesAnyPost (): Hook {
  let made = 0
  return (request, res) => {
    if (request.method !== 'POST') return false
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `made-${++made}` }))
    return true
  }
}

t.test('--writes on a budget that runs out: what the check created is deleted all the same', async t => {
  const service = await startItems(t, { items: [{ id: 'before', name: 'there before the check', version: 1 }] })
  const whole = await check({ baseUrl: service.base, writes: true })
  t.strictSame(whole.leftBehind, [], 'with the default budget, nothing left behind')
  t.ok(service.received.filter(r => r.method === 'POST').length >= 3, 'it created several entities')
  for (let max = 3; max <= whole.requests; max++) {
    const result = await check({ baseUrl: service.base, writes: true, maxRequests: max })
    t.ok(result.requests <= max, `--max-requests ${max}: ${result.requests} requests`)
    t.strictSame([...service.items.keys()], ['before'], `--max-requests ${max}: the check's entities are gone`)
    t.strictSame(result.leftBehind, [], `--max-requests ${max}: nothing left behind`)
  }
})

t.test('an entity is deleted once its DELETE is answered 2xx; otherwise it is left behind, saying why', async t => {
  const cases: Array<[string, Hook, (id: string) => [string, string], (id: string) => string]> = [
    ['no answer', (request) => request.method === 'DELETE', id => ['fail', `DELETE /items/${id}: no answer within 300 ms`], id => `/items/${id} (not deleted: no answer within 300 ms)`],
    ['a 409', (request, res) => request.method === 'DELETE' && problem(res, 409, 'Conflict', { detail: 'it has children' }), () => ['not applicable', 'nothing the check created could be deleted (children block it)'], id => `/items/${id} (DELETE answered 409: it has children)`],
    ['a 500 without a body', (request, res) => request.method === 'DELETE' && res.writeHead(500).end() === res, id => ['fail', `DELETE /items/${id}: expected 204, got 500`], id => `/items/${id} (DELETE answered 500)`]
  ]
  for (const [name, hook, verdict, left] of cases) {
    const service = await startItems(t, { hook })
    const result = await check({ baseUrl: service.base, writes: true, timeoutMillis: 300, only: ['methods.create', 'methods.delete'] })
    const [id = ''] = [...service.items.keys()]
    t.strictSame(verdictsOf(result), { 'methods.create': ['pass', undefined], 'methods.delete': verdict(id) }, name)
    t.strictSame(result.leftBehind, [left(id)], name)
    t.equal(service.received.filter(r => r.method === 'DELETE').length, 1, `${name}: one DELETE, the entity is not tried again`)
  }
})

t.test('a POST repeated with its key and answered with the same entity made one entity: deleted once', async t => {
  const answered = new Map<string, string>()
  const service = await startItems(t, {
    // The first answer replayed for the key, as some stores of idempotency keys do.
    hook: (request, res, items) => {
      const key = request.headers['svc-idempotency-key']
      if (request.method !== 'POST' || typeof key !== 'string') return false
      if (!answered.has(key)) {
        const made = { id: `keyed-${items.size + 1}`, name: (JSON.parse(request.body) as { name: string }).name, version: 1 }
        items.set(made.id, made)
        answered.set(key, JSON.stringify({ id: made.id, name: made.name }))
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(answered.get(key))
      return true
    }
  })
  const result = await check({ baseUrl: service.base, writes: true, only: ['idempotency.replay'] })
  t.match(result.verdicts, [{ id: 'idempotency.replay', verdict: 'fail', reason: 'the same POST with the same key: expected 409, got 201' }])
  t.strictSame(result.leftBehind, [], 'nothing left behind: no second DELETE of the same entity')
  t.equal(service.items.size, 0)
  t.equal(service.received.filter(r => r.method === 'DELETE').length, 2, 'the entity of the check and the one made with the key, each deleted once')
})

t.test('a service that cannot be reached in the middle of --writes: exit code 2, naming what was left behind', async t => {
  const service = await startItems(t, { hook: cutOff('PUT', 'DELETE') })
  await t.rejects(check({ baseUrl: service.base, writes: true, only: ['methods.put'] }), {
    name: 'CheckError',
    kind: 'unreachable',
    message: new RegExp(`^cannot reach ${service.base}: UND_ERR_SOCKET; left behind: /items/[\\w-]+ \\(not deleted: cannot reach ${service.base}: UND_ERR_SOCKET\\)$`)
  })
  t.equal(service.items.size, 1, 'the entity is there: its DELETE was cut off')

  const reads = await startItems(t, { hook: cutOff('HEAD') })
  await t.rejects(check({ baseUrl: reads.base, only: ['methods.head'] }), new CheckError('unreachable', `cannot reach ${reads.base}: UND_ERR_SOCKET`), 'read-only, nothing to name')
})

t.test('a create answered 200: methods.create fails, and what it made is deleted', async t => {
  const service = await startItems(t, {
    hook: (request, res, items) => {
      if (request.method !== 'POST') return false
      const made = { id: `i${items.size + 1}`, name: (JSON.parse(request.body) as { name: string }).name, version: 1 }
      items.set(made.id, made)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: made.id, name: made.name }))
      return true
    }
  })
  const result = await check({ baseUrl: service.base, writes: true, only: ['methods.create', 'methods.put'] })
  t.strictSame(verdictsOf(result), {
    'methods.create': ['fail', 'POST /items created /items/i1: expected 201, got 200'],
    'methods.put': ['pass', undefined]
  })
  t.equal(service.items.size, 0, 'the entity is deleted at the end')
  t.strictSame(result.leftBehind, [])
})

t.test('a 201 with neither an id nor a Location: what it made is named as left behind, and made once', async t => {
  const service = await startItems(t, {
    hook: (request, res) => {
      if (request.method !== 'POST') return false
      res.writeHead(201).end()
      return true
    }
  })
  const result = await check({ baseUrl: service.base, writes: true, only: ['methods.create'] })
  t.strictSame(verdictsOf(result), { 'methods.create': ['not checked', 'no entity could be created (POST /items answered 201)'] })
  t.strictSame(result.leftBehind, ['what POST /items created (a 201 with neither an id nor a Location: the check cannot find it)'])
  t.equal(service.received.filter(r => r.method === 'POST').length, 1, 'the POST is not sent a second time')
})

t.test('read-only, a POST the service should have refused creates: named as left behind, never deleted', async t => {
  const anyPost = takesAnyPost()
  const service = await startItems(t, { hook: (request, res, items) => noDocument(request, res, items) || anyPost(request, res, items) })
  const result = await check({ baseUrl: service.base, collections: ['/items'], only: ['headers.content-type', 'headers.idempotency-key', 'methods.not-allowed'] })
  t.match(result.verdicts, [
    { id: 'headers.content-type', verdict: 'fail', reason: 'POST text/plain: expected 415, got 201' },
    { id: 'headers.idempotency-key', verdict: 'fail', reason: 'a malformed Svc-Idempotency-Key: expected 400, got 201' },
    { id: 'methods.not-allowed', verdict: 'fail', reason: /^POST \/items\/svc-check-missing-\w+: expected 405, got 201$/ }
  ])
  const why = 'created by a POST the service should have refused; without --writes the check deletes nothing'
  t.strictSame(result.leftBehind, [`/items/made-3 (${why})`, `/items/made-2 (${why})`, `/items/made-1 (${why})`])
  t.notOk(service.received.some(r => r.method === 'DELETE'), 'no DELETE sent')
})

t.test('with --writes, an entity of a collection the check cannot delete is named as left behind', async t => {
  const document = itemsDocument()
  delete (document.paths as Record<string, Record<string, unknown>>)['/items/{id}']?.delete
  const anyPost = takesAnyPost()
  const cases: Array<[string, Hook, string[], string]> = [
    ['the document offers no DELETE', () => false, ['methods.create'], 'the document offers no DELETE'],
    ['no document', (request, res, items) => noDocument(request, res, items) || anyPost(request, res, items), ['headers.idempotency-key'], 'no document says how to delete it']
  ]
  for (const [name, hook, only, why] of cases) {
    const service = await startItems(t, { document, hook })
    const result = await check({ baseUrl: service.base, writes: true, collections: ['/items'], only })
    t.match(result.leftBehind, [new RegExp(`^/items/[\\w-]+ \\(${why}\\)$`)], name)
    t.notOk(service.received.some(r => r.method === 'DELETE'), `${name}: no DELETE sent`)
  }
})

t.test('PATCH probes send the media type the document lists for the item\'s PATCH', async t => {
  const cases: Array<[string[], string]> = [
    [['application/json'], 'application/json'],
    [['application/merge-patch+json'], 'application/merge-patch+json'],
    [['application/json; charset=utf-8', 'application/merge-patch+json'], 'application/merge-patch+json']
  ]
  for (const [listed, sent] of cases) {
    const service = await startItems(t, {
      document: itemsDocument({ patchTypes: listed }),
      hook: (request, res) => request.method === 'PATCH' && request.headers['content-type'] !== sent && problem(res, 415, 'Unsupported Media Type')
    })
    const result = await check({ baseUrl: service.base, writes: true, only: ['methods.merge-patch', 'methods.if-match'] })
    t.match(result.verdicts, [{ id: 'methods.merge-patch', verdict: 'pass' }, { id: 'methods.if-match', verdict: 'pass' }], `listed ${listed.join(', ')}`)
    t.strictSame([...new Set(service.received.filter(r => r.method === 'PATCH').map(r => r.headers['content-type']))], [sent], `listed ${listed.join(', ')}: ${sent} sent`)
  }
})

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

t.test('a budget too small for the first pages: the rules that send are not checked, saying so', async t => {
  const page = JSON.stringify({ results: [], paging: { limit: 20, next: null, previous: null } })
  const collection = { get: { responses: { 200: { content: { 'application/json': { schema: { properties: { results: { type: 'array', items: {} } } } } } } } } }
  const service = await startItems(t, {
    document: { openapi: '3.1.0', info: { title: 'three', version: '1' }, paths: { '/a': collection, '/b': collection, '/c': collection } },
    hook: (request, res) => {
      if (!/^\/[abc]$/.test(request.url)) return false
      res.writeHead(200, { 'content-type': 'application/json' }).end(page)
      return true
    }
  })
  for (const max of [1, 2, 3]) {
    const result = await check({ baseUrl: service.base, maxRequests: max })
    t.equal(result.requests, max, `--max-requests ${max}: as many requests, no more`)
    const probing = result.verdicts.filter(v => ruleOf(v.id)?.observes !== true && ruleOf(v.id)?.unobservable === undefined)
    t.ok(probing.length >= 40, 'the rules that send requests')
    t.strictSame(probing.filter(v => v.verdict !== 'not checked' || v.reason !== `the request budget (--max-requests ${max}) is spent`), [], `--max-requests ${max}: every probing rule says the budget is spent`)
  }
})
