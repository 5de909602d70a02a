import t from 'tap'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { redisRefusalCounts, type SharedRefusalCounts } from '../../plugins/auth/index.js'
import { ConnectionTimeout, RefusalCounts } from '../../store/index.js'
import { databases } from '../support/databases.js'
import { skipRedis, startRedis } from '../rate-limit/redis.js'
import { SECRET, bodyOf, build, hs256 } from './helper.js'

/*
 * The token-guessing throttle across instances (issue 24): with counts of their own, N
 * instances behind one address allow N × max guesses per window; with shared counts (Redis, or
 * a table of the PostgreSQL database) they allow max. The figures are printed for the record.
 */

const MAX = 5
const WINDOW = 60_000
const bad = { authorization: 'Bearer not.a.token' }

/** Bad guesses from one address, round robin over the instances, until one answers 429. */
async function guessesAllowed (instances: FastifyInstance[]): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const res = await (instances[i % instances.length] as FastifyInstance).inject({ url: '/me', remoteAddress: '10.9.9.9', headers: bad })
    if (res.statusCode === 429) return i
    if (res.statusCode !== 401) throw new Error(`unexpected ${res.statusCode}`)
  }
  return Infinity
}

/** A stand-in for Redis or the table: counts in a Map, the way both do. */
function sharedMap (): SharedRefusalCounts & { adds: number } {
  const windows = new Map<string, { count: number, resetAt: number }>()
  return {
    adds: 0,
    async add (key, windowMs, now) {
      this.adds++
      const w = windows.get(key)
      if (w === undefined || w.resetAt <= now) windows.set(key, { count: 1, resetAt: now + windowMs })
      else w.count++
    },
    async read (key, now) {
      const w = windows.get(key)
      return w === undefined || w.resetAt <= now ? { count: 0, resetInMs: 0 } : { count: w.count, resetInMs: w.resetAt - now }
    }
  }
}

t.test('counts of their own: each instance allows max guesses (the figure before sharing)', async (t) => {
  for (const n of [1, 2, 3]) {
    const instances = await Promise.all(Array.from({ length: n }, async () => await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: MAX, timeWindow: WINDOW } })))
    const allowed = await guessesAllowed(instances)
    t.comment(`in memory, ${n} instance(s): ${allowed} guesses allowed per window (max ${MAX})`)
    t.equal(allowed, n * MAX)
  }
})

t.test('shared counts: max guesses however many instances', async (t) => {
  for (const n of [2, 3]) {
    const shared = sharedMap()
    const instances = await Promise.all(Array.from({ length: n }, async () => await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: MAX, timeWindow: WINDOW, shared } })))
    t.equal(await guessesAllowed(instances), MAX, `${n} instances`)
  }
  const shared = sharedMap()
  const app = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 1, timeWindow: 1500, shared } })
  await app.inject({ url: '/me', remoteAddress: '10.0.0.1', headers: bad })
  const stopped = await app.inject({ url: '/me', remoteAddress: '10.0.0.1', headers: { authorization: `Bearer ${hs256({ sub: 'u' })}` } })
  t.equal(stopped.statusCode, 429)
  t.equal(stopped.headers['retry-after'], '2', 'the seconds left of the window, rounded up')
})

t.test('shared counts that fail: reading them is a 503; counting a refusal only logged', async (t) => {
  const warnings: Array<{ msg: string }> = []
  const broken: SharedRefusalCounts = {
    add: async () => { throw new Error('redis is down') },
    read: async () => ({ count: 0, resetInMs: 0 })
  }
  const app = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 1, timeWindow: WINDOW, shared: broken } })
  app.log.warn = ((obj: unknown, msg: string) => { warnings.push({ msg }) }) as never
  t.equal((await app.inject({ url: '/me', headers: bad })).statusCode, 401, 'the refusal is answered')
  t.match(warnings, [{ msg: 'auth: a refusal could not be counted' }])
  const unreadable = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 1, timeWindow: WINDOW, shared: { ...broken, read: async () => { throw new Error('down') } } } })
  const res = await unreadable.inject({ url: '/me', headers: bad })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.match(bodyOf(res), { detail: 'Authentication cannot be checked now; retry later.' })
  t.notMatch(res.body, /down/)
  // Counts kept in the database: its outage answered as on every route, a timeout named.
  const timedOut = await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 1, timeWindow: WINDOW, shared: { ...broken, read: async () => { throw new ConnectionTimeout('No connection to the PostgreSQL server at db:5432 within 5000 ms.') } } } })
  const outage = await timedOut.inject({ url: '/me', headers: bad })
  t.equal(outage.statusCode, 503)
  t.match(bodyOf(outage), { detail: 'The database is unavailable; retry later.', context: [{ code: 'CONNECTION_TIMEOUT' }] })
  t.notMatch(outage.body, /db:5432/)
  await t.rejects(build(t, { verifier: { secret: SECRET }, refusalLimit: { max: 1, timeWindow: WINDOW, shared: {} as never } }), /refusalLimit.shared must have add and read functions/)
})

t.test('redisRefusalCounts: one script call per count and per read', async (t) => {
  const calls: unknown[][] = []
  const stand = { eval: async (...args: unknown[]) => { calls.push(args); return args[0] === calls[0]?.[0] ? 1 : [3, 1200] } }
  const counts = redisRefusalCounts(stand, 'p:')
  await counts.add('1.2.3.4', 60_000, 0)
  t.strictSame(await counts.read('1.2.3.4', 0), { count: 3, resetInMs: 1200 })
  t.match(calls, [[/INCR/, 1, 'p:1.2.3.4', 60_000], [/PTTL/, 1, 'p:1.2.3.4']])
  const none = redisRefusalCounts({ eval: async () => [0, 0] })
  t.strictSame(await none.read('x', 0), { count: 0, resetInMs: 0 })
  const noExpiry = redisRefusalCounts({ eval: async () => [2, -1] })
  t.strictSame(await noExpiry.read('x', 0), { count: 2, resetInMs: 0 }, 'a key without expiry reads as no time left')
})

t.test('two instances on one Redis server', { skip: skipRedis }, async (t) => {
  const url = await startRedis(t)
  const clients = [new Redis(url), new Redis(url)]
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const instances = await Promise.all(clients.map(async (c) => await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: MAX, timeWindow: WINDOW, shared: redisRefusalCounts(c) } })))
  const allowed = await guessesAllowed(instances)
  t.comment(`Redis, 2 instances: ${allowed} guesses allowed per window (max ${MAX})`)
  t.equal(allowed, MAX)
})

const server = databases.find((db) => db.kind === 'pg')
t.test('two instances on one PostgreSQL database', { skip: server?.skip ?? 'no PostgreSQL server entry' }, async (t) => {
  const db = server as NonNullable<typeof server>
  const first = await db.create(t)
  const second = await (db.sibling as NonNullable<typeof db.sibling>)(t, first)
  const counts = [new RefusalCounts(first), new RefusalCounts(second)]
  for (const m of counts[0]?.migrations() ?? []) await first.exec(m.sql as string)
  const instances = await Promise.all(counts.map(async (c) => await build(t, { verifier: { secret: SECRET }, refusalLimit: { max: MAX, timeWindow: WINDOW, shared: c } })))
  const allowed = await guessesAllowed(instances)
  t.comment(`PostgreSQL, 2 instances: ${allowed} guesses allowed per window (max ${MAX})`)
  t.equal(allowed, MAX)
  const c = counts[0] as RefusalCounts
  t.strictSame(await c.read('10.9.9.9', Date.now() + WINDOW), { count: 0, resetInMs: 0 }, 'a window that is over counts nothing')
  await c.add('10.9.9.9', WINDOW, Date.now() + WINDOW)
  t.equal((await c.read('10.9.9.9', Date.now() + WINDOW)).count, 1, 'a refusal after it starts a new window')
  await c.add('10.1.1.1', 10, Date.now())
  t.strictSame(await c.purge(new Date(Date.now() + 2 * WINDOW)), { deleted: 2, skipped: false }, 'windows that are over are purged')
})
