import t from 'tap'
import openapi from '../../plugins/openapi/index.js'
import { registerWebhook, sharedToken, standardWebhooks } from '../../plugins/webhooks/index.js'
import { pglite } from '../support/databases.js'
import { inlineHeaders } from '../openapi/support.js'
import { SECRET, TOKEN, build } from './helper.js'

// What the interface document says of a webhook consumer: the headers its verifier reads,
// how it authenticates, and the transport rule.

t.test('the verifiers describe the headers they read', async t => {
  const standard = standardWebhooks({ secrets: SECRET, tolerance: 120 }).documentation
  t.strictSame(Object.keys(standard?.headers ?? {}), ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
  t.match(standard?.headers['webhook-timestamp']?.description, /more than 120 seconds/, 'the tolerance configured')
  t.equal(standard?.headers['webhook-timestamp']?.pattern, '^\\d{1,15}$', 'as it is checked')
  t.match(standard?.description, /Standard Webhooks/)

  const bearer = sharedToken({ tokens: TOKEN }).documentation
  t.strictSame(Object.keys(bearer?.headers ?? {}), ['webhook-id'], 'OpenAPI ignores an Authorization parameter: told in the description')
  t.match(bearer?.description, /Authorization: Bearer <token>/)
  const own = sharedToken({ tokens: TOKEN, header: 'Svc-Producer-Token', idHeader: false }).documentation
  t.strictSame(Object.keys(own?.headers ?? {}), ['svc-producer-token'], 'its own header; no id header')
  t.match(own?.description, /the svc-producer-token header/)
})

t.test('the operation tells of the verifier and of HTTPS', async t => {
  const store = await pglite.create(t)
  const handler = async (): Promise<void> => {}
  for (const allowHttp of [false, true]) {
    const app = await build(t, {
      store,
      plugin: { allowHttp },
      before: async (app) => { await app.register(openapi) },
      routes: (app) => {
        registerWebhook(app, { producer: 'signed', verifier: standardWebhooks({ secrets: SECRET }), handler })
        // A verifier of one's own, without documentation: only the transport is told.
        registerWebhook(app, { producer: 'custom', verifier: async () => ({ id: null }), handler })
      }
    })
    const doc = inlineHeaders(app.swagger() as Record<string, any>)
    const signed = doc.paths['/_webhooks/signed/'].post
    const custom = doc.paths['/_webhooks/custom/'].post
    const rule = allowHttp ? /Plain HTTP is accepted too/ : /HTTPS only: .* X-Forwarded-Proto: https, gives 403/
    t.match(signed.description, rule, `allowHttp ${String(allowHttp)}`)
    t.match(signed.description, /^Signed with Standard Webhooks/)
    t.ok(signed.parameters.some((p: Record<string, unknown>) => p.name === 'webhook-signature' && p.required === true))
    t.match(custom.description, rule)
    t.notOk((custom.parameters ?? []).some((p: Record<string, unknown>) => String(p.name).startsWith('webhook-')), 'no headers it does not read')
  }
})
