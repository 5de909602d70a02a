// Outgoing events on the seeded database (run.js), to a subscriber on loopback answering 204 at once
// (servers/subscriber.js: a process of its own, so that it does not slow the load generator):
// - delivery throughput: BENCH_EVENTS deliveries, after as many again to warm up, made due at
//   once in the outbox while the service is stopped, then timed from when the warm-up ones have
//   arrived until the last is recorded SUCCEEDED, with the CPU per event of the service,
//   PostgreSQL, the subscriber and the whole machine (default settings of the events plugin);
//   beside it the floor's (servers/floor-deliverer.js) draining as many events from its bare
//   outbox table, warmed up and timed the same way, with the same figures;
// - POST `/v1/documents` with one active subscription against the same POSTs with it switched
//   off (same context, same documents), paired rounds: on instances that deliver none (the
//   outbox write alone), then on instances that deliver meanwhile, each round starting once the
//   round before is delivered, with the CPU per POST of PostgreSQL, the subscriber, the load
//   generator and the machine; in the same rounds, the floor (servers/floor-deliverer.js): the
//   least any transactional outbox could add to those POSTs, the subscription off and a bare
//   trigger and deliverer in its place (and in the rounds that deliver none, its trigger alone);
// - POST `/v1/documents` with the subscription off, paired, alone in its context and beside
//   2,000 active subscriptions of the context to other events, on instances that deliver none;
// - the time from commit to delivery of the events of those POSTs (the event's timestamp is
//   taken in the transaction, just before its commit), at the 50th and 99th percentiles.
import pg from 'pg'
import { signToken } from 'svc-conventions/auth'
import { FLOOR_TABLE, floorSchema } from './lib/floor-outbox.js'
import { fmt, load, pairedRounds, startServer } from './lib/harness.js'
import { machineBusyMicros, postgresCpuMicros } from './lib/machine.js'
import { call, jsonHeaders } from './lib/service.js'
import { authorIds } from './seed.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const events = Number(process.env.BENCH_EVENTS ?? 20_000)
const CROWD = 2000
const hooks = { authorization: `Bearer ${signToken({ secret: SECRET, sub: 'bench', scope: 'webhooks:read webhooks:write', expiresIn: '2h' })}` }

let n = 0
const newDocument = () => ({ name: `events-${process.pid}-${++n}`, authorId: authorIds(1)[0], kind: 'INVOICE', tags: ['a'], amount: '1.25' })

/** The service with insecure targets allowed (the subscriber is on loopback, over HTTP), and `env`. */
function startService (url, env = {}) {
  return startServer('service.js', { DATABASE_URL: url, AUTH_JWT_SECRET: SECRET, CURSOR_SECRET: 'bench-cursor-secret-that-is-long-enough', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', ...env })
}

/** Resolves once no delivery is PENDING. */
async function drained (db) {
  for (;;) {
    const { rows } = await db.query("SELECT count(*)::int AS n FROM event_deliveries WHERE status = 'PENDING'")
    if (rows[0].n === 0) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const perRequest = (before, after, count) => before === null || count === 0 ? NaN : (after - before) / count

/**
 * A drain measured warm, as every other case is after its warm-up: twice `events` deliveries
 * are due when `begin()` starts `deliverer` on them. The measure starts once the
 * subscriber has received the first `events` (the deliverer's code and the subscriber's are
 * compiled by then, and both are at work, the suite's and the floor's alike) and ends when
 * `done()` resolves, everything delivered and recorded. The rate and the CPU per event are
 * those of the deliveries received meanwhile.
 */
async function warmDrain ({ subscriber, deliverer, begin, done }) {
  const start = (await subscriber.stats()).received
  await begin()
  let warm = await subscriber.stats()
  while (warm.received - start < events) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    warm = await subscriber.stats()
  }
  const before = { deliverer: await deliverer.stats(), pg: postgresCpuMicros(), machine: machineBusyMicros(), at: process.hrtime.bigint() }
  await done()
  const ms = Number(process.hrtime.bigint() - before.at) / 1e6
  const after = { deliverer: await deliverer.stats(), subscriber: await subscriber.stats(), pg: postgresCpuMicros(), machine: machineBusyMicros() }
  if (after.subscriber.received - start < 2 * events) throw new Error(`events: ${after.subscriber.received - start} of ${2 * events} delivered`)
  const count = after.subscriber.received - warm.received
  return {
    count,
    rate: `${fmt(count / (ms / 1000))} events/s`,
    eventsPerSecond: count / (ms / 1000),
    p50: NaN,
    p99: NaN,
    cpu: perRequest(before.deliverer.cpuMicros, after.deliverer.cpuMicros, count),
    pg: perRequest(before.pg, after.pg, count),
    subscriber: perRequest(warm.cpuMicros, after.subscriber.cpuMicros, count),
    machine: perRequest(before.machine, after.machine, count),
    rss: after.deliverer.peakRss / 1048576
  }
}

/**
 * `load`, with where else the CPU went per request: PostgreSQL, the subscriber, this process
 * (the load generator) and the whole machine. The subscriber's lags read meanwhile go to `lags`.
 */
function loadWithSplit (subscriber, lags) {
  return async (server, options) => {
    const taken = async () => {
      const stats = await subscriber.stats()
      lags.push(...stats.lags)
      return stats.cpuMicros
    }
    const before = { pg: postgresCpuMicros(), machine: machineBusyMicros(), subscriber: await taken(), self: process.cpuUsage() }
    const r = await load(server, options)
    const self = process.cpuUsage(before.self)
    const subscriberCpu = await taken()
    return {
      ...r,
      pg: perRequest(before.pg, postgresCpuMicros(), r.count),
      subscriber: perRequest(before.subscriber, subscriberCpu, r.count),
      generator: perRequest(0, self.user + self.system, r.count),
      machine: perRequest(before.machine, machineBusyMicros(), r.count)
    }
  }
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]
}

/** Switches the floor's `deliverer` off; resolves once it has delivered all that is in its table and stopped. */
function floorIdle (deliverer) {
  return new Promise((resolve, reject) => {
    const child = deliverer.child
    const onMessage = (msg) => {
      if (msg.type !== 'floor-idle') return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve()
    }
    const onExit = (code) => reject(new Error(`events: the floor's deliverer exited with ${code}`))
    child.on('message', onMessage)
    child.once('exit', onExit)
    child.send({ type: 'floor', on: false })
  })
}

/**
 * The floor's delivery throughput, beside the suite's: twice `events` events in its bare outbox
 * table (the trigger's body, of one seeded document), drained by its deliverer as fast as it
 * goes, measured warm (`warmDrain`), with the CPU per event of the deliverer, PostgreSQL, the
 * subscriber and the whole machine. Its events' lags are dropped.
 */
async function floorThroughput ({ db, url, subscriber }) {
  const drop = async () => { for (const sql of floorSchema.drop) await db.query(sql) }
  await drop()
  try {
    for (const sql of floorSchema.create) await db.query(sql)
    await db.query(`INSERT INTO ${FLOOR_TABLE} (payload)
      SELECT '{"type":"document.created","timestamp":"' || to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || one.data || '}'
      FROM (SELECT to_jsonb(d)::text AS data FROM documents d WHERE ctx = 'prod' LIMIT 1) AS one, generate_series(1, $1)`, [2 * events])
    const deliverer = await startServer('floor-deliverer.js', { DATABASE_URL: url, BENCH_FLOOR_TARGET: `${subscriber.base}/hook` })
    try {
      // Switched on, and off once warm: it drains the table without waiting for events to gather.
      return await warmDrain({ subscriber, deliverer, begin: () => deliverer.child.send({ type: 'floor', on: true }), done: () => floorIdle(deliverer) })
    } finally {
      await deliverer.stop()
    }
  } finally {
    await drop()
  }
}

/**
 * The floor of the POSTs with a subscription (servers/floor-deliverer.js): the same POSTs with
 * the context's subscription switched off, each writing its event to a bare outbox by a trigger
 * in its transaction, delivered meanwhile by a bare process. `loader` loads a round of them (the
 * events its load left are delivered after it, as the suite's are before the next round);
 * `writer` a round with the trigger alone, no deliverer started; `start` starts the deliverer of
 * a set of processes; `drop` removes the trigger and the table.
 */
async function floorCase ({ db, url, subscriber, lags, subscriptionId }) {
  const drop = async () => { for (const sql of floorSchema.drop) await db.query(sql) }
  // A run stopped halfway may have left them.
  await drop()
  for (const sql of floorSchema.create) await db.query(sql)
  const floorLags = []
  const measure = loadWithSplit(subscriber, floorLags)
  let deliverer = null
  const idle = () => floorIdle(deliverer)
  return {
    start: async () => {
      deliverer = await startServer('floor-deliverer.js', { DATABASE_URL: url, BENCH_FLOOR_TARGET: `${subscriber.base}/hook` })
      return deliverer
    },
    // The outbox write alone: the trigger writes each POST's event, no deliverer runs.
    writer: async (server, options) => {
      await call(server, 'PATCH', `/v1/webhook-subscriptions/${subscriptionId}`, { body: { active: false }, headers: hooks, expect: 204 })
      await db.query(floorSchema.enable)
      try {
        return await load(server, options)
      } finally {
        await db.query(floorSchema.disable)
      }
    },
    loader: async (server, options) => {
      // The suite's events of the round before are delivered, and their lags go with its own.
      await drained(db)
      lags.push(...(await subscriber.stats()).lags)
      await call(server, 'PATCH', `/v1/webhook-subscriptions/${subscriptionId}`, { body: { active: false }, headers: hooks, expect: 204 })
      await db.query(floorSchema.enable)
      deliverer.child.send({ type: 'floor', on: true })
      try {
        return await measure(server, options)
      } finally {
        await db.query(floorSchema.disable)
        await idle()
        floorLags.push(...(await subscriber.stats()).lags)
      }
    },
    lags: floorLags,
    drop
  }
}

/**
 * The POSTs with the subscription off, paired, on instances that deliver none: alone in their
 * context, and beside CROWD more subscriptions of it that want only author events (inserted
 * here, switched on before each of that case's rounds and off before the other's, then
 * analyzed, as autovacuum keeps the statistics of a table whose subscriptions stay; removed
 * after). Each POST checks that no subscription of its context wants document.created: what
 * that costs as a context's subscriptions grow. Rounds of their own, so that the switching
 * touches no other case's.
 */
async function crowdRounds ({ db, url, sub, post, log }) {
  await db.query(`INSERT INTO event_subscriptions (ctx, id, url, events, description, active, secret, etag, created_at, modified_at)
    SELECT ctx, 'crowd-' || n, url, ARRAY['author.created', 'author.updated', 'author.deleted'], 'bench crowd', false, secret, etag, now(), now()
    FROM event_subscriptions, generate_series(1, $2::int) AS n WHERE id = $1`, [sub.id, CROWD])
  const crowded = (active) => {
    const c = post(false, false)
    return {
      ...c,
      loader: async (server, options) => {
        const { rowCount } = await db.query("UPDATE event_subscriptions SET active = $1 WHERE description = 'bench crowd' AND active <> $1", [active])
        if (rowCount > 0) await db.query('ANALYZE event_subscriptions')
        return await c.loader(server, options)
      }
    }
  }
  try {
    log(`  the subscription off, beside ${fmt(CROWD)} subscriptions to other events (WEBHOOK_DELIVERY=false)`)
    return await pairedRounds({ start: async () => ({ service: await startService(url, { WEBHOOK_DELIVERY: 'false' }) }), cases: { without: crowded(false), beside: crowded(true) }, log })
  } finally {
    await db.query("DELETE FROM event_subscriptions WHERE description = 'bench crowd'")
    await db.query("DELETE FROM event_deliveries WHERE status = 'PENDING'")
  }
}

export async function runEvents ({ url, log }) {
  const subscriber = await startServer('subscriber.js')
  const hook = { url: `${subscriber.base}/hook`, received: async () => (await subscriber.stats()).received, take: async () => (await subscriber.stats()).lags }
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    let service = await startService(url)
    const sub = await call(service, 'POST', '/v1/webhook-subscriptions', { body: { url: hook.url, events: ['document.created'] }, headers: hooks, expect: 201 })
    // One real event, copied as many times as measured, due at once.
    await call(service, 'POST', '/v1/documents', { body: newDocument(), expect: 201 })
    const deadline = Date.now() + 30_000
    while (await hook.received() < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    await service.stop()
    await db.query(`INSERT INTO event_deliveries (ctx, id, subscription_id, event_type, payload, entity, request_id, status, next_attempt_at, created_at)
      SELECT d.ctx, gen_random_uuid()::text, d.subscription_id, d.event_type, d.payload, d.entity, d.request_id, 'PENDING', now(), now()
      FROM event_deliveries d, generate_series(1, $2) WHERE d.subscription_id = $1`, [sub.id, 2 * events])
    log(`  ${fmt(2 * events)} deliveries due, the first ${fmt(events)} to warm up; starting the service`)
    const before = await hook.received()
    let delivering = null
    // Watched at the subscriber until the last arrives, then in the outbox until it is recorded:
    // counting the outbox's open deliveries all along would add its own queries to PostgreSQL's share.
    const throughput = await warmDrain({
      subscriber,
      deliverer: { stats: async () => await delivering.stats() },
      begin: async () => { delivering = await startService(url) },
      done: async () => {
        while ((await subscriber.stats()).received - before < 2 * events) await new Promise((resolve) => setTimeout(resolve, 25))
        await drained(db)
      }
    })
    await delivering.stop()
    log(`  ${fmt(throughput.count)} timed, warm: ${throughput.rate}; CPU per event: service ${fmt(throughput.cpu, 1)}, PostgreSQL ${fmt(throughput.pg, 1)}, subscriber ${fmt(throughput.subscriber, 1)}, machine ${fmt(throughput.machine, 1)} µs`)
    await hook.take()
    const floorRate = await floorThroughput({ db, url, subscriber })
    log(`  the floor, ${fmt(floorRate.count)} timed, warm: ${floorRate.rate}; CPU per event: deliverer ${fmt(floorRate.cpu, 1)}, PostgreSQL ${fmt(floorRate.pg, 1)}, subscriber ${fmt(floorRate.subscriber, 1)}, machine ${fmt(floorRate.machine, 1)} µs`)

    // The same POSTs in the same context (its documents, its indexes), paired: with the
    // subscription active, and with it switched off, which leaves the context none active.
    const lags = []
    const loader = loadWithSplit(subscriber, lags)
    // `drain`: the events of the round before are delivered first, not during this one's load.
    const post = (active, drain) => ({
      server: 'service',
      loader: async (server, options) => {
        if (drain) await drained(db)
        await call(server, 'PATCH', `/v1/webhook-subscriptions/${sub.id}`, { body: { active }, headers: hooks, expect: 204 })
        return await loader(server, options)
      },
      headers: jsonHeaders,
      method: 'POST',
      path: '/v1/documents',
      requests: [{ method: 'POST', path: '/v1/documents', setupRequest: (req) => ({ ...req, body: JSON.stringify(newDocument()) }) }]
    })
    const cases = (drain) => ({ 'with a subscription': post(true, drain), without: post(false, drain) })
    const floor = await floorCase({ db, url, subscriber, lags, subscriptionId: sub.id })
    let written, rounds
    try {
      // The outbox write alone: the same pairs on instances that write events but deliver none
      // (WEBHOOK_DELIVERY=false), and the floor's trigger writing its events, none delivered.
      // What they all wrote is dropped before the rounds that deliver.
      log('  the outbox write alone (WEBHOOK_DELIVERY=false), and the floor\'s')
      written = await pairedRounds({ start: async () => ({ service: await startService(url, { WEBHOOK_DELIVERY: 'false' }) }), cases: { ...cases(false), floor: { ...post(false, false), loader: floor.writer } }, log })
      await db.query("DELETE FROM event_deliveries WHERE status = 'PENDING'")
      await db.query(`TRUNCATE ${FLOOR_TABLE}`)
      log('  delivered meanwhile by the posting instance, and the floor')
      rounds = await pairedRounds({ start: async () => ({ service: await startService(url), deliverer: await floor.start() }), cases: { ...cases(true), floor: { ...post(false, false), loader: floor.loader } }, log })
    } finally {
      await floor.drop()
    }
    const crowd = await crowdRounds({ db, url, sub, post, log })
    // Events still in the outbox when the last round ended are delivered and counted too.
    service = await startService(url)
    await drained(db)
    await service.stop()
    lags.push(...await hook.take())
    const latency = (xs) => ({ p50: percentile(xs, 0.5), p99: percentile(xs, 0.99), count: xs.length })
    return { throughput, floorThroughput: floorRate, written, rounds, crowd, latency: latency(lags), floorLatency: latency(floor.lags) }
  } finally {
    await db.end()
    await subscriber.stop()
  }
}
