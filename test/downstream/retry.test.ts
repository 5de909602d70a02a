import t from 'tap'
import { EventEmitter, getEventListeners, once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import fc from 'fast-check'
import { Agent } from 'undici'
import { DownstreamConnectionError, DownstreamResponseError, DownstreamTimeoutError, backoff, createDownstream, retryAfter } from '../../plugins/downstream/index.js'
import type { Sleep } from '../../plugins/downstream/index.js'
import { client, downstreamServer, json, manualTimers, SERVICE, USER_AGENT } from './helper.js'

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0)

t.test('429 and 503 are retried, Retry-After honoured as seconds or a date', async t => {
  const server = await downstreamServer(t, (_req, res, n) => {
    if (n === 1) return json(res, 429, { title: 'Too Many Requests', status: 429 }, { 'retry-after': '2' })
    if (n === 2) return json(res, 503, {}, { 'retry-after': new Date(NOW + 7000).toUTCString() })
    if (n === 3) return json(res, 503, {}, { 'retry-after': new Date(NOW - 7000).toUTCString() })
    json(res, 200, { ok: true })
  })
  const { client: c, sleeps } = client(t, { now: () => NOW, retry: { attempts: 4 } })
  const res = await c.get(`${server.url}/x`)
  t.strictSame(res.body, { ok: true })
  t.strictSame(sleeps, [2000, 7000, 0], 'the waits the answers asked for; a date gone by is no wait')
  t.equal(server.received.length, 4)
})

t.test('without Retry-After (or an unreadable one) the backoff applies; the last answer is thrown', async t => {
  const server = await downstreamServer(t, (_req, res, n) => json(res, 503, {}, n === 2 ? { 'retry-after': 'soon' } : {}))
  const { client: c, sleeps } = client(t)
  await t.rejects(c.get(`${server.url}/x`), { name: 'DownstreamResponseError', status: 503, attempts: 3 })
  t.strictSame(sleeps, [150, 300], 'base 200 doubled, half of each step fixed and half jittered (random 0.5)')
  t.equal(server.received.length, 3)
})

t.test('a Retry-After longer than maxRetryAfter ends the retries', async t => {
  const server = await downstreamServer(t, (_req, res) => json(res, 429, {}, { 'retry-after': '31' }))
  const { client: c, sleeps } = client(t)
  const err = await c.get(`${server.url}/x`).catch((e: unknown) => e)
  t.ok(err instanceof DownstreamResponseError)
  t.equal((err as DownstreamResponseError).headers['retry-after'], '31', 'the caller reads how long to wait')
  t.strictSame(sleeps, [])
  t.equal(server.received.length, 1)
})

t.test('connection failures are retried: refused, reset, hung up', async t => {
  const { client: c, sleeps } = client(t)
  // A port that was just given up: nothing listens there.
  const gone = createDownstream({ service: SERVICE, userAgent: USER_AGENT, sleep: async (ms) => { sleeps.push(ms) }, random: () => 0 })
  t.teardown(() => gone.close())
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)) })
  })
  const refused = await gone.get(`http://127.0.0.1:${port}/x`).catch((e: unknown) => e)
  t.ok(refused instanceof DownstreamConnectionError)
  t.match(refused, { reason: 'ECONNREFUSED', attempts: 3, code: 'SVC_ERR_DOWNSTREAM_CONNECTION' })
  t.strictSame(sleeps.splice(0), [100, 200], 'random 0: half of each step')

  const server = await downstreamServer(t, (req, res, n) => {
    if (n === 1) return req.socket.resetAndDestroy()
    if (n === 2) return req.socket.destroy()
    json(res, 200, { ok: true })
  })
  t.strictSame((await c.get(`${server.url}/x`)).body, { ok: true })
  t.equal(sleeps.length, 2, 'a reset and a hang-up, each retried')
})

t.test('a POST is retried only with an idempotency key, the same key each time', async t => {
  const server = await downstreamServer(t, (req, res, n) => {
    if (n === 1 || n === 3 || n === 6) return json(res, 503, {})
    if (n === 2 || n === 4) return req.socket.destroy()
    json(res, 201, { id: '1' })
  })
  const { client: c, sleeps } = client(t)
  await t.rejects(c.post(`${server.url}/x`, { json: {} }), { name: 'DownstreamResponseError', status: 503 }, 'a 503 to a POST without a key is the answer')
  await t.rejects(c.patch(`${server.url}/x`, { json: {} }), DownstreamConnectionError, 'a hang-up of a PATCH without a key is the failure')
  t.strictSame(sleeps, [])
  t.equal(server.received.length, 2)
  const created = await c.post(`${server.url}/x`, { json: {}, idempotencyKey: true })
  t.equal(created.status, 201)
  t.equal(sleeps.length, 2)
  const keys = server.received.slice(2, 5).map((r) => r.headers['svc-idempotency-key'])
  t.equal(keys.length, 3)
  t.equal(new Set(keys).size, 1, 'one key on every attempt')
  t.match(keys[0], /^[0-9a-f-]{36}$/)
  await t.rejects(c.get(`${server.url}/x`, { retry: false }), { name: 'DownstreamResponseError', status: 503 }, 'retry: false makes one attempt')
})

t.test('a timeout is retried for an idempotent method only', async t => {
  const server = await downstreamServer(t, (_req, res, n) => {
    // The first and the third request get no answer: the timeout ends them.
    if (n === 2) json(res, 200, { ok: true })
  })
  // undici's own headers timer ends the unanswered attempts, armed with what the client asked
  // for; the answered one gets none (0), so that an answer a loaded machine makes late is
  // still the answer, and no timer races it.
  const asked: unknown[] = []
  const agent = new Agent()
  t.teardown(() => agent.close())
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    asked.push(opts.headersTimeout)
    return dispatch(asked.length === 2 ? { ...opts, headersTimeout: 0 } : opts, handler)
  })
  const { client: c, sleeps } = client(t, { dispatcher, timeouts: { headers: 1000 } })
  t.strictSame((await c.get(`${server.url}/x`)).body, { ok: true })
  t.equal(sleeps.length, 1)
  const err = await c.post(`${server.url}/x`, { idempotencyKey: true }).catch((e: unknown) => e)
  t.ok(err instanceof DownstreamTimeoutError, 'a POST sent in full may be at work still: not sent again')
  t.match(err, { phase: 'headers', timeout: 1000, attempts: 1 })
  t.equal(server.received.length, 3)
  t.strictSame(asked, [1000, 1000, 1000], 'every attempt asked undici for timeouts.headers')
})

t.test('an abort is the caller\'s: passed on as it is, never retried', async t => {
  const server = await downstreamServer(t, () => {})
  const { client: c, sleeps } = client(t)
  const err = await c.get(`${server.url}/x`, { signal: AbortSignal.abort() }).catch((e: unknown) => e)
  t.equal((err as Error).name, 'AbortError')
  t.strictSame(sleeps, [])
})

t.test('a caller\'s signal that outlives its calls: followed while each is in flight, then let go', async t => {
  // One signal for many calls, as an events dispatcher's stop signal is: listened to while a call
  // is in flight and no longer once none is, whatever their ends.
  let release: () => void = () => {}
  const arrived = new EventEmitter()
  const server = await downstreamServer(t, (_req, res, n) => {
    arrived.emit(String(n))
    if (n === 2) return json(res, 503, {})
    if (n === 3) { release = () => { json(res, 200, { n }) }; return }
    if (n === 4) return
    json(res, 200, { n })
  })
  const { client: c } = client(t, { retry: { attempts: 1 } })
  const stop = new AbortController()
  const listeners = (): number => getEventListeners(stop.signal, 'abort').length
  t.strictSame((await c.get(`${server.url}/x`, { signal: stop.signal })).body, { n: 1 })
  await t.rejects(c.get(`${server.url}/x`, { signal: stop.signal }), { name: 'DownstreamResponseError', status: 503 })
  t.equal(listeners(), 0, 'none left by an answer or a refusal')
  const third = once(arrived, '3')
  const held = c.get(`${server.url}/x`, { signal: stop.signal })
  await third
  t.equal(listeners(), 1, 'one for the call in flight')
  release()
  t.strictSame((await held).body, { n: 3 })
  t.equal(listeners(), 0)
  // Its abort ends the call in flight with the caller's reason.
  const fourth = once(arrived, '4')
  const hanging = c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e)
  await fourth
  const reason = new Error('stopping')
  stop.abort(reason)
  t.equal(await hanging, reason, 'the caller\'s reason, as it is')
  t.equal(listeners(), 0)
  // Aborted already: no call is sent.
  t.equal(await c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e), reason)
  t.equal(server.received.length, 4)
})

t.test('many calls in flight on one signal: one listener, no leak warning, all ended by its abort', async t => {
  // More calls than Node's default of ten listeners, as a dispatcher's deliveries in flight share its stop signal.
  const CALLS = 24
  const arrived = new EventEmitter()
  const held: Array<() => void> = []
  const server = await downstreamServer(t, (_req, res, n) => {
    held.push(() => { json(res, 200, { n }) })
    arrived.emit('call', n)
  })
  const { client: c } = client(t, { retry: { attempts: 1 } })
  const warnings: Error[] = []
  const warned = (w: Error): void => { warnings.push(w) }
  process.on('warning', warned)
  t.teardown(() => { process.off('warning', warned) })
  const stop = new AbortController()
  const listeners = (): number => getEventListeners(stop.signal, 'abort').length
  const all = async (): Promise<void> => {
    let count = 0
    await new Promise<void>((resolve) => { arrived.on('call', () => { if (++count === CALLS) resolve() }) })
    arrived.removeAllListeners('call')
  }

  let inFlight = all()
  const answered = Array.from({ length: CALLS }, async () => (await c.get<{ n: number }>(`${server.url}/x`, { signal: stop.signal })).body?.n)
  await inFlight
  t.equal(listeners(), 1, 'one listener for all of them')
  for (const answer of held.splice(0)) answer()
  t.equal((await Promise.all(answered)).length, CALLS)
  t.equal(listeners(), 0, 'none once the last has ended')

  inFlight = all()
  const stopped = Array.from({ length: CALLS }, async () => await c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e))
  await inFlight
  const reason = new Error('stopping')
  stop.abort(reason)
  t.ok((await Promise.all(stopped)).every(e => e === reason), 'each ended with the caller\'s reason')
  t.equal(listeners(), 0)
  // A warning is emitted on the next tick of the listener that passed the limit.
  await new Promise(resolve => setImmediate(resolve))
  t.strictSame(warnings.filter(w => w.name === 'MaxListenersExceededWarning').map(w => w.message), [])
})

t.test('an abort while a call waits between attempts ends the call then, and the wait', async t => {
  const arrived = new EventEmitter()
  const server = await downstreamServer(t, (_req, res) => { arrived.emit('request'); json(res, 503, {}) })
  // A sleep that ends only when told, and says when it began.
  const waiting = (): { sleep: Sleep, began: Promise<AbortSignal> } => {
    let began: (signal: AbortSignal) => void = () => {}
    const started = new Promise<AbortSignal>((resolve) => { began = resolve })
    return { sleep: async (_ms, signal) => { began(signal); await once(signal, 'abort') }, began: started }
  }

  await t.test('the caller\'s signal: its reason, and the sleep told to stop', async t => {
    const { sleep, began } = waiting()
    const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, random: () => 0.5, sleep })
    t.teardown(() => c.close())
    const stop = new AbortController()
    const call = c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e)
    const told = await began
    const reason = new Error('stopping')
    stop.abort(reason)
    t.equal(await call, reason, 'the caller\'s reason, as it is')
    t.equal(told.aborted, true)
    t.equal(told.reason, reason)
    t.equal(getEventListeners(stop.signal, 'abort').length, 0, 'the caller\'s signal let go')
  })

  await t.test('a sleep that does not listen: the call ends all the same', async t => {
    let began: () => void = () => {}
    const started = new Promise<void>((resolve) => { began = resolve })
    const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, random: () => 0.5, sleep: async () => { began(); await new Promise(() => {}) } })
    t.teardown(() => c.close())
    const stop = new AbortController()
    const call = c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e)
    await started
    stop.abort(new Error('stopping'))
    t.match(await call, { message: 'stopping' })
  })

  await t.test('the deadline: a timeout of the call, after the attempts made', async t => {
    const { sleep, began } = waiting()
    const timers = manualTimers()
    const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, random: () => 0.5, sleep, after: timers.after, now: () => NOW, timeouts: { total: 10_000 } })
    t.teardown(() => c.close())
    const call = c.get(`${server.url}/x`).catch((e: unknown) => e)
    const told = await began
    timers.fire(10_000)
    t.match(await call, { name: 'DownstreamTimeoutError', phase: 'total', timeout: 10_000, attempts: 1 })
    t.equal(told.aborted, true, 'the sleep told to stop')
  })

  await t.test('a sleep that fails, unaborted: its error is the call\'s', async t => {
    const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, random: () => 0.5, sleep: async () => { throw new Error('no timer') } })
    t.teardown(() => c.close())
    await t.rejects(c.get(`${server.url}/x`), { message: 'no timer' })
  })

  await t.test('the default timer: a wait of a minute ended by the abort', async t => {
    const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, retry: { base: 60_000, cap: 60_000 } })
    t.teardown(() => c.close())
    const first = once(arrived, 'request')
    const stop = new AbortController()
    const call = c.get(`${server.url}/x`, { signal: stop.signal }).catch((e: unknown) => e)
    await first
    stop.abort(new Error('stopping'))
    t.match(await call, { message: 'stopping' })
  })
})

t.test('the call\'s deadline (timeouts.total): retries and their waits only within it', async t => {
  // A clock that the fake sleep moves: each wait ends exactly as long after as it was. The
  // deadline's timer is never fired: however long the machine stalls, only this clock counts.
  let now = NOW
  const sleeps: number[] = []
  const deadlines: number[] = []
  const timers = manualTimers()
  const after = (ms: number, fn: () => void): () => void => { deadlines.push(ms); return timers.after(ms, fn) }
  const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, random: () => 0.5, now: () => now, sleep: async (ms) => { sleeps.push(ms); now += ms }, after, timeouts: { total: 10_000 }, retry: { attempts: 5 } })
  t.teardown(() => c.close())
  const server = await downstreamServer(t, (_req, res) => json(res, 503, {}, { 'retry-after': '4' }))
  const err = await c.get(`${server.url}/x`).catch((e: unknown) => e)
  t.match(err, { name: 'DownstreamResponseError', status: 503, attempts: 3 }, 'the answer that came when no wait fitted')
  t.strictSame(sleeps.splice(0), [4000, 4000], 'a third wait of 4 s would end past 10 s')
  t.equal(server.received.length, 3)

  now = NOW
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)) })
  })
  const refused = await c.get(`http://127.0.0.1:${port}/x`, { timeouts: { total: 500 } }).catch((e: unknown) => e)
  t.match(refused, { name: 'DownstreamConnectionError', reason: 'ECONNREFUSED', attempts: 3 }, 'the failure of the last attempt whose wait fitted')
  t.strictSame(sleeps, [150, 300], 'the backoff of 600 ms would end past the call\'s 500')
  t.strictSame(deadlines, [10_000, 500], 'one deadline a call, the call\'s own')
  t.strictSame(timers.armed(), [], 'cancelled when the call is done')
})

t.test('the call\'s deadline ends an answer sent a byte at a time, and is not retried', async t => {
  const dripping: NodeJS.Timeout[] = []
  t.teardown(() => { for (const timer of dripping) clearInterval(timer) })
  // Each drip of the n-th answer is the event `n`.
  const drips = new EventEmitter()
  const server = await downstreamServer(t, (_req, res, n) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('[')
    // Never a pause as long as timeouts.body: only the deadline ends it.
    dripping.push(setInterval(() => { res.write('0,'); drips.emit(String(n)) }, 20))
  })
  // The deadline fires when the test says, once the answer is under way.
  const timers = manualTimers()
  const { client: c, sleeps } = client(t, { timeouts: { headers: 5000, body: 5000 }, after: timers.after })
  const dripped = c.get(`${server.url}/x`, { timeouts: { total: 300 } }).catch((e: unknown) => e)
  await once(drips, '1')
  timers.fire(300)
  const err = await dripped
  t.ok(err instanceof DownstreamTimeoutError)
  t.match(err, { phase: 'total', timeout: 300, attempts: 1, code: 'SVC_ERR_DOWNSTREAM_TIMEOUT', message: /GET http:\/\/127\.0\.0\.1:\d+\/x: not done within 300 ms \(timeouts\.total\)/ })
  t.strictSame(sleeps, [], 'a GET, idempotent, is not tried again past its deadline')
  t.equal(server.received.length, 1)
  // The caller's own abort stays the caller's, even with the deadline at the same moment.
  const caller = new AbortController()
  const call = c.get(`${server.url}/x`, { signal: caller.signal, timeouts: { total: 5000 } }).catch((e: unknown) => e)
  await once(drips, '2')
  caller.abort()
  timers.fire(5000)
  const aborted = await call
  t.notOk(aborted instanceof DownstreamTimeoutError, 'an abort of the caller\'s is passed on as it is')
  t.equal((aborted as Error).name, 'AbortError')
})

t.test('the default timer ends a call at its deadline', async t => {
  // No answer ever: only the deadline ends the call, whenever the timer fires.
  const server = await downstreamServer(t, () => {})
  const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, timeouts: { total: 50 } })
  t.teardown(() => c.close())
  const err = await c.get(`${server.url}/x`).catch((e: unknown) => e)
  t.match(err, { name: 'DownstreamTimeoutError', phase: 'total', timeout: 50, attempts: 1 })
})

t.test('the default sleep waits on a timer', async t => {
  const server = await downstreamServer(t, (_req, res, n) => json(res, n === 1 ? 503 : 200, {}))
  const c = createDownstream({ service: SERVICE, userAgent: USER_AGENT, retry: { base: 1, cap: 2 } })
  t.teardown(() => c.close())
  t.equal((await c.get(`${server.url}/x`)).status, 200)
})

t.test('backoff: exponential, capped, jittered within [step / 2, step]', async t => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 100_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    (attempt, base, extra, random) => {
      const cap = base + extra
      const step = Math.min(cap, base * 2 ** (attempt - 1))
      const d = backoff(attempt, base, cap, () => random)
      return d >= Math.floor(step / 2) && d <= step && d <= cap
    }
  ))
  t.equal(backoff(1, 200, 5000, () => 0), 100)
  t.equal(backoff(3, 200, 5000, () => 0.999999), 800)
  t.equal(backoff(30, 200, 5000, () => 0.5), 3750, 'the cap holds however many attempts')
})

t.test('Retry-After: delay-seconds or an HTTP-date', async t => {
  const cases: Array<[string | string[] | undefined, number | null]> = [
    ['0', 0],
    ['120', 120_000],
    [' 3 ', 3000],
    [['5', '9'], 5000],
    [new Date(NOW + 90_000).toUTCString(), 90_000],
    [new Date(NOW - 1000).toUTCString(), 0],
    [undefined, null],
    ['', null],
    ['-1', null],
    ['1.5', null],
    ['soon', null],
    ['Fri, 99 Foo 2026 25:00:00 GMT', null]
  ]
  for (const [value, expected] of cases) t.equal(retryAfter(value, NOW), expected, JSON.stringify(value))
  fc.assert(fc.property(fc.nat({ max: 1e9 }), (n) => retryAfter(String(n), NOW) === n * 1000))
})
