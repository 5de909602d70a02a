import t from 'tap'
import { build } from '../../examples/webhook.js'
import { signStandardWebhook } from '../../plugins/webhooks/standard.js'
import { pglite } from '../support/databases.js'

const secret = `whsec_${Buffer.from('an example webhook secret of 32 bytes').toString('base64')}`
const url = '/_webhooks/billing/payment-settled'

function delivery (id: string, payload: unknown, extra: Record<string, string> = {}, key = secret): { method: 'POST', url: string, headers: Record<string, string>, payload: string } {
  const body = JSON.stringify(payload)
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    method: 'POST',
    url,
    payload: body,
    headers: {
      'content-type': 'application/json',
      'x-forwarded-proto': 'https',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(key, id, timestamp, body),
      ...extra
    }
  }
}

t.test('the webhook example applies each signed delivery once', async (t) => {
  const store = await pglite.create(t)
  const app = await build(store, { trustProxy: true }, secret)
  t.teardown(() => app.close())
  const payments = async (): Promise<unknown[]> => (await store.query('SELECT invoice_id, amount::text FROM payments ORDER BY invoice_id')).rows

  const first = await app.inject(delivery('msg_1', { invoiceId: 'inv-1', amount: '120.50' }))
  t.equal(first.statusCode, 204)
  const replay = await app.inject(delivery('msg_1', { invoiceId: 'inv-1', amount: '120.50' }))
  t.equal(replay.statusCode, 204, 'a replayed delivery is acknowledged')
  t.strictSame(await payments(), [{ invoice_id: 'inv-1', amount: '120.50' }], 'and not applied twice')

  const cases: Array<[string, ReturnType<typeof delivery>, number]> = [
    ['forged signature', delivery('msg_2', { invoiceId: 'inv-2', amount: '1' }, {}, `whsec_${Buffer.from('somebody else\'s secret of 32 bytes..').toString('base64')}`), 401],
    ['no signature', delivery('msg_3', { invoiceId: 'inv-3', amount: '1' }, { 'webhook-signature': '' }), 401],
    ['plain HTTP', delivery('msg_4', { invoiceId: 'inv-4', amount: '1' }, { 'x-forwarded-proto': 'http' }), 403],
    ['an amount as a JSON number', delivery('msg_5', { invoiceId: 'inv-5', amount: 1 }), 400]
  ]
  for (const [name, request, status] of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, status, name)
    t.match(res.headers['content-type'], /^application\/problem\+json/, name)
  }
  t.equal((await payments()).length, 1, 'nothing refused was applied')
})
