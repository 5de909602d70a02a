import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { signToken } from '../../plugins/auth/sign.js'
import { SECRET, SKIP, call, eventually, sql, freshDatabase, startService, type Service } from './helper.js'

// Outgoing events (reference contract, "Outgoing events"): a change that commits has its
// events, whatever happens to the instance after the commit; and instances sharing one
// database deliver each event once.

const INSECURE = { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' }
const WRITE = { authorization: `Bearer ${signToken({ secret: SECRET, sub: 'fault-tests', scope: ['authors:write', 'webhooks:read', 'webhooks:write'], expiresIn: '1h' })}` }

/** A subscriber on 127.0.0.1 counting deliveries by webhook-id; `hold` keeps answers back until released. */
async function receiver (t: { teardown: (fn: () => unknown) => void }): Promise<{ url: string, seen: Map<string, number>, hold: (on: boolean) => void, held: () => number }> {
  const seen = new Map<string, number>()
  let holding = false
  const waiting: ServerResponse[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = req.headers['webhook-id'] as string
      if (holding) { waiting.push(res); return }
      seen.set(id, (seen.get(id) ?? 0) + 1)
      res.statusCode = 204
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    hold: (on) => { holding = on },
    held: () => waiting.length
  }
}

const succeeded = async (url: string): Promise<number | undefined> => (await sql<{ n: number }>(url, "SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'SUCCEEDED'"))[0]?.n

async function authors (base: string, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    const operations = Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ action: 'CREATE', entity: { name: `${prefix}-${i + j}`, email: 'e@example.com' } }))
    const res = await call(base, 'PATCH', '/v1/authors', { operations })
    if (res.status !== 200 || res.body.status !== 'SUCCEEDED') throw new Error(`bulk: ${res.status} ${res.text.slice(0, 300)}`)
  }
}

t.test('SIGKILL between the commit and the delivery: after a restart every event is delivered', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  const hook = await receiver(t)
  let svc: Service = await startService(t, db.url, INSECURE)
  const sub = await call(svc.base, 'POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] }, WRITE)
  t.equal(sub.status, 201, sub.text)
  hook.hold(true)
  await authors(svc.base, 50, 'killed')
  // Attempts in flight, none answered: the instance dies holding their leases.
  await eventually(async () => hook.held() > 0, 30_000, 'attempts started')
  svc.child.kill('SIGKILL')
  await svc.exited
  hook.hold(false)
  const pending = (await sql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'PENDING'"))[0]?.n
  t.equal(pending, 50, 'every event committed with its change, none delivered')
  svc = await startService(t, db.url, INSECURE)
  await eventually(async () => hook.seen.size === 50, 120_000, 'every event delivered after the restart')
  // The outcomes are recorded in batches, just after the answers.
  await eventually(async () => (await succeeded(db.url)) === 50, 30_000, 'every delivery recorded')
  const states = await sql<{ status: string, n: number }>(db.url, 'SELECT status, count(*)::int AS n FROM event_deliveries GROUP BY status')
  t.strictSame(states, [{ status: 'SUCCEEDED', n: 50 }])
  t.strictSame([...hook.seen.values()].filter(n => n !== 1), [], 'each answered once')
})

t.test('two instances, 1,000 events: each delivered exactly once', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  const hook = await receiver(t)
  const a = await startService(t, db.url, INSECURE)
  const b = await startService(t, db.url, INSECURE)
  t.equal((await call(a.base, 'POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] }, WRITE)).status, 201)
  await Promise.all([authors(a.base, 500, 'a'), authors(b.base, 500, 'b')])
  await eventually(async () => hook.seen.size === 1000, 120_000, 'every event delivered')
  await eventually(async () => (await succeeded(db.url)) === 1000, 30_000, 'every delivery recorded')
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal(hook.seen.size, 1000)
  t.strictSame([...hook.seen.values()].filter(n => n !== 1), [], 'no webhook-id delivered twice')
  const owners = await sql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'SUCCEEDED' AND attempt_count = 1")
  t.equal(owners[0]?.n, 1000, 'one attempt each')
})

t.test('WEBHOOK_DELIVERY=false: an instance that only writes events; another delivers them', { skip: SKIP }, async t => {
  const db = await freshDatabase(t)
  const hook = await receiver(t)
  const writer = await startService(t, db.url, { ...INSECURE, WEBHOOK_DELIVERY: 'false' })
  t.equal((await call(writer.base, 'POST', '/v1/webhook-subscriptions', { url: hook.url, events: ['author.created'] }, WRITE)).status, 201)
  await authors(writer.base, 100, 'written')
  // Several of its polls long: a delivering instance would have claimed by now.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.equal(hook.seen.size, 0, 'nothing delivered by the instance that does not deliver')
  const untouched = await sql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'PENDING' AND attempt_count = 0 AND lease_owner IS NULL")
  t.equal(untouched[0]?.n, 100, 'every event written, none claimed')
  await startService(t, db.url, INSECURE)
  await eventually(async () => hook.seen.size === 100, 120_000, 'every event delivered by the other instance')
  t.strictSame([...hook.seen.values()].filter(n => n !== 1), [], 'each once')
})
