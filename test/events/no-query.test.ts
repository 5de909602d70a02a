import t from 'tap'
import { databases } from '../support/databases.js'
import { client, receiver, startEvents } from './helper.js'

// A query parameter on a subscription's item routes or its writes is refused, not ignored, as on
// every other resource (conventions: Simple filtering 9, filters apply to collection GETs only).

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const hook = await receiver(t)
    const { base } = await startEvents(t, store)
    const call = client(base)
    const path = '/v1/webhook-subscriptions'
    const s = (await call('POST', path, { url: hook.url, events: ['author.created'], description: 'kept' })).body
    const item = `${path}/${s.id as string}`
    const cases: Array<[string, string, unknown, Record<string, string>]> = [
      ['POST', `${path}?active=true`, { url: hook.url, events: ['author.created'], description: 'not made' }, {}],
      ['GET', `${item}?fields=url`, undefined, {}],
      ['PATCH', `${item}?active=false`, { description: 'changed' }, { 'if-match': s.etag }],
      ['DELETE', `${item}?active=false`, undefined, {}],
      ['POST', `${item}/deliveries/00000000-0000-4000-8000-000000000000/retry?now=1`, undefined, {}]
    ]
    for (const [method, url, body, headers] of cases) {
      const res = await call(method, url, body, headers)
      t.equal(res.status, 400, `${method} ${url}`)
      const parameter = new URL(url, base).searchParams.keys().next().value
      t.same(res.body.context.map((c: { field: string, source: string }) => [c.field, c.source]), [[parameter, 'query']], `${method} ${url}: names the parameter`)
    }
    const still = await call('GET', item)
    t.equal(still.status, 200, 'nothing was deleted')
    t.match(still.body, { description: 'kept', active: true, etag: s.etag }, 'nor changed')
    const listed = (await call('GET', `${path}?limit=100`)).body.results as Array<{ description: string }>
    t.equal(listed.filter(x => x.description === 'not made').length, 0, 'nor created')
  })
}
