import t from 'tap'
import fc from 'fast-check'
import { randomUUID } from 'node:crypto'
import { DEV_WEBHOOK_SECRET } from '../../config.js'
import { signStandardWebhook } from '../../plugins/webhooks/index.js'
import { Tally, afterwards, good, judge, send, startFuzzService, report } from './support.js'

/*
 * Bad input, JSON bodies (issue 7): POST, PUT, PATCH, bulk and the webhook route of the
 * reference service over real HTTP and its store, with bodies that are valid, nearly valid,
 * wrongly typed, hugely numeric, deeply nested, prototype-poisoning, duplicated, truncated,
 * empty or not UTF-8. Never a 5xx, always a problem body, and no prototype pollution.
 */

// JSON.stringify cannot write 1e400 or a 500-digit number: such tokens travel as marked strings.
const RAW = '\u0001raw:'
const raw = (token: string): string => RAW + token
function serialize (value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0001raw:((?:[^"\\]|\\.)*)"/g, (_, token: string) => JSON.parse(`"${token}"`))
}

const NUMBERS = ['1e400', '-1e400', '18446744073709551616', '9223372036854775808', '9'.repeat(500), '0.' + '0'.repeat(400) + '1', '-0', '1E+2', '2147483648', '-2147483649', '4.5', '1e-7']
const STRINGS = ['', ' ', 'a'.repeat(201), 'a'.repeat(2001), 'a\u0000b', '\u0000', '\uD800', 'a\uDFFFb', '\uFFFE', '😀', 'é', '<script>', "'; DROP TABLE authors; --", '%00', '\\', '"', '\n', 'DRAFT', 'null', 'true', '0']

const anyJson = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBERS).map(raw) },
  { weight: 2, arbitrary: fc.constantFrom(...STRINGS) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, 0, -1, [], {}, [null], { __proto__: null }) }
)
/**
 * A valid body with at most two faults: a field set to anything, or a read-only or unknown
 * field added. Most cases then reach the store, and each refusal has one or two causes.
 */
function withFaults (valid: fc.Arbitrary<Record<string, unknown>>, keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const fault = fc.tuple(fc.constantFrom(...keys, 'id', 'ref', 'etag', 'createdBy', 'modifiedDateTime', 'unknownField', '__proto__', 'constructor'), anyJson)
  return fc.tuple(valid, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(fault, { minLength: 1, maxLength: 2 }) }))
    .map(([body, faults]) => {
      const out: Record<string, unknown> = { ...body }
      // defineProperty: a "__proto__" key must become an own property, as JSON.parse would make it.
      for (const [key, value] of faults) Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true })
      return out
    })
}

let names = 0
const name = fc.constant(null).map(() => `body-${process.pid}-${++names}`)

const authorBody = withFaults(fc.record({
  name,
  email: fc.constantFrom('a@example.com', 'x@y.z', 'first.last+tag@example.co.uk'),
  active: fc.boolean()
}, { requiredKeys: ['name', 'email'] }), ['name', 'email', 'active'])

const page = fc.record({ number: fc.integer({ min: 1, max: 100000 }), description: fc.option(fc.string({ maxLength: 20 })), imageUrl: fc.constantFrom(null, 'https://example.com/p.png') })

const DOC_KEYS = ['name', 'description', 'authorId', 'status', 'kind', 'pageCount', 'byteCount', 'amount', 'discountPercentage', 'tags', 'pages',
  'retentionDuration', 'validityInterval', 'reviewSchedule', 'effectiveDate', 'publishedDateTime', 'metadata', 'fingerprint']

function documentBody (authorId: string): fc.Arbitrary<Record<string, unknown>> {
  return withFaults(fc.record({
    name,
    description: fc.option(fc.string({ maxLength: 30 })),
    authorId: fc.constant(authorId),
    status: fc.constantFrom('DRAFT', 'PUBLISHED', 'ARCHIVED'),
    kind: fc.constantFrom('PURCHASE_ORDER', 'INVOICE', 'CONTRACT'),
    pageCount: fc.integer({ min: 0, max: 100000 }),
    byteCount: fc.constantFrom(null, '0', '9223372036854775807', 42, raw('9223372036854775807')),
    amount: fc.constantFrom(null, '10.2', '-0.5', '999999999999999.9999'),
    discountPercentage: fc.constantFrom(null, '0', '100', '12.5'),
    tags: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'é', '😀'), { maxLength: 5 }),
    pages: fc.array(page, { maxLength: 3 }),
    retentionDuration: fc.constantFrom(null, 'P1Y', 'P1Y2M3DT4H5M6S', 'P1W'),
    validityInterval: fc.constantFrom(null, '2024-01-01T00:00:00Z/P1D', 'R5/P1D/2024-01-01T00:00:00Z'),
    reviewSchedule: fc.constantFrom(null, '0 9 * * 1', '*/5 * * * *'),
    effectiveDate: fc.constantFrom(null, '2024-02-29', '9999-12-31'),
    publishedDateTime: fc.constantFrom(null, '2024-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'),
    metadata: fc.option(fc.record({ source: fc.option(fc.record({ system: fc.constantFrom('erp', 'crm'), region: fc.option(fc.constantFrom('eu', 'us')) })) }))
  }, { requiredKeys: ['name', 'authorId', 'kind'] }), DOC_KEYS)
}

/** Bodies no serializer writes: nesting, poisoning, duplicates, broken syntax and bytes. */
const SPECIAL: Array<string | Buffer> = [
  '['.repeat(10000) + ']'.repeat(10000),
  '{"a":'.repeat(10000) + '1' + '}'.repeat(10000),
  `{"name":"deep","kind":"INVOICE","metadata":${'{"source":'.repeat(5000)}null${'}'.repeat(5000)}}`,
  `{"tags":${'['.repeat(100000)}${']'.repeat(100000)}}`,
  '{"__proto__":{"polluted":"yes"}}',
  '{"name":"p","metadata":{"__proto__":{"polluted":"yes"}}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"metadata":{"source":{"constructor":{"prototype":{"polluted":"yes"}}}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"\\u005f_proto__":{"polluted":"yes"}}',
  '{"operations":[{"action":"CREATE","entity":{"__proto__":{"polluted":"yes"}}}]}',
  '{"name":"a","name":"b","name":{"x":1}}',
  '{"name":"x","kind":"INVOICE","kind":"CONTRACT"}',
  '', ' ', 'null', 'true', '0', '"text"', '[]', '{}', '[{}]', '{', '}', '{"name":', '{"name":"x"', '{"name":"x",}', "{'name':'x'}", '{name:"x"}',
  '{"name":"x"}garbage', '{"name":"x"}{"name":"y"}', '\uFEFF{"name":"x"}', 'NaN', 'Infinity', '{"pageCount":NaN}', '{"pageCount":01}', '{"pageCount":.5}', '{"pageCount":+1}',
  '{"name":"\\ud800"}', '{"name":"\\u0000"}', '{"name":"\\x41"}', '{"name":"\t"}', '/* c */{}', '{"a":1e400}',
  Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), // {"name":"<invalid UTF-8>"}
  Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]) // UTF-16 with a BOM
]

t.test('JSON bodies on the write routes, bulk and the webhook', async (t) => {
  const { base, errors } = await startFuzzService(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  const json = good({ 'content-type': 'application/json' })
  const author = JSON.parse((await send(base, 'POST', '/v1/authors', json, JSON.stringify({ name: 'Body', email: 'body@example.com' }))).text)
  const doc = JSON.parse((await send(base, 'POST', '/v1/documents', json, JSON.stringify({ name: 'body-doc', authorId: author.id, kind: 'INVOICE' }))).text)
  t.ok(typeof author.id === 'string' && typeof doc.id === 'string', 'fixtures created')
  const docBody = documentBody(author.id)

  /** A route, the body it takes as a value, and the headers it needs. */
  const targets = fc.oneof(
    authorBody.map((b) => ({ method: 'POST', path: '/v1/authors', body: b as unknown })),
    docBody.map((b) => ({ method: 'POST', path: '/v1/documents', body: b as unknown })),
    docBody.map((b) => ({ method: 'POST', path: `/v1/authors/${author.id as string}/documents`, body: b as unknown })),
    authorBody.map((b) => ({ method: 'PUT', path: `/v1/authors/put-${randomUUID()}`, body: b as unknown })),
    docBody.map((b) => ({ method: 'PUT', path: `/v1/documents/${doc.id as string}`, body: b as unknown })),
    authorBody.map((b) => ({ method: 'PATCH', path: `/v1/authors/${author.id as string}`, body: b as unknown })),
    docBody.map(({ name: _, ...b }) => ({ method: 'PATCH', path: `/v1/documents/${doc.id as string}`, body: b as unknown })),
    withFaults(fc.record({
      transactionMode: fc.constantFrom('ATOMIC', 'ISOLATED'),
      operations: fc.array(withFaults(fc.record({
        operationId: fc.option(fc.string({ maxLength: 8 })),
        action: fc.constantFrom('CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'),
        ifMatch: fc.option(fc.constantFrom('"x"', '*')),
        entity: fc.oneof(docBody, docBody.map((b) => ({ ...b, id: doc.id })))
      }, { requiredKeys: ['action', 'entity'] }), ['operationId', 'action', 'ifMatch', 'entity']), { maxLength: 4 })
    }, { requiredKeys: ['operations'] }), ['transactionMode', 'operations']).map((b) => ({ method: 'PATCH', path: '/v1/documents', body: b as unknown }))
  )
  const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/merge-patch+json')

  t.test('generated bodies: valid, nearly valid and wrongly typed fields', async (t) => {
    const tally = new Tally()
    await fc.assert(fc.asyncProperty(targets, contentType, async (target, type) => {
      const ct = target.method === 'PATCH' && !target.path.endsWith('s') ? type : 'application/json'
      const reply = await send(base, target.method, target.path, good({ 'content-type': ct, 'if-match': '*' }), serialize(target.body))
      judge({ method: target.method }, reply, tally)
    }), { numRuns: 1200 })
    report(t, 'generated bodies', tally)
    t.ok((tally.statuses.get(201) ?? 0) > 50 && (tally.statuses.get(204) ?? 0) > 50, 'many bodies are valid and stored')
    t.ok((tally.statuses.get(400) ?? 0) > 200, 'many are refused')
  })

  t.test('bodies no serializer writes, on every write route', async (t) => {
    const tally = new Tally()
    const routes = [
      ['POST', '/v1/authors'], ['POST', '/v1/documents'], ['POST', `/v1/authors/${author.id as string}/documents`], ['POST', '/v1/documents/search'],
      ['PUT', `/v1/documents/${doc.id as string}`], ['PATCH', `/v1/documents/${doc.id as string}`], ['PATCH', `/v1/authors/${author.id as string}`],
      ['PATCH', '/v1/authors'], ['PATCH', '/v1/documents']
    ] as const
    const truncated = fc.tuple(docBody, fc.nat()).map(([b, at]) => { const text = serialize(b); return text.slice(0, at % text.length) })
    const body = fc.oneof(fc.constantFrom(...SPECIAL), truncated)
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), body, contentType, async ([method, path], b, type) => {
      const reply = await send(base, method, path, good({ 'content-type': method === 'PATCH' ? type : 'application/json', 'if-match': '*' }), b)
      judge({ method }, reply, tally)
    }), { numRuns: 600 })
    report(t, 'special bodies', tally)
    t.equal((Object.prototype as Record<string, unknown>).polluted, undefined, 'Object.prototype is not polluted')
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'a fresh object has no polluted property')
  })

  t.test('the webhook with bad signatures and bodies', async (t) => {
    const tally = new Tally()
    // A document of its own: the bulk cases above may have deleted the first one.
    const scanned = JSON.parse((await send(base, 'POST', '/v1/documents', json, JSON.stringify({ name: 'scanned-doc', authorId: author.id, kind: 'INVOICE' }))).text)
    const payload = fc.oneof(
      { weight: 4, arbitrary: withFaults(fc.record({ documentId: fc.constant(scanned.id), pageCount: fc.integer({ min: 0, max: 100000 }), fingerprint: fc.constantFrom('sha256:abc', 'md5:1') }), ['documentId', 'pageCount', 'fingerprint']).map(serialize) },
      { weight: 1, arbitrary: fc.constantFrom(...SPECIAL.filter((s): s is string => typeof s === 'string')) }
    )
    const now = Math.floor(Date.now() / 1000)
    const fine = { id: fc.constant(null).map(() => `msg_${randomUUID()}`), ts: fc.constant(now), mode: fc.constant('valid'), proto: fc.constant<string | undefined>('https') }
    const signing = fc.oneof(
      { weight: 2, arbitrary: fc.record(fine) },
      { weight: 1, arbitrary: fc.record({ ...fine, id: fc.constantFrom('', 'x', 'a'.repeat(300), 'msg_dup', 'ü') }) },
      { weight: 1, arbitrary: fc.record({ ...fine, ts: fc.constantFrom(now - 301, now + 301, 0, -1, 1e15, 2 ** 60) }) },
      { weight: 2, arbitrary: fc.record({ ...fine, mode: fc.constantFrom('wrong-secret', 'garbage', 'missing', 'several', 'v2') }) },
      { weight: 1, arbitrary: fc.record({ ...fine, proto: fc.constantFrom('http', undefined) }) }
    )
    await fc.assert(fc.asyncProperty(payload, signing, fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', 'application/json; charset=latin1'), async (body, s, type) => {
      const sign = (secret: string): string => signStandardWebhook(secret, s.id, s.ts, body)
      const signature = {
        valid: sign(DEV_WEBHOOK_SECRET),
        'wrong-secret': sign('whsec_' + Buffer.from('another-secret-of-enough-bytes').toString('base64')),
        garbage: 'v1,not-base64!!',
        missing: undefined,
        several: `v1,${Buffer.alloc(32).toString('base64')} ${sign(DEV_WEBHOOK_SECRET)} v1a,xyz`,
        v2: sign(DEV_WEBHOOK_SECRET).replace('v1,', 'v2,')
      }[s.mode]
      const h: Record<string, string> = { 'content-type': type, 'webhook-id': s.id, 'webhook-timestamp': String(s.ts) }
      if (signature !== undefined) h['webhook-signature'] = signature
      if (s.proto !== undefined) h['x-forwarded-proto'] = s.proto
      const reply = await send(base, 'POST', '/_webhooks/scanner/document-scanned', h, body)
      judge({ method: 'POST' }, reply, tally)
    }), { numRuns: 500 })
    report(t, 'webhook deliveries', tally)
    t.ok((tally.statuses.get(204) ?? 0) > 10, 'some deliveries are valid and applied')
    t.ok((tally.statuses.get(401) ?? 0) > 50, 'bad signatures are refused')
  })

  afterwards(t, base, errors)
})
