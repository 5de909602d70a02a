import t from 'tap'
import { databases } from '../support/databases.js'
import { SerializationFailure } from '../../store/errors.js'
import type { Store } from '../../store/types.js'
import { client, startEvents } from './helper.js'

// A change of a subscription that still loses to concurrent transactions once the store's
// retries are spent (a deadlock each time, say) is a 409 the client may retry, as a resource's
// write is: never a 500, which says the server is at fault.

for (const db of databases) {
  t.test(`${db.label}: a subscription's change that keeps losing to concurrent ones`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    let losing = false
    const contended = {
      ...store,
      transaction: async (...args: Parameters<Store['transaction']>) => {
        if (losing) throw new SerializationFailure({ sqlState: '40P01' })
        return await store.transaction(...args)
      }
    } as unknown as Store
    const { base } = await startEvents(t, contended, {}, { worker: false })
    const call = client(base)
    const s = (await call('POST', '/v1/webhook-subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['author.created'] })).body
    const path = `/v1/webhook-subscriptions/${s.id as string}`
    losing = true
    const cases: Array<[string, () => ReturnType<typeof call>]> = [
      ['PATCH', async () => await call('PATCH', path, { description: 'renamed' }, { 'if-match': s.etag as string })],
      ['DELETE', async () => await call('DELETE', path)],
      ['DELETE with a key', async () => await call('DELETE', path, undefined, { 'svc-idempotency-key': 'a3c0a1de-5f9b-4a43-9d2c-0f2e5b8a7c11' })]
    ]
    for (const [name, send] of cases) {
      const answer = await send()
      t.equal(answer.status, 409, name)
      t.match(answer.body, { status: 409, detail: 'The webhook subscription was changed by a concurrent request; retry.' }, name)
    }
    losing = false
    t.equal((await call('GET', path)).status, 200, 'nothing was changed')
  })
}
