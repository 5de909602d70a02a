import t from 'tap'
import { build } from '../../examples/events.js'
import { signToken } from '../../plugins/auth/sign.js'
import { pglite } from '../support/databases.js'
import { receiver, verify } from '../events/helper.js'

const secret = 'an example secret of at least 32 bytes!!'

t.test('the events example: a resource\'s writes and a route of its own emit, delivered signed after the commit', async (t) => {
  const store = await pglite.create(t)
  const hook = await receiver(t)
  const app = await build(store, secret, { allowInsecureTargets: true, pollMillis: 20 })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const token = signToken({ secret, sub: 'adopter', scope: ['notes:read', 'notes:write', 'orders:write', 'webhooks:write'] })
  const plain = { 'user-agent': 'example-test/1', authorization: `Bearer ${token}` }
  const headers = { ...plain, 'content-type': 'application/json' }
  const sub = await app.inject({ method: 'POST', url: '/v1/webhook-subscriptions', headers, payload: { url: hook.url, events: ['note.created', 'order.shipped'] } })
  t.equal(sub.statusCode, 201, sub.body)
  const { secret: whsec } = JSON.parse(sub.body)

  const note = await app.inject({ method: 'POST', url: '/v1/notes', headers, payload: { text: 'hello' } })
  t.equal(note.statusCode, 201)
  await store.query("INSERT INTO orders (id) VALUES ('o-1')")
  t.equal((await app.inject({ method: 'POST', url: '/v1/orders/o-1/ship', headers: { ...plain, 'x-request-id': 'ship-1' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/v1/orders/o-2/ship', headers: plain })).statusCode, 404, 'rolled back: no event')
  await hook.waitFor(2)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(hook.got.length, 2)
  for (const r of hook.got) verify(whsec, r)
  const byType = Object.fromEntries(hook.got.map(r => [r.json.type, r]))
  t.match(byType['note.created']?.json.data, { text: 'hello', ref: /^svc:note::/ })
  t.strictSame(byType['order.shipped']?.json.data, { id: 'o-1', shipped: true })
  t.equal(byType['order.shipped']?.headers['x-request-id'], 'ship-1')
  t.equal(byType['order.shipped']?.headers['svc-service'], 'id=1b4e28ba-2fa1-41d2-883f-0016d3cca427; name=notes-service')
})
