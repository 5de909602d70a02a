import t, { type Test } from 'tap'
import type { ServerResponse } from 'node:http'
import { databases } from '../support/databases.js'
import { client, receiver, sleep, startEvents } from './helper.js'

// Deliveries claimed ahead wait their turn behind a slow subscriber's attempts in flight. When
// their turn comes, they go where the subscription says then: not to a URL it no longer has, and
// not at all once it is switched off (given back, delivered when it is switched on again).

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // One attempt in flight per subscription: the next one claimed waits its turn.
    const { base } = await startEvents(t, store, {}, { perSubscription: 1, concurrency: 8, timeoutMillis: 60_000 })
    const call = client(base)

    /** A subscription whose receiver holds its first attempt, with a second claimed behind it. */
    async function held (t: Test, n: number): Promise<{ old: Awaited<ReturnType<typeof receiver>>, id: string, answer: () => void }> {
      const old = await receiver(t)
      const waiting: ServerResponse[] = []
      old.setRespond((_r, res) => { waiting.push(res) })
      const s = await call('POST', '/v1/webhook-subscriptions', { url: old.url, events: ['author.created'] })
      for (let i = 0; i < n; i++) t.equal((await call('POST', '/v1/authors', { name: `Ahead ${i}`, email: `ahead${i}@example.com` })).status, 201)
      await old.waitFor(1)
      // The look after the first attempt began claims the next one ahead: two attempts counted.
      while ((await deliveries(s.body.id as string)).filter(d => d.attemptCount === 1).length < 2) await sleep(20)
      return { old, id: s.body.id as string, answer: () => { for (const res of waiting) { res.statusCode = 204; res.end() } } }
    }

    async function deliveries (id: string): Promise<Array<{ status: string, attemptCount: number }>> {
      return (await call('GET', `/v1/webhook-subscriptions/${id}/deliveries`)).body.results
    }

    /** The subscription's deliveries, once none is in an attempt's hands (attempted and recorded, or given back). */
    async function settled (id: string, n: number): Promise<Array<{ status: string, attemptCount: number }>> {
      for (;;) {
        const list = await deliveries(id)
        if (list.length === n && list.every(d => d.status !== 'PENDING' || d.attemptCount === 0)) return list
        await sleep(20)
      }
    }

    t.test('a URL changed while attempts wait their turn: they go to the new URL', async t => {
      const { old, id, answer } = await held(t, 3)
      const now = await receiver(t)
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${id}`, { url: now.url })).status, 204)
      answer()
      await now.waitFor(2)
      t.equal(old.got.length, 1, 'only the attempt in flight when the URL changed reached the old one')
    })

    t.test('a subscription switched off while attempts wait their turn: they are given back, then delivered once it is on', async t => {
      const { old, id, answer } = await held(t, 3)
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${id}`, { active: false })).status, 204)
      old.setRespond((_r, res) => { res.statusCode = 204; res.end() })
      answer()
      const list = await settled(id, 3)
      t.equal(old.got.length, 1, 'nothing sent after it was switched off')
      t.equal(list.filter(d => d.status === 'SUCCEEDED').length, 1)
      t.equal((await call('PATCH', `/v1/webhook-subscriptions/${id}`, { active: true })).status, 204)
      await old.waitFor(3)
      t.equal(new Set(old.got.map(r => r.headers['webhook-id'])).size, 3, 'each event once')
    })
  })
}
