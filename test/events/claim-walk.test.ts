import t from 'tap'
import fc from 'fast-check'
import { databases } from '../support/databases.js'
import { EventTables } from '../../store/events.js'
import { migrate, type Queryable } from '../../store/index.js'

// A claim finds the subscriptions with deliveries due by stepping through the due index, not
// by looking at every active subscription: what it costs follows the work there is, not how
// many subscriptions a context keeps. And it claims what the rule says, whatever the mix of
// contexts, switched-off subscriptions, leases, retries and skipped subscriptions.

const AT = new Date('2026-01-01T00:10:00Z')
const seconds = (n: number): string => new Date(AT.getTime() + n * 1000).toISOString()
const SUBSCRIPTIONS = 400

/** Index and sequential scans of both tables so far in this transaction. */
async function scans (tx: Queryable): Promise<number> {
  const { rows } = await tx.query("SELECT coalesce(sum(coalesce(idx_scan, 0) + seq_scan), 0)::int AS n FROM pg_stat_xact_user_tables WHERE relname IN ('walk_subscriptions', 'walk_deliveries')")
  return (rows[0] as { n: number }).n
}

interface Delivery { sub: number, state: 'due' | 'waiting' | 'leased' | 'lease-over' | 'succeeded', at: number }
interface Case {
  subs: Array<{ ctx: string, id: string, active: boolean }>
  deliveries: Delivery[]
  skip: string[]
  limit: number
  per: number
}

const ids = ['s1', 's2', 's3', 's4', 's5']
const caseOf = fc.record({
  // An id may repeat in another context: `skip` names ids, whatever their context.
  subs: fc.uniqueArray(fc.record({ ctx: fc.constantFrom('a', 'b', 'c'), id: fc.constantFrom(...ids), active: fc.boolean() }), { minLength: 1, maxLength: 8, selector: s => `${s.ctx}/${s.id}` }),
  deliveries: fc.array(fc.record({
    sub: fc.nat(7),
    state: fc.constantFrom<Delivery['state']>('due', 'due', 'waiting', 'leased', 'lease-over', 'succeeded'),
    at: fc.integer({ min: 1, max: 500 })
  }), { maxLength: 40 }),
  skip: fc.subarray(ids),
  limit: fc.integer({ min: 1, max: 20 }),
  per: fc.integer({ min: 1, max: 4 })
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const tables = new EventTables('walk')
    await migrate(store, tables.migrations())

    async function load (subs: Case['subs'], deliveries: Delivery[]): Promise<void> {
      await store.query('DELETE FROM walk_deliveries')
      await store.query('DELETE FROM walk_subscriptions')
      await store.query(`INSERT INTO walk_subscriptions (ctx, id, url, events, active, secret, etag)
        SELECT c, i, 'https://example.com/hook', ARRAY['document.created'], a, 'whsec_x', '"e"'
        FROM unnest($1::text[], $2::text[], $3::boolean[]) AS x(c, i, a)`,
      [subs.map(s => s.ctx), subs.map(s => s.id), subs.map(s => s.active)])
      const rows = deliveries.flatMap((d, n) => {
        const s = subs[d.sub]
        if (s === undefined) return []
        const waiting = d.state === 'waiting'
        return [{
          ctx: s.ctx,
          sub: s.id,
          id: `d${String(n).padStart(3, '0')}`,
          status: d.state === 'succeeded' ? 'SUCCEEDED' : 'PENDING',
          // Distinct times, so "oldest due first" has one answer.
          next: seconds((waiting ? 1 : -1) * (d.at * 100 + n)),
          lease: d.state === 'leased' ? seconds(60) : d.state === 'lease-over' ? seconds(-1) : null
        }]
      })
      await store.query(`INSERT INTO walk_deliveries (ctx, id, subscription_id, event_type, payload, status, next_attempt_at, lease_owner, lease_until, created_at)
        SELECT c, i, s, 'document.created', '{}', st, n::timestamptz, CASE WHEN l IS NULL THEN NULL ELSE 'other' END, l::timestamptz, $7::timestamptz
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS x(c, i, s, st, n, l)`,
      [rows.map(r => r.ctx), rows.map(r => r.id), rows.map(r => r.sub), rows.map(r => r.status), rows.map(r => r.next), rows.map(r => r.lease), seconds(-100_000)])
    }

    t.test('a claim steps over what is not due: its scans do not grow with the subscriptions', async t => {
      const subs = Array.from({ length: SUBSCRIPTIONS }, (_, n) => ({ ctx: `ctx-${n % 5}`, id: `sub-${String(n).padStart(4, '0')}`, active: true }))
      const cases: Array<{ name: string, deliveries: Delivery[], claimed: string[] }> = [
        { name: 'nothing pending', deliveries: [], claimed: [] },
        {
          name: 'every subscription has deliveries waiting for their retry',
          deliveries: subs.flatMap((_, sub) => [{ sub, state: 'waiting' as const, at: 1 }, { sub, state: 'waiting' as const, at: 2 }]),
          claimed: []
        },
        {
          name: 'one due among them, behind a switched-off subscription with a queue due',
          deliveries: [
            ...subs.flatMap((_, sub) => [{ sub, state: 'waiting' as const, at: 1 }]),
            { sub: 200, state: 'due', at: 3 }
          ],
          claimed: [`d${SUBSCRIPTIONS}`]
        }
      ]
      for (const c of cases) {
        await load(subs, c.deliveries)
        await store.query("UPDATE walk_subscriptions SET active = false WHERE id = 'sub-0199'")
        await store.query(`INSERT INTO walk_deliveries (ctx, id, subscription_id, event_type, payload, status, next_attempt_at, created_at)
          SELECT 'ctx-4', 'off-' || n, 'sub-0199', 'document.created', '{}', 'PENDING', $1::timestamptz, $1::timestamptz FROM generate_series(1, 50) AS n`, [seconds(-10)])
        const { claimed, used } = await store.transaction(async tx => {
          const before = await scans(tx)
          const claimed = await tables.claim(tx, 'me', AT, 60_000, 20, [], 4)
          return { claimed: claimed.map(d => d.id), used: await scans(tx) - before }
        })
        t.strictSame(claimed, c.claimed, `${c.name}: claimed`)
        // Looking at each active subscription took a scan each: SUBSCRIPTIONS of them.
        t.ok(used <= 12, `${c.name}: ${used} scans for ${SUBSCRIPTIONS} subscriptions`)
      }
    })

    t.test('claims what the rule says: due, unleased, of active subscriptions not skipped, oldest first, within both limits', async t => {
      await fc.assert(fc.asyncProperty(caseOf, async c => {
        await load(c.subs, c.deliveries)
        const claimed = await tables.claim(store, 'me', AT, 60_000, c.limit, c.skip, c.per)
        const { rows } = await store.query(`SELECT ctx, id, subscription_id AS sub, status = 'PENDING' AND next_attempt_at <= $1 AS due,
          extract(epoch FROM next_attempt_at)::float8 AS next, lease_owner AS owner, lease_until IS NULL OR lease_until < $1 AS free FROM walk_deliveries`, [AT])
        const all = rows as Array<{ ctx: string, id: string, sub: string, due: boolean, next: number, owner: string | null, free: boolean }>
        const taken = new Set(claimed.map(d => d.id))
        // What each subscription had to claim, oldest due first.
        const claimable = new Map<string, string[]>()
        for (const s of c.subs) {
          if (!s.active || c.skip.includes(s.id)) continue
          // Claimed by this claim, or free of any lease before it.
          const due = all.filter(d => d.ctx === s.ctx && d.sub === s.id && d.due && (d.owner === 'me' || d.free))
          claimable.set(`${s.ctx}/${s.id}`, due.sort((x, y) => x.next - y.next).map(d => d.id))
        }
        const bySub = new Map<string, string[]>()
        for (const d of claimed) {
          const key = `${d.ctx}/${d.subscriptionId}`
          bySub.set(key, [...(bySub.get(key) ?? []), d.id])
        }
        for (const [key, got] of bySub) {
          const may = claimable.get(key)
          if (may === undefined) throw new Error(`claimed ${got.join(', ')} of ${key}, which has nothing to claim`)
          // The oldest due first: what was taken is the head of its queue, in any order.
          const head = may.slice(0, got.length)
          if (got.length > c.per || [...got].sort().join() !== [...head].sort().join()) throw new Error(`${key}: claimed ${got.join(', ')} of ${may.join(', ')} (at most ${c.per})`)
        }
        const could = [...claimable.values()].reduce((n, q) => n + Math.min(q.length, c.per), 0)
        if (claimed.length !== Math.min(c.limit, could)) throw new Error(`claimed ${claimed.length}, expected ${Math.min(c.limit, could)}`)
        // Each claimed row now carries this claim's lease.
        for (const d of all.filter(d => taken.has(d.id))) if (d.owner !== 'me') throw new Error(`${d.id} not leased to me`)
      }), { numRuns: 60 })
    })
  })
}
