import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { registerWebhook, sharedToken, type SharedTokenOptions } from '../../plugins/webhooks/index.js'
import { pglite } from '../support/databases.js'
import { TOKEN, bodyOf, build, bump, counters, countOf } from './helper.js'

const URL = '/_webhooks/billing/'
const BODY = '{"invoice":"i-1"}'
const HTTPS = { 'content-type': 'application/json', 'x-forwarded-proto': 'https' }
const OTHER_TOKEN = 'the-next-token-after-rotation-0002'

t.test('shared-token verifier', async t => {
  const store = await pglite.create(t)
  await counters(store)
  let n = 0

  async function billing (t: Test, opts: SharedTokenOptions = { tokens: TOKEN }): Promise<{ app: FastifyInstance, name: string, ids: Array<string | null> }> {
    const name = `billing-${++n}`
    const ids: Array<string | null> = []
    const app = await build(t, {
      store,
      routes: (app) => registerWebhook(app, {
        producer: 'billing',
        verifier: sharedToken(opts),
        handler: async (_payload, tx, request) => { ids.push(request.webhook?.id ?? null); await bump(tx, name) }
      })
    })
    return { app, name, ids }
  }

  t.test('Authorization: Bearer <token> with a webhook-id: 204, applied once', async t => {
    const { app, name, ids } = await billing(t)
    const headers = { ...HTTPS, authorization: `Bearer ${TOKEN}`, 'webhook-id': 'evt_1' }
    for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers })).statusCode, 204)
    t.strictSame(ids, ['evt_1'])
    t.equal(await countOf(store, name), 1)
  })

  t.test('missing, malformed or wrong tokens: 401; a missing id: 400', async t => {
    const { app, ids } = await billing(t)
    const table: Array<[string, Record<string, string>, number, RegExp]> = [
      ['no Authorization', { 'webhook-id': 'e' }, 401, /has no authorization header; the producer must send the endpoint's token as Bearer <token>/],
      ['lowercase scheme', { authorization: `bearer ${TOKEN}`, 'webhook-id': 'e' }, 401, /must be Bearer <token>, with that capitalization/],
      ['Basic scheme', { authorization: `Basic ${TOKEN}`, 'webhook-id': 'e' }, 401, /must be Bearer <token>/],
      ['bare token', { authorization: TOKEN, 'webhook-id': 'e' }, 401, /must be Bearer <token>/],
      ['wrong token', { authorization: `Bearer ${OTHER_TOKEN}`, 'webhook-id': 'e' }, 401, /is not the endpoint's token/],
      ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, -1)}`, 'webhook-id': 'e' }, 401, /is not the endpoint's token/],
      ['the token and more', { authorization: `Bearer ${TOKEN}x`, 'webhook-id': 'e' }, 401, /is not the endpoint's token/],
      ['no webhook-id', { authorization: `Bearer ${TOKEN}` }, 400, /has no webhook-id header; the producer must send one id per delivery/]
    ]
    for (const [label, headers, status, detail] of table) {
      const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...HTTPS, ...headers } })
      t.equal(res.statusCode, status, `${label}: status`)
      t.match(bodyOf(res), { status, detail }, `${label}: detail`)
      t.notMatch(res.body, TOKEN.slice(0, 12), `${label}: the token is never shown`)
      t.equal(res.headers['www-authenticate'], status === 401 ? 'Bearer' : undefined, `${label}: challenge`)
    }
    t.strictSame(ids, [])
  })

  t.test('rotation: either token passes', async t => {
    const { app, ids } = await billing(t, { tokens: [TOKEN, OTHER_TOKEN] })
    for (const [i, token] of [TOKEN, OTHER_TOKEN].entries()) {
      const res = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...HTTPS, authorization: `Bearer ${token}`, 'webhook-id': `r${i}` } })
      t.equal(res.statusCode, 204)
    }
    t.strictSame(ids, ['r0', 'r1'])
  })

  t.test('a header of its own with the bare token, and another id header', async t => {
    const { app, ids } = await billing(t, { tokens: TOKEN, header: 'X-Producer-Token', idHeader: 'X-Delivery' })
    const ok = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...HTTPS, 'x-producer-token': TOKEN, 'x-delivery': 'd-9' } })
    t.equal(ok.statusCode, 204)
    t.strictSame(ids, ['d-9'])
    const missing = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...HTTPS, authorization: `Bearer ${TOKEN}`, 'x-delivery': 'd-9' } })
    t.equal(missing.statusCode, 401)
    t.match(bodyOf(missing).detail, /has no x-producer-token header; the producer must send the endpoint's token\.$/)
    t.equal(missing.headers['www-authenticate'], undefined, 'no scheme to name')
    const noId = await app.inject({ method: 'POST', url: URL, payload: BODY, headers: { ...HTTPS, 'x-producer-token': TOKEN, 'webhook-id': 'w' } })
    t.equal(noId.statusCode, 400)
    t.match(bodyOf(noId).detail, /has no x-delivery header/)
  })

  t.test('idHeader false: no deduplication, every delivery applied', async t => {
    const { app, name, ids } = await billing(t, { tokens: TOKEN, idHeader: false })
    const headers = { ...HTTPS, authorization: `Bearer ${TOKEN}`, 'webhook-id': 'ignored' }
    for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'POST', url: URL, payload: BODY, headers })).statusCode, 204)
    t.strictSame(ids, [null, null])
    t.equal(await countOf(store, name), 2)
  })
})

t.test('options are checked at creation, never echoing a token', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /sharedToken: tokens must be a token or a non-empty array of tokens, got undefined/],
    [{ tokens: [] }, /got an empty array/],
    [{ tokens: 'short' }, /tokens\[0\] must be a string of at least 16 characters without surrounding spaces, got a string of 5 characters/],
    [{ tokens: [TOKEN, ` ${TOKEN}`] }, /tokens\[1\] .* got a string of 36 characters/],
    [{ tokens: [7] }, /tokens\[0\] .* got 7/],
    [{ tokens: TOKEN, header: 'bad header' }, /header must be a header name, got "bad header"/],
    [{ tokens: TOKEN, header: 42 }, /header must be a header name, got 42/],
    [{ tokens: TOKEN, idHeader: true }, /idHeader must be a header name, got true/]
  ]
  for (const [opts, message] of cases) {
    t.throws(() => sharedToken(opts as SharedTokenOptions), { name: 'TypeError', message }, JSON.stringify(opts) ?? 'undefined')
  }
})
