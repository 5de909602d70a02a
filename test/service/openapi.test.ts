import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { headers, token } from '../resource/helper.js'
import { DEV_WEBHOOK_SECRET } from '../../config.js'
import { signStandardWebhook } from 'svc-conventions/webhooks'
import { documentValidator, inlineHeaders, resolveRefs, responseFor, type Doc } from '../openapi/support.js'
import { startService } from './service.js'

// Black-box: the reference service over real HTTP against its own GET /openapi.json. Each
// answer's status is documented for its operation, every header of the convention and the
// plugins it carries is documented there, and a success carries every one documented. The
// bulk operation schema and the merge-patch schema accept exactly what the service accepts.

/** Headers the suite's plugins set; the others (date, content-length …) are HTTP's own. */
const WATCHED = ['content-language', 'cache-control', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'www-authenticate', 'etag', 'location', 'allow', 'x-request-id', 'svc-execution-context', 'link', 'accept-patch']

interface Answer { status: number, headers: Headers, text: string }

interface CallOptions { body?: string, type?: string, extra?: Record<string, string>, base?: Record<string, string> }

async function service (t: Test, env: Record<string, string> = {}): Promise<{ doc: Doc, raw: Doc, call: (method: string, path: string, opts?: CallOptions) => Promise<Answer> }> {
  const { base } = await startService(t, undefined, { TRUST_PROXY: '127.0.0.1', ...env })
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Answer> => {
    const h: Record<string, string> = { ...(opts.base ?? headers()), 'x-request-id': `req-${randomUUID()}`, 'svc-execution-context': 'prod', ...opts.extra }
    if (opts.body !== undefined) h['content-type'] = opts.type ?? 'application/json'
    const res = await fetch(base + path, { method, headers: h, body: opts.body })
    return { status: res.status, headers: res.headers, text: await res.text() }
  }
  const raw = JSON.parse((await call('GET', '/openapi.json', { base: { 'user-agent': 'doc-tests/1' } })).text) as Doc
  return { doc: inlineHeaders(raw), raw, call }
}

/** The path template of the document that `path` matches, the most specific first (`search` before `{authorId}`). */
function templateOf (doc: Doc, path: string): string | undefined {
  const templates = Object.keys(doc.paths as Doc).sort((a, b) => a.split('{').length - b.split('{').length)
  return templates.find(p => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path.split('?')[0] as string))
}

/** Checks one answer against the document; `label` names the case. */
function conforms (t: Test, doc: Doc, label: string, method: string, path: string, res: Answer, status: number): void {
  t.equal(res.status, status, `${label}: status`)
  const template = templateOf(doc, path) as string
  const item = doc.paths[template] as Doc
  if (res.status === 405) {
    // No operation answers it: the path's OPTIONS operation tells of it, with the same Allow.
    t.match(item.options.responses['204'].description, /405 Method Not Allowed, with the same Allow header/, `${label}: 405 described`)
    t.ok(res.headers.get('allow'), `${label}: Allow`)
    return
  }
  // HEAD answers as the path's GET does, without a body: the document says so once (no operation of its own).
  const operation = method === 'HEAD' ? 'get' : method.toLowerCase()
  const documented = responseFor(doc, item?.[operation], res.status)
  t.ok(documented, `${label}: ${method} ${template} ${res.status} documented`)
  // The response's own headers, and those the document states once for every answer.
  const own = Object.keys(documented?.headers ?? {}).map(h => h.toLowerCase())
  const everyAnswer = Object.keys(doc['x-response-headers'] ?? {}).map(h => h.toLowerCase())
  const sent = WATCHED.filter(h => res.headers.get(h) !== null)
  t.strictSame(sent.filter(h => !own.includes(h) && !everyAnswer.includes(h)), [], `${label}: every header sent is documented`)
  // Link on a collection's 200 is a CSV page's paging (a JSON page has it in its body).
  const csv = res.headers.get('content-type')?.startsWith('text/csv') === true
  const expected = own.filter(h => h !== 'link' || res.status !== 200 || csv)
  if (res.status < 300 || res.status === 304) t.strictSame(expected.filter(h => !sent.includes(h)), [], `${label}: every header documented for it is sent`)
  // A success of a /v1 operation (a token accepted, counted; OPTIONS takes none) carries all of them: the request sent both echoed ones.
  if (res.status < 300 && template.startsWith('/v1/') && method !== 'OPTIONS') t.strictSame(everyAnswer.filter(h => !sent.includes(h)), [], `${label}: every header of every answer is sent`)
  if (sent.includes('content-language')) t.equal(res.headers.get('content-language'), 'en-US', `${label}: Content-Language`)
  if (method === 'HEAD') t.equal(res.text, '', `${label}: no body`)
}

t.test('answers and headers as documented', async t => {
  const { doc, call } = await service(t)
  const check = async (label: string, method: string, path: string, status: number, opts?: CallOptions): Promise<Answer> => {
    const res = await call(method, path, opts)
    conforms(t, doc, label, method, path, res, status)
    return res
  }
  const author = JSON.parse((await check('create', 'POST', '/v1/authors', 201, { body: JSON.stringify({ name: 'Ann', email: 'ann@example.com' }) })).text)
  const item = `/v1/authors/${author.id as string}`
  const read = await check('read', 'GET', item, 200)
  const etag = read.headers.get('etag') as string
  await check('head', 'HEAD', item, 200)
  await check('not modified', 'GET', item, 304, { extra: { 'if-none-match': etag } })
  await check('a read whose If-Match fails', 'GET', item, 412, { extra: { 'if-match': '"stale"' } })
  await check('list', 'GET', '/v1/authors', 200)
  await check('create another', 'POST', '/v1/authors', 201, { body: JSON.stringify({ name: 'Bob', email: 'bob@example.com' }) })
  const csv = await check('a CSV page', 'GET', '/v1/authors?limit=1', 200, { extra: { accept: 'text/csv' } })
  t.match(csv.headers.get('link'), /rel="next"/, 'a CSV page pages by its Link')
  await check('head of a list', 'HEAD', '/v1/authors', 200)
  await check('search', 'POST', '/v1/authors/search', 200, { body: '{}' })
  await check('merge patch', 'PATCH', item, 204, { body: '{"active":false}', type: 'application/merge-patch+json' })
  await check('merge patch as JSON', 'PATCH', item, 204, { body: '{"active":true}', type: 'application/json' })
  const text = await check('merge patch as text', 'PATCH', item, 415, { body: '{}', type: 'text/plain' })
  t.equal(text.headers.get('accept-patch'), 'application/merge-patch+json, application/json', 'a PATCH\'s 415 names the types it takes')
  await check('replace', 'PUT', item, 204, { body: JSON.stringify({ name: 'Ann', email: 'ann@example.com' }) })
  await check('bad limit', 'GET', '/v1/authors?limit=0', 400)
  await check('no token', 'GET', '/v1/authors', 401, { base: { 'user-agent': 'doc-tests/1' } })
  await check('bad token', 'GET', '/v1/authors', 401, { base: { 'user-agent': 'doc-tests/1', authorization: 'Bearer nope' } })
  const scope = await check('missing scope', 'POST', '/v1/authors', 403, { base: { 'user-agent': 'doc-tests/1', authorization: `Bearer ${token('user-1', ['authors:read'])}` }, body: '{}' })
  t.match(scope.headers.get('www-authenticate'), /insufficient_scope/)
  await check('no User-Agent', 'GET', '/v1/authors', 403, { base: { authorization: `Bearer ${token()}` } })
  await check('unknown id', 'GET', '/v1/authors/nope', 404)
  await check('not acceptable', 'GET', '/v1/authors', 406, { extra: { accept: 'text/html' } })
  await check('too large', 'POST', '/v1/authors', 413, { body: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }) })
  await check('options', 'OPTIONS', item, 204)
  await check('method not allowed', 'PUT', '/v1/authors', 405, { body: '{}' })
  const doc1 = JSON.parse((await check('create a document', 'POST', '/v1/documents', 201, { body: JSON.stringify({ name: 'D', kind: 'INVOICE', authorId: author.id }) })).text)
  await check('delete with children', 'DELETE', item, 409)
  await check('no If-Match', 'DELETE', `/v1/documents/${doc1.id as string}`, 428)
  await check('bulk', 'PATCH', '/v1/documents', 200, { body: JSON.stringify({ operations: [{ action: 'DELETE', entity: { id: 'x' }, ifMatch: '"a"' }] }) })
  await check('health', 'GET', '/health', 200, { base: {} })
  await check('the document', 'GET', '/openapi.json', 200, { base: { 'user-agent': 'doc-tests/1' } })
  await check('the document without a User-Agent', 'GET', '/openapi.json', 403, { base: {} })

  const deliver = async (label: string, status: number, signed: boolean, proto?: string): Promise<void> => {
    const body = JSON.stringify({ documentId: doc1.id, pageCount: 2, fingerprint: 'sha256:x' })
    const id = `msg_${randomUUID()}`
    const ts = Math.floor(Date.now() / 1000)
    const extra: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signed ? signStandardWebhook(DEV_WEBHOOK_SECRET, id, ts, body) : 'v1,bad' }
    if (proto !== undefined) extra['x-forwarded-proto'] = proto
    await check(label, 'POST', '/_webhooks/scanner/document-scanned', status, { base: {}, body, extra })
  }
  await deliver('a signed delivery', 204, true, 'https')
  await deliver('a bad signature', 401, false, 'https')
  await deliver('over plain HTTP', 403, true)
})

t.test('a 429 and the answers before it carry the documented rate-limit headers', async t => {
  const { doc, call } = await service(t, { RATE_LIMIT_MAX: '2' })
  conforms(t, doc, 'first', 'GET', '/v1/authors', await call('GET', '/v1/authors'), 200)
  conforms(t, doc, 'second', 'GET', '/v1/authors', await call('GET', '/v1/authors'), 200)
  const limited = await call('GET', '/v1/authors')
  conforms(t, doc, 'third', 'GET', '/v1/authors', limited, 429)
  t.ok(limited.headers.get('retry-after'))
})

/** Whether the service failed an operation for what it sent (its checks), not for the state it met. */
const refused = (result: Doc): boolean => result.status === 'FAILED' &&
  (result.context as Doc[] | null ?? []).some(c => /^INPUT_|^PRECONDITION_REQUIRED$/.test(String(c.code)))

t.test('the bulk operation schema accepts exactly the operations the service accepts', async t => {
  const { doc, raw, call } = await service(t)
  const compile = documentValidator(raw)
  const author = JSON.parse((await call('POST', '/v1/authors', { body: JSON.stringify({ name: 'Bulk', email: 'bulk@example.com' }) })).text)
  // A valid entity with at most one key left out and at most one value spoiled: about half
  // the operations pass their checks, and each check is met both ways.
  const entity = (base: Doc, spoilt: Array<[string, unknown]>): fc.Arbitrary<Doc> =>
    fc.record({ drop: fc.subarray(Object.keys(base), { maxLength: 1 }), spoil: fc.option(fc.constantFrom(...spoilt), { freq: 1 }) })
      .map(({ drop, spoil }) => {
        const out: Doc = Object.fromEntries(Object.entries(base).filter(([k]) => !drop.includes(k)))
        if (spoil !== null) out[spoil[0]] = spoil[1]
        return out
      })
  const entities: Record<string, fc.Arbitrary<Doc>> = {
    authors: entity({ id: 'a-1', name: 'Ann', email: 'ann@example.com', active: true }, [
      ['name', ''], ['name', null], ['email', 'nope'], ['active', 'yes'], ['active', null], ['ref', 'svc:author::a-1'], ['extra', 1], ['id', 'bad id!']
    ]),
    documents: entity({ id: 'd-1', name: 'Doc', kind: 'INVOICE', authorId: author.id, amount: '10.5', publishedDateTime: '2024-05-01T12:00:00Z' }, [
      ['name', ''], ['kind', 'NOPE'], ['kind', null], ['amount', '1e3'], ['amount', '-0'], ['publishedDateTime', '2024-05-01T12:00:00+01:00'],
      ['publishedDateTime', null], ['fingerprint', 'sha256:x'], ['metadata', { source: { region: 'eu' } }], ['id', 'bad id!']
    ])
  }
  for (const collection of ['authors', 'documents']) {
    const operation = fc.record({
      action: fc.constantFrom('CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'),
      ifMatch: fc.constantFrom(undefined, null, '"abc"', 'W/"a", "b"', '*', 'abc', ' "a" ,, '),
      // Every operation has the bulk request's shape (an entity object): one without it is a 400
      // for the whole request (test/bulk/envelope.test.ts); here each entity is judged alone.
      entity: entities[collection] as fc.Arbitrary<unknown>
    }, { requiredKeys: ['action', 'entity'] })
    // The body's schema is a component (`DocumentBulkRequest`): read through its references.
    const validate = compile(resolveRefs(raw, raw.paths[`/v1/${collection}`].patch.requestBody).content['application/json'].schema.properties.operations.items)
    for (let round = 0; round < 3; round++) {
      // One id per operation: the same id twice is refused for the whole request.
      const ops = fc.sample(operation, { numRuns: 100, seed: round }).map((op, i) => {
        const entity = op.entity as Doc | null | undefined
        return typeof entity?.id === 'string' ? { ...op, entity: { ...entity, id: `${entity.id}-${round}-${i}` } } : op
      })
      const res = await call('PATCH', `/v1/${collection}`, { body: JSON.stringify({ operations: ops }) })
      t.equal(res.status, 200, `${collection} round ${round}: ${res.text.slice(0, 300)}`)
      const results = JSON.parse(res.text).operations as Doc[]
      const mismatches = ops.filter((op, i) => validate(op) === refused((results[i] as Doc).result))
        .map(op => JSON.stringify(op))
      t.strictSame(mismatches, [], `${collection} round ${round}: the document accepts an operation exactly when the service does`)
    }
  }
  t.ok(doc.paths['/v1/documents'].patch)
})

t.test('the merge-patch schema offers null only where the service takes it', async t => {
  const { raw, call } = await service(t)
  const compile = documentValidator(raw)
  const author = JSON.parse((await call('POST', '/v1/authors', { body: JSON.stringify({ name: 'Patch', email: 'patch@example.com' }) })).text)
  const full = { name: 'Full', kind: 'INVOICE', authorId: author.id, description: 'd', amount: '1.5', tags: ['a'], metadata: { source: { system: 'erp', region: 'eu' } } }
  const created = await call('POST', '/v1/documents', { body: JSON.stringify(full) })
  const path = `/v1/documents/${JSON.parse(created.text).id as string}`
  const validate = compile(resolveRefs(raw, raw.paths['/v1/documents/{documentId}'].patch.requestBody).content['application/merge-patch+json'].schema)
  const fields = resolveRefs(raw, raw.components.schemas.Document).properties as Doc
  const patches: Doc[] = [
    ...Object.keys(fields)
      .filter(f => !(fields[f] as Doc).readOnly && f !== 'id')
      .map(f => ({ [f]: null })),
    { metadata: { source: null } },
    { metadata: { source: { system: null } } },
    { metadata: { source: { region: null } } }
  ]
  for (const patch of patches) {
    // Each from the full document again, with its current ETag.
    const current = await call('GET', path)
    await call('PUT', path, { body: JSON.stringify(full), extra: { 'if-match': current.headers.get('etag') as string } })
    const etag = (await call('GET', path)).headers.get('etag') as string
    const res = await call('PATCH', path, { body: JSON.stringify(patch), type: 'application/merge-patch+json', extra: { 'if-match': etag } })
    t.equal(validate(patch), res.status === 204, `${JSON.stringify(patch)}: ${res.status} ${res.text.slice(0, 200)}`)
    if (res.status === 400) t.match(res.text, /INPUT_NULL/, 'refused as a required value that is null')
  }
})
