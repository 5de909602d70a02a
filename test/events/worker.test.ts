import t from 'tap'
import type { ServerResponse } from 'node:http'
import { databases, postgres } from '../support/databases.js'
import type { Store } from '../../index.js'
import { client, receiver, startEvents, type Received } from './helper.js'

// The delivery worker: a slow subscriber holds no more than its share of attempts while the
// others are delivered; deliveries are claimed and recorded through `workerStore` when given.

const PER_SUBSCRIPTION = 2
const EVENTS = 12

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    // Long enough for the slow subscriber's attempts to stay in flight through the test.
    const { base } = await startEvents(t, store, {}, { perSubscription: PER_SUBSCRIPTION, concurrency: 8, timeoutMillis: 60_000 })
    const call = client(base)

    t.test('a subscriber that does not answer holds its share of attempts; the others are delivered meanwhile', async t => {
      const fast = await receiver(t)
      const slow = await receiver(t)
      const held: ServerResponse[] = []
      slow.setRespond((_r: Received, res: ServerResponse) => { held.push(res) })
      for (const url of [slow.url, fast.url]) t.equal((await call('POST', '/v1/webhook-subscriptions', { url, events: ['author.created'] })).status, 201)
      for (let i = 0; i < EVENTS; i++) t.equal((await call('POST', '/v1/authors', { name: `Worker ${i}`, email: `w${i}@example.com` })).status, 201)
      await fast.waitFor(EVENTS)
      await slow.waitFor(PER_SUBSCRIPTION)
      // Were the limit not kept, more would arrive meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200))
      t.equal(fast.got.length, EVENTS, 'every event reached the subscriber that answers')
      t.equal(slow.got.length, PER_SUBSCRIPTION, 'the silent one holds perSubscription attempts, no more')
      // Answered now: the rest follow.
      slow.setRespond((_r, res) => { res.statusCode = 204; res.end() })
      for (const res of held) { res.statusCode = 204; res.end() }
      await slow.waitFor(EVENTS)
      t.strictSame(new Set(slow.got.map(r => r.headers['webhook-id'])).size, EVENTS, 'each event once')
    })

    t.test('subscribers on one host: a silent one holds its share of attempts, not the host\'s connections', async t => {
      const host = await receiver(t)
      const held: ServerResponse[] = []
      host.setRespond((r: Received, res: ServerResponse) => {
        if (r.path.endsWith('/silent')) held.push(res)
        else { res.statusCode = 204; res.end() }
      })
      for (const url of [`${host.url}/silent`, `${host.url}/answers`]) t.equal((await call('POST', '/v1/webhook-subscriptions', { url, events: ['document.created'] })).status, 201)
      const author = (await call('POST', '/v1/authors', { name: 'One host', email: 'one-host@example.com' })).body
      for (let i = 0; i < EVENTS; i++) t.equal((await call('POST', '/v1/documents', { name: `one-host-${i}`, authorId: author.id, kind: 'INVOICE' })).status, 201)
      // Until the silent one is answered, its neighbour's events arrive only over connections of their own.
      const answered = async (): Promise<number> => host.got.filter(r => r.path.endsWith('/answers')).length
      const deadline = Date.now() + 30_000
      while (await answered() < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      t.equal(await answered(), EVENTS, 'every event reached the subscription that answers, on the same host')
      t.equal(held.length, PER_SUBSCRIPTION, 'the silent one holds perSubscription attempts')
      host.setRespond((_r, res) => { res.statusCode = 204; res.end() })
      for (const res of held) { res.statusCode = 204; res.end() }
      await host.waitFor(2 * EVENTS)
    })

    t.test('a 2xx is a success whatever its body; a redirect, never followed, and a problem are retried', async t => {
      const hook = await receiver(t)
      let n = 0
      hook.setRespond((_r, res) => {
        n++
        if (n === 1) { res.writeHead(302, { location: hook.url }); res.end(); return }
        if (n === 2) { res.writeHead(400, { 'content-type': 'application/problem+json' }); res.end('{"type":"about:blank","title":"Bad Request","status":400}'); return }
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.end('x'.repeat(200_000))
      })
      // Another subscriber says its body is JSON, and sends none that parses.
      const mislabelled = await receiver(t)
      mislabelled.setRespond((_r, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('OK') })
      const s = (await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.updated'] })).body
      const m = (await call('POST', '/v1/webhook-subscriptions', { url: mislabelled.url, events: ['author.updated'] })).body
      const author = (await call('POST', '/v1/authors', { name: 'Answers', email: 'answers@example.com' })).body
      t.equal((await call('PATCH', `/v1/authors/${author.id as string}`, { name: 'Answered' })).status, 204)
      await hook.waitFor(3)
      const deadline = Date.now() + 30_000
      const latest = async (id: string): Promise<any> => (await call('GET', `/v1/webhook-subscriptions/${id}/deliveries`)).body.results[0]
      let d: any
      while (d?.status !== 'SUCCEEDED' && Date.now() < deadline) d = await latest(s.id as string)
      t.match(d, { status: 'SUCCEEDED', attemptCount: 3, lastStatusCode: 200 })
      let e: any
      while (e?.status !== 'SUCCEEDED' && Date.now() < deadline) e = await latest(m.id as string)
      t.match(e, { status: 'SUCCEEDED', attemptCount: 1, lastStatusCode: 200 }, 'a 2xx whose JSON does not parse is a success too')
      t.equal(hook.got.length, 3, 'the redirect was not followed')
      t.equal(new Set(hook.got.map(r => r.headers['webhook-id'])).size, 1)
    })
  })
}

t.test('workerStore: claims and records go through the store given for them', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t)
  const sibling = await (postgres.sibling as NonNullable<typeof postgres.sibling>)(t, store)
  let statements = 0
  const workerStore = new Proxy(sibling, {
    get (target, key) {
      if (key === 'query') return async (...args: Parameters<Store['query']>) => { statements++; return await target.query(...args) }
      const value = (target as unknown as Record<string | symbol, unknown>)[key]
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  const { base } = await startEvents(t, store, {}, { workerStore })
  const call = client(base)
  const hook = await receiver(t)
  t.equal((await call('POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] })).status, 201)
  const before = statements
  t.equal((await call('POST', '/v1/authors', { name: 'Worker store', email: 'ws@example.com' })).status, 201)
  await hook.waitFor(1)
  const deadline = Date.now() + 30_000
  let status = ''
  while (status !== 'SUCCEEDED' && Date.now() < deadline) {
    const subs = (await call('GET', '/v1/webhook-subscriptions')).body.results
    const list = (await call('GET', `/v1/webhook-subscriptions/${subs[0].id as string}/deliveries`)).body.results
    status = list[0]?.status ?? ''
  }
  t.equal(status, 'SUCCEEDED', 'recorded')
  t.ok(statements - before >= 2, `claimed and recorded through workerStore (${statements - before} statements)`)
})
