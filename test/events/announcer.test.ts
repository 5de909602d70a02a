import t from 'tap'
import { Announcer, type AnnouncerOptions } from '../../plugins/events/announcer.js'

// The announcer's counts and turns on a clock the test moves: no case waits on the wall clock.

/** A clock and timers that move only when told: `fire` runs the timers due on the clock, or the first one set whatever the clock says (a timer that fires early). */
function manualTime (): Required<Pick<AnnouncerOptions, 'now' | 'after'>> & { set: (ms: number) => void, fire: (early?: boolean) => void, pending: () => number[] } {
  let at = 0
  let timers: Array<{ due: number, fn: () => void }> = []
  return {
    now: () => at,
    after: (ms, fn) => {
      const timer = { due: at + ms, fn }
      timers.push(timer)
      return () => { timers = timers.filter((other) => other !== timer) }
    },
    set: (ms) => { at = ms },
    fire: (early = false) => {
      const due = early ? timers.slice(0, 1) : timers.filter((timer) => timer.due <= at)
      timers = timers.filter((timer) => !due.includes(timer))
      for (const timer of due) timer.fn()
    },
    pending: () => timers.map((timer) => timer.due)
  }
}

/** An announcer whose sends are recorded (on its clock), each held until `release` when `hold` is set. */
function recorded (gapMillis: number, hold = false, time: Partial<AnnouncerOptions> = {}): { announcer: Announcer, sends: number[], release: () => void, failures: unknown[], fail: (err: Error | null) => void } {
  const sends: number[] = []
  const failures: unknown[] = []
  let waiting: Array<() => void> = []
  let failWith: Error | null = null
  const announcer = new Announcer({
    gapMillis,
    send: async () => {
      sends.push(time.now?.() ?? 0)
      if (hold) await new Promise<void>((resolve) => { waiting.push(resolve) })
      if (failWith !== null) throw failWith
    },
    log: { warn: (obj, msg) => { failures.push({ ...obj, msg }) } },
    ...time
  })
  const release = (): void => { const w = waiting; waiting = []; for (const r of w) r() }
  return { announcer, sends, release, failures, fail: (err) => { failWith = err } }
}

t.test('a burst in one tick: one notification at once, one after the gap for the rest', async t => {
  const time = manualTime()
  const { announcer, sends } = recorded(30, false, time)
  for (let i = 0; i < 100; i++) announcer.announce()
  t.strictSame(sends, [0], 'the first leaves at once')
  await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(time.pending(), [30], 'the rest wait for the gap')
  time.set(29)
  time.fire()
  t.strictSame(sends, [0], 'not before it')
  time.set(30)
  time.fire()
  t.strictSame(sends, [0, 30], 'the other 99 share one')
  await announcer.settled()
  time.set(45)
  announcer.announce()
  t.strictSame(time.pending(), [60], 'a later one waits for the gap after the last')
  const settled = announcer.settled()
  time.set(60)
  time.fire()
  await settled
  t.strictSame(sends, [0, 30, 60], 'and is sent too')
  time.set(200)
  announcer.announce()
  t.strictSame(sends, [0, 30, 60, 200], 'after a quiet spell, one leaves at once')
  await announcer.settled()
})

t.test('a timer that fires before the clock reads the gap: the turn waits for the rest of it', async t => {
  const time = manualTime()
  const { announcer, sends } = recorded(30, false, time)
  announcer.announce()
  announcer.announce()
  await new Promise((resolve) => setImmediate(resolve))
  time.set(28)
  time.fire(true)
  t.strictSame(sends, [0], 'nothing sent early')
  t.strictSame(time.pending(), [30], 'a new wait, to the end of the gap')
  time.set(30)
  time.fire()
  await announcer.settled()
  t.strictSame(sends, [0, 30])
})

t.test('while one is in flight, announcements wait for it, and one follows', async t => {
  const { announcer, sends, release } = recorded(0, true)
  announcer.announce()
  announcer.announce()
  announcer.announce()
  t.equal(sends.length, 1, 'one in flight')
  release()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(sends.length, 2, 'then one for the two that waited')
  release()
  await announcer.settled()
  t.equal(sends.length, 2, 'and no more')
})

t.test('a notification that fails is reported, and the next announcement sends again', async t => {
  const { announcer, sends, failures, fail } = recorded(0)
  const refused = new Error('connection refused')
  fail(refused)
  announcer.announce()
  await announcer.settled()
  t.strictSame(failures, [{ err: refused, msg: 'events: could not tell the other instances of new deliveries; they find them at their next poll' }], 'logged, not thrown')
  fail(null)
  announcer.announce()
  await announcer.settled()
  t.equal(sends.length, 2)
  t.equal(failures.length, 1)
})

t.test('close sends what is waiting at once, and nothing after', async t => {
  const { announcer, sends } = recorded(60_000)
  announcer.announce()
  await announcer.settled()
  announcer.announce()
  t.equal(sends.length, 1, 'the second waits a minute for its turn')
  await announcer.close()
  t.equal(sends.length, 2, 'sent by close, without the wait')
  announcer.announce()
  await announcer.settled()
  t.equal(sends.length, 2, 'nothing once closed')
})

t.test('close with nothing waiting sends nothing', async t => {
  const { announcer, sends } = recorded(30)
  await announcer.close()
  announcer.announce()
  await announcer.settled()
  t.strictSame(sends, [])
})
