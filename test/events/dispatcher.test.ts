import t from 'tap'
import { Dispatcher } from '../../plugins/events/dispatcher.js'
import type { ClaimedDelivery, EventTables } from '../../store/events.js'
import type { Store } from '../../store/types.js'
import { receiver } from './helper.js'

// The dispatcher against stand-in tables: a subscription's attempts beyond its limit wait their
// turn; a failing database is logged and tried again later, never thrown.

function delivery (id: string, url: string): ClaimedDelivery {
  return { ctx: 'prod', id, subscriptionId: 's-1', eventType: 'x.created', attemptCount: 1, createdDateTime: new Date().toISOString(), payload: '{}', entity: null, requestId: null, tries: 1, url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** A stand-in store for a dispatcher whose tables are stand-ins too: it only listens, and hears nothing. */
const listening = { listen: async () => async () => {} } as unknown as Store

t.test('attempts beyond a subscription\'s limit wait their turn; a wake while looking looks again', async t => {
  const hook = await receiver(t)
  let batch: ClaimedDelivery[] = [delivery('d-1', hook.url), delivery('d-2', hook.url), delivery('d-3', hook.url)]
  let claims = 0
  const finished: string[] = []
  const tables = {
    claim: async () => { claims++; await sleep(claims === 1 ? 20 : 200); const out = batch; batch = []; return out },
    finish: async (_db: unknown, _owner: string, outcomes: Array<{ id: string }>) => { finished.push(...outcomes.map(o => o.id)) },
    recheck: async (_db: unknown, _owner: string, ids: string[]) => new Map(ids.map(id => [id, { url: hook.url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }])),
    release: async () => {}
  } as unknown as EventTables
  const warnings: unknown[] = []
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 1000, pollMillis: 10_000, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: (o) => { warnings.push(o) } } })
  await d.start()
  await sleep(5)
  d.wake()
  await hook.waitFor(3)
  await sleep(100)
  t.ok(claims >= 2, 'looked again after the wake')
  await d.stop()
  t.strictSame(finished.sort(), ['d-1', 'd-2', 'd-3'])
  t.strictSame(warnings, [])
})

t.test('a failing database: logged, never thrown; unattempted deliveries given back on stop', async t => {
  const hook = await receiver(t)
  hook.setRespond(() => {}) // never answers: the attempts are in flight when the instance stops
  let calls = 0
  const tables = {
    claim: async () => { if (++calls === 1) return [delivery('d-1', hook.url), delivery('d-2', hook.url)]; throw new Error('database down') },
    finish: async () => { throw new Error('database down') },
    release: async () => { throw new Error('database down') }
  } as unknown as EventTables
  const warnings: string[] = []
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [10], timeoutMillis: 200, pollMillis: 20, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: (_o, msg) => { warnings.push(msg) } } })
  await d.start()
  await hook.waitFor(1)
  await sleep(100)
  await d.stop()
  t.ok(warnings.some(w => /could not look for deliveries/.test(w)))
  t.ok(warnings.some(w => /could not record delivery attempts/.test(w)))
  t.ok(warnings.some(w => /could not give back unattempted deliveries/.test(w)))
  d.wake()
  t.pass('a stopped dispatcher ignores wakes')
})

t.test('a wake while a subscriber does not answer claims the others\' new deliveries, not at the poll', async t => {
  const hook = await receiver(t)
  // Neither is answered while the claims are counted: the end of an attempt looks for more
  // (a claim the wakes did not make), and none ends before the count.
  const answers: Array<() => void> = []
  hook.setRespond((r, res) => { if (r.headers['webhook-id'] !== 'msg_d-1') answers.push(() => { res.statusCode = 204; res.end() }) })
  let batch = [delivery('d-1', hook.url)]
  let claims = 0
  const tables = {
    claim: async () => { claims++; const out = batch; batch = []; return out },
    finish: async () => {},
    release: async () => {}
  } as unknown as EventTables
  // The poll is a minute away: only the wake can bring the second delivery in time.
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [10], timeoutMillis: 60_000, pollMillis: 60_000, concurrency: 10, perSubscription: 4, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} }, stopGraceMillis: 0 })
  await d.start()
  await hook.waitFor(1)
  const before = claims
  batch = [{ ...delivery('d-2', hook.url), subscriptionId: 's-2' }]
  d.wake()
  d.wake()
  const got = await hook.waitFor(2, 20_000)
  t.equal(got[1]?.headers['webhook-id'], 'msg_d-2', 'delivered while the first attempt still waits')
  // Time for a second claim to show, were the wakes claiming each: nothing else claims meanwhile.
  await sleep(100)
  t.equal(claims, before + 1, 'one claim for the wakes of a moment')
  for (const answer of answers) answer()
  await d.stop()
})

t.test('a stop gives back the attempts a subscriber is still answering when its grace has passed, uncounted', async t => {
  const hook = await receiver(t)
  // The second delivery's subscriber answers at once, the first's never: its attempt would wait a minute.
  hook.setRespond((r, res) => { if (r.headers['webhook-id'] === 'msg_d-2') { res.statusCode = 204; res.end() } })
  let batch = [delivery('d-1', hook.url), { ...delivery('d-2', hook.url), subscriptionId: 's-2' }]
  const finished: string[] = []
  const released: string[] = []
  const tables = {
    claim: async () => { const out = batch; batch = []; return out },
    finish: async (_db: unknown, _owner: string, o: Array<{ id: string }>) => { finished.push(...o.map(x => x.id)) },
    release: async (_db: unknown, _owner: string, claims: Array<{ id: string }>) => { released.push(...claims.map(c => c.id)) }
  } as unknown as EventTables
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [10], timeoutMillis: 60_000, pollMillis: 10_000, concurrency: 10, perSubscription: 4, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} }, stopGraceMillis: 50 })
  await d.start()
  await hook.waitFor(2)
  for (let i = 0; i < 100 && finished.length === 0; i++) await sleep(20)
  await d.stop()
  t.strictSame(finished, ['d-2'], 'the answered attempt is recorded')
  t.strictSame(released, ['d-1'], 'the one in flight is given back, for any instance to attempt again')
})

t.test('a target naming an internal address literally is refused before any connection', async t => {
  const hook = await receiver(t)
  const outcomes: Array<{ id: string, status: string, statusCode: number | null }> = []
  let batch = [delivery('d-1', hook.url)]
  const tables = {
    claim: async () => { const out = batch; batch = []; return out },
    finish: async (_db: unknown, _owner: string, o: typeof outcomes) => { outcomes.push(...o) },
    release: async () => {}
  } as unknown as EventTables
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 1000, pollMillis: 10_000, concurrency: 10, perSubscription: 4, maxFailures: 20, allowInsecure: false, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} } })
  await d.start()
  for (let i = 0; i < 100 && outcomes.length === 0; i++) await sleep(20)
  await d.stop()
  t.match(outcomes, [{ id: 'd-1', status: 'FAILED', statusCode: null }])
  t.equal(hook.got.length, 0, 'nothing sent to 127.0.0.1')
})

t.test('a target named by a host resolved to an internal address when connecting is refused, nothing sent', async t => {
  // The receiver listens on 127.0.0.1, which the system resolves `localhost` to: only the
  // delivery agent's guarded lookup, through the dispatcher's resolver, keeps the attempt from it.
  const hook = await receiver(t)
  const url = hook.url.replace('127.0.0.1', 'localhost')
  const asked: string[] = []
  const cases: Array<[string, Array<{ address: string, family: number }>]> = [
    ['an internal address (the name rebound since it was saved)', [{ address: '127.0.0.1', family: 4 }]],
    ['a public address and an internal one', [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.8', family: 4 }]],
    ['no address', []]
  ]
  for (const [name, addresses] of cases) {
    const outcomes: Array<{ id: string, status: string, statusCode: number | null }> = []
    let batch = [delivery('d-1', url)]
    const tables = {
      claim: async () => { const out = batch; batch = []; return out },
      finish: async (_db: unknown, _owner: string, o: typeof outcomes) => { outcomes.push(...o) },
      release: async () => {}
    } as unknown as EventTables
    const resolver = async (host: string): Promise<typeof addresses> => { asked.push(host); return addresses }
    const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 1000, pollMillis: 10_000, concurrency: 10, perSubscription: 4, maxFailures: 20, allowInsecure: false, resolver, render: () => '{}', now: () => new Date(), log: { warn: () => {} } })
    asked.length = 0
    await d.start()
    for (let i = 0; i < 100 && outcomes.length === 0; i++) await sleep(20)
    await d.stop()
    t.strictSame(asked, ['localhost'], `${name}: the name resolved again when connecting`)
    t.match(outcomes, [{ id: 'd-1', status: 'FAILED', statusCode: null }], name)
  }
  t.equal(hook.got.length, 0, 'nothing sent to 127.0.0.1')
})

t.test('a retry recorded is looked for when it comes due, not at the next poll; one due after the poll waits for it', async t => {
  const hook = await receiver(t)
  hook.setRespond((_r, res) => { res.statusCode = 500; res.end() })
  // One delivery, claimable when due and not in hand, due again when its failure is recorded.
  let due = Date.now()
  let tries = 0
  const finished: Array<{ status: string, next: Date | null }> = []
  const tables = {
    claim: async () => {
      if (Date.now() < due) return []
      due = Infinity
      return [{ ...delivery('d-1', hook.url), tries: ++tries }]
    },
    finish: async (_db: unknown, _owner: string, outcomes: typeof finished) => {
      for (const o of outcomes) if (o.next !== null) due = o.next.getTime()
      finished.push(...outcomes)
    },
    release: async () => {}
  } as unknown as EventTables
  // Longer than the looks that follow an attempt's end and the flush: only the retry's own timer explains the second attempt.
  const schedule = [300, 24 * 3600_000]
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule, timeoutMillis: 1000, pollMillis: 60_000, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} } })
  await d.start()
  await hook.waitFor(2, 20_000)
  for (let i = 0; i < 100 && finished.length < 2; i++) await sleep(20)
  await d.stop()
  t.match(finished, [{ status: 'PENDING' }, { status: 'PENDING' }], 'the second retry is a day away, past the poll: left to it')
})

t.test('outcomes recorded while stopping schedule nothing', async t => {
  const hook = await receiver(t)
  hook.setRespond((_r, res) => { setTimeout(() => { res.statusCode = 500; res.end() }, 100) })
  let batch = [delivery('d-1', hook.url)]
  let claims = 0
  const finished: unknown[] = []
  const tables = {
    claim: async () => { claims++; const out = batch; batch = []; return out },
    finish: async (_db: unknown, _owner: string, outcomes: unknown[]) => { finished.push(...outcomes) },
    release: async () => {}
  } as unknown as EventTables
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [10], timeoutMillis: 1000, pollMillis: 60_000, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: () => {} } })
  await d.start()
  await hook.waitFor(1)
  await d.stop()
  t.equal(finished.length, 1, 'the attempt in flight, recorded')
  const seen = claims
  await sleep(100)
  t.equal(claims, seen, 'its retry, due in 10 ms, is left to the next instance to look')
})

t.test('a store that cannot listen: logged, and the poll does the work', async t => {
  const warnings: string[] = []
  const store = { listen: async () => { throw new Error('no LISTEN here') } } as unknown as Store
  const tables = { claim: async () => [], finish: async () => {}, release: async () => {} } as unknown as EventTables
  const d = new Dispatcher({ store, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 1000, pollMillis: 60_000, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: (_o, msg) => { warnings.push(msg) } } })
  await d.start()
  await d.stop()
  t.strictSame(warnings, ['events: cannot listen for new deliveries; looking for them every pollMillis only'])
})

t.test('attempts waiting their turn: not made when their subscriptions cannot be read again, nor once a stop began', async t => {
  const hook = await receiver(t)
  const held: Array<() => void> = []
  hook.setRespond((_r, res) => { held.push(() => { res.statusCode = 204; res.end() }) })
  let batch = [delivery('d-1', hook.url), delivery('d-2', hook.url), delivery('d-3', hook.url)]
  let rechecks = 0
  let lookedUp: () => void = () => {}
  const looking = new Promise<void>((resolve) => { lookedUp = resolve })
  let answer: (found: Map<string, { url: string, secret: string }>) => void = () => {}
  const released: string[] = []
  const tables = {
    claim: async () => { const out = batch; batch = []; return out },
    finish: async () => {},
    // The first look-up fails; the second answers only once the stop has begun.
    recheck: async () => {
      if (++rechecks === 1) throw new Error('database down')
      lookedUp()
      return await new Promise((resolve) => { answer = resolve })
    },
    release: async (_db: unknown, _owner: string, claims: Array<{ id: string }>) => { released.push(...claims.map(c => c.id)) }
  } as unknown as EventTables
  const warnings: string[] = []
  const d = new Dispatcher({ store: listening, tables, service: { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'x' }, userAgent: { product: 'x', version: 1 }, schedule: [], timeoutMillis: 60_000, pollMillis: 10_000, concurrency: 10, perSubscription: 1, maxFailures: 20, allowInsecure: true, resolver: async () => [], render: () => '{}', now: () => new Date(), log: { warn: (_o, msg) => { warnings.push(msg) } } })
  await d.start()
  await hook.waitFor(1)
  // d-1 answered: d-2's turn, whose look-up fails; d-3's turn follows, looked up during the stop.
  ;(held.shift() as () => void)()
  await looking
  const stopped = d.stop()
  await new Promise((resolve) => setImmediate(resolve))
  answer(new Map([['d-3', { url: hook.url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }]]))
  await stopped
  t.equal(hook.got.length, 1, 'only d-1 was attempted')
  t.ok(warnings.some(w => /could not look up the subscriptions of deliveries waiting their turn/.test(w)))
  t.strictSame(released, ['d-3'], 'd-3 given back by the stop; d-2 left to its lease')
})
