import t, { type Test } from 'tap'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import type { FastifyInstance } from 'fastify'
import { registerWebhook, signStandardWebhook, standardWebhooks, type StandardWebhooksOptions, type WebhookDelivery } from '../../plugins/webhooks/index.js'
import { pglite } from '../support/databases.js'
import { OTHER_SECRET, SECRET, bodyOf, build, signed } from './helper.js'

const URL = '/_webhooks/scanner/document-scanned'
const BODY = '{"documentId":"d-1","pageCount":3}'

interface Seen { payload: unknown, delivery: WebhookDelivery | null }

t.test('Standard Webhooks', async t => {
  const store = await pglite.create(t)

  async function scanner (t: Test, verifier: StandardWebhooksOptions = { secrets: SECRET }): Promise<{ app: FastifyInstance, seen: Seen[] }> {
    const seen: Seen[] = []
    const app = await build(t, {
      store,
      routes: (app) => registerWebhook(app, {
        producer: 'scanner',
        event: 'document-scanned',
        verifier: standardWebhooks(verifier),
        handler: async (payload, _tx, request) => { seen.push({ payload, delivery: request.webhook }) }
      })
    })
    return { app, seen }
  }

  t.test('a signed delivery: 204, the handler gets the payload and the delivery', async t => {
    const { app, seen } = await scanner(t)
    const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { id: 'msg_1' }) })
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    t.strictSame(seen, [{ payload: { documentId: 'd-1', pageCount: 3 }, delivery: { producer: 'scanner', id: 'msg_1', rawBody: Buffer.from(BODY) } }])
  })

  t.test('missing, malformed, stale and wrong signatures: 401 saying which, handler not called', async t => {
    const { app, seen } = await scanner(t)
    const now = Math.floor(Date.now() / 1000)
    const good = signed(BODY, { id: 'msg_x', timestamp: now })
    const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(good).filter(([k]) => k !== name))
    const sig16 = 'v1,' + Buffer.alloc(16, 1).toString('base64')
    const table: Array<[string, Record<string, string>, RegExp, string?]> = [
      ['no signature headers', { 'content-type': 'application/json', 'x-forwarded-proto': 'https' }, /lacks webhook-id, webhook-timestamp, webhook-signature;/],
      ['no webhook-signature', without('webhook-signature'), /lacks webhook-signature;/],
      ['no webhook-id', without('webhook-id'), /lacks webhook-id;/],
      ['empty webhook-timestamp', { ...good, 'webhook-timestamp': '' }, /lacks webhook-timestamp;/],
      ['timestamp not a number', { ...good, 'webhook-timestamp': '17abc' }, /not a Unix time in whole seconds/],
      ['negative timestamp', { ...good, 'webhook-timestamp': '-5' }, /not a Unix time/],
      ['fractional timestamp', { ...good, 'webhook-timestamp': `${now}.5` }, /not a Unix time/],
      ['stale: 10 minutes old', signed(BODY, { timestamp: now - 600 }), /is 60\d seconds in the past, beyond the 300 accepted/],
      ['from the future', signed(BODY, { timestamp: now + 400 }), /is (39\d|40\d) seconds in the future, beyond the 300 accepted/],
      ['no entry of version v1', { ...good, 'webhook-signature': good['webhook-signature']!.replace('v1,', 'v2,') }, /holds no v1 signature/],
      ['entry without a comma', { ...good, 'webhook-signature': 'v1' }, /holds no v1 signature/],
      ['not base64', { ...good, 'webhook-signature': 'v1,!!!!' }, /holds no v1 signature/],
      ['a 16-byte signature', { ...good, 'webhook-signature': sig16 }, /holds no v1 signature/],
      ['signed with another secret', signed(BODY, { secret: OTHER_SECRET }), /No signature in webhook-signature matches the delivery/],
      ['another body', { ...good }, /No signature .* matches/, '{"documentId":"d-2","pageCount":3}'],
      ['another id', { ...good, 'webhook-id': 'msg_y' }, /No signature .* matches/],
      ['another timestamp', { ...good, 'webhook-timestamp': String(now - 1) }, /No signature .* matches/],
      ['the same body re-serialized', { ...good }, /No signature .* matches/, JSON.stringify(JSON.parse(BODY), null, 1)]
    ]
    for (const [name, headers, detail, body] of table) {
      const res = await app.inject({ method: 'POST', url: URL, payload: body ?? BODY, headers: { ...headers, 'x-request-id': 'req-1' } })
      t.equal(res.statusCode, 401, `${name}: status`)
      t.match(res.headers['content-type'], /^application\/problem\+json/, `${name}: problem`)
      const problem = bodyOf(res)
      t.match(problem, { status: 401, title: 'Unauthorized', requestId: 'req-1', detail }, `${name}: detail`)
      t.notMatch(res.body, SECRET.slice(6, 20), `${name}: no secret in the answer`)
    }
    t.strictSame(seen, [], 'no handler call')
    const ok = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: good })
    t.equal(ok.statusCode, 204, 'the unaltered delivery passes')
  })

  t.test('tolerance: 300 s by default, an option', async t => {
    const now = Math.floor(Date.now() / 1000)
    const { app: a } = await scanner(t)
    t.equal((await a.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { timestamp: now - 280 }) })).statusCode, 204, '280 s old: accepted by default')
    const { app: b } = await scanner(t, { secrets: SECRET, tolerance: 60 })
    t.equal((await b.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { timestamp: now - 30 }) })).statusCode, 204, '30 s old: accepted with 60')
    const res = await b.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { timestamp: now - 120 }) })
    t.equal(res.statusCode, 401, '120 s old: refused with 60')
    t.match(bodyOf(res).detail, /beyond the 60 accepted/)
  })

  t.test('secret rotation: a delivery signed with any of the secrets passes', async t => {
    const { app, seen } = await scanner(t, { secrets: [SECRET, OTHER_SECRET] })
    for (const secret of [SECRET, OTHER_SECRET]) {
      const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { secret }) })
      t.equal(res.statusCode, 204)
    }
    const third = 'whsec_' + Buffer.from('another-secret-of-32-bytes-long!').toString('base64')
    t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers: signed(BODY, { secret: third }) })).statusCode, 401, 'a third secret does not')
    t.equal(seen.length, 2)
  })

  t.test('several signatures in the header: one match is enough', async t => {
    const { app } = await scanner(t)
    const now = Math.floor(Date.now() / 1000)
    const right = signStandardWebhook(SECRET, 'msg_m', now, BODY)
    const wrong = signStandardWebhook(OTHER_SECRET, 'msg_m', now, BODY)
    const base = signed(BODY, { id: 'msg_m', timestamp: now })
    for (const header of [`${wrong} ${right}`, `${right} ${wrong}`, `v1a,${'A'.repeat(86)}== ${right}`, `v1,!! ${right}`]) {
      const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...base, 'webhook-signature': header } })
      t.equal(res.statusCode, 204, header.slice(0, 20))
    }
  })

  t.test('compatible with the standardwebhooks package, both ways', async t => {
    const { app, seen } = await scanner(t)
    const now = new Date()
    const seconds = Math.floor(now.getTime() / 1000)
    const library = new Webhook(SECRET)
    t.equal(signStandardWebhook(SECRET, 'msg_lib', seconds, BODY), library.sign('msg_lib', now, BODY), 'same signature')
    const headers = { ...signed(BODY, { id: 'msg_lib', timestamp: seconds }), 'webhook-signature': library.sign('msg_lib', now, BODY) }
    t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers })).statusCode, 204, 'a library signature verifies')
    t.strictSame(library.verify(BODY, signed(BODY, { id: 'msg_ours', timestamp: seconds })), JSON.parse(BODY), 'ours verifies in the library')
    t.equal(seen.length, 1)
  })

  t.test('signatures are the standardwebhooks package\'s, for any secret, id, time and text', async t => {
    const secret = fc.uint8Array({ minLength: 16, maxLength: 64 }).map(b => `whsec_${Buffer.from(b).toString('base64')}`)
    fc.assert(fc.property(secret, fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 4_000_000_000 }), fc.string({ unit: 'grapheme', maxLength: 200 }), (key, id, seconds, body) => {
      const ours = signStandardWebhook(key, id, seconds, body)
      t.equal(ours, new Webhook(key).sign(id, new Date(seconds * 1000), body))
      t.equal(ours, signStandardWebhook(key, id, seconds, Buffer.from(body)), 'text or its bytes')
    }), { numRuns: 200 })
  })

  t.test('the raw bytes are verified and kept, whatever their re-serialization would be', async t => {
    const { app, seen } = await scanner(t)
    const bodies: Array<[string, Buffer, unknown]> = [
      ['key order and whitespace', Buffer.from('{ "pageCount" : 3,\n\t"documentId":"d-1" }'), { pageCount: 3, documentId: 'd-1' }],
      ['unicode escapes', Buffer.from('{"name":"\\u00e9t\\u00e9","slash":"\\/"}'), { name: 'été', slash: '/' }],
      ['number forms', Buffer.from('{"n":1.0e2,"m":-0}'), { n: 100, m: -0 }]
    ]
    for (const [name, bytes, parsed] of bodies) {
      seen.length = 0
      const res = await app.inject({ method: 'POST', url: URL, payload: bytes, headers: signed(bytes) })
      t.equal(res.statusCode, 204, `${name}: verified`)
      t.strictSame(seen[0]?.payload, parsed, `${name}: parsed from the bytes`)
      t.ok(seen[0]?.delivery?.rawBody.equals(bytes), `${name}: the exact bytes kept`)
    }
    // Verified over its bytes, then refused: parsed as UTF-8, its é would reach the handler as U+FFFD.
    seen.length = 0
    const latin1 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d])
    const refused = await app.inject({ method: 'POST', url: URL, payload: latin1, headers: signed(latin1) })
    t.equal(refused.statusCode, 400, 'bytes that are not UTF-8 (Latin-1 é): a 400 after the signature, not a 401')
    t.match(refused.json(), { detail: /not valid UTF-8/ })
    t.strictSame(seen, [], 'the handler is not called')
  })

  t.test('a secret without the whsec_ prefix; a repeated header is refused', async t => {
    const { app } = await scanner(t, { secrets: SECRET.slice(6) })
    const headers = signed(BODY, { id: 'msg_r' })
    t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers })).statusCode, 204)
    const twice = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...signed(BODY, { id: 'msg_s' }), 'webhook-id': ['msg_s', 'msg_t'] as unknown as string } })
    t.equal(twice.statusCode, 401, 'a repeated webhook-id is one altered value')
  })
})

t.test('options are checked at creation, never echoing a secret', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /secrets must be a whsec_<base64> secret or a non-empty array of them, got undefined/],
    [{}, /secrets must be .* got undefined/],
    [{ secrets: [] }, /secrets must be .* got an array of 0/],
    [{ secrets: 42 }, /got 42/],
    [{ secrets: ['whsec_not base64!'] }, /secrets\[0\] must be whsec_<base64> of at least 16 bytes, got a string of 17 characters/],
    [{ secrets: [SECRET, 'whsec_c2hvcnQ='] }, /secrets\[1\] must be .* got a string of 14 characters/],
    [{ secrets: [null] }, /secrets\[0\] .* got null/],
    [{ secrets: SECRET, tolerance: 0 }, /tolerance must be a positive integer of seconds, got 0/],
    [{ secrets: SECRET, tolerance: 1.5 }, /tolerance must be .* got 1.5/],
    [{ secrets: SECRET, tolerance: '300' }, /tolerance must be .* got "300"/]
  ]
  for (const [opts, message] of cases) {
    t.throws(() => standardWebhooks(opts as StandardWebhooksOptions), { name: 'TypeError', message }, JSON.stringify(opts) ?? 'undefined')
  }
  t.throws(() => signStandardWebhook('whsec_c2hvcnQ=', 'id', 1, ''), { name: 'TypeError', message: /signStandardWebhook: secret must be whsec_<base64> of at least 16 bytes, got a string of 14 characters/ })
})
