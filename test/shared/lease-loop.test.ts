import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { LeaseLoop, type LeaseLoopOptions } from '../../plugins/shared/lease-loop.js'

// The loop jobs and event deliveries share: one look at a time, a notification or a wake during
// a look brings one more after it, the safety poll after each look, nothing once stopped.

interface Harness {
  loop: LeaseLoop
  looks: () => number
  notify: () => void
  warnings: string[]
  /** Holds the next look open until `release` is called. */
  hold: () => { release: () => void, started: Promise<void> }
}

function harness (t: Test, opts: { wait?: number, listenFails?: boolean } = {}): Harness {
  let looks = 0
  let onNotify: () => void = () => {}
  let held: { gate: Promise<void>, started: () => void } | null = null
  const warnings: string[] = []
  const o: LeaseLoopOptions = {
    store: {
      listen: async (channel, fn) => {
        if (opts.listenFails === true) throw new Error('no LISTEN here')
        t.equal(channel, 'things_changed')
        onNotify = fn
        return async () => { onNotify = () => {} }
      }
    },
    channel: 'things_changed',
    look: async () => {
      looks++
      const h = held
      held = null
      if (h !== null) {
        h.started()
        await h.gate
      }
      return opts.wait ?? 60_000
    },
    notified: () => { loop.soon(0) },
    again: () => { loop.soon(0) },
    unheard: 'things: not listening',
    log: { warn: (_obj, msg) => { warnings.push(msg) } }
  }
  const loop = new LeaseLoop(o)
  // The loop's timers do not hold the process open; the test's waits on them need it open.
  const keep = setInterval(() => {}, 1000)
  t.teardown(async () => {
    clearInterval(keep)
    await loop.stop()
  })
  return {
    loop,
    looks: () => looks,
    notify: () => { onNotify() },
    warnings,
    hold: () => {
      let release: () => void = () => {}
      let started: () => void = () => {}
      const gate = new Promise<void>((resolve) => { release = resolve })
      const startedP = new Promise<void>((resolve) => { started = resolve })
      held = { gate, started }
      return { release, started: startedP }
    }
  }
}

async function until (check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(5)
}

t.test('looks once at start, then on a notification, not before the poll otherwise', async t => {
  const h = harness(t)
  t.ok(h.loop.stopped, 'stopped until started')
  h.loop.soon(0)
  await sleep(20)
  t.equal(h.looks(), 0, 'no look before start')
  await h.loop.start()
  await until(() => h.looks() === 1)
  t.equal(h.looks(), 1, 'the first look')
  t.ok(h.loop.dueAt > Date.now() + 50_000, 'the safety poll is next')
  h.notify()
  await until(() => h.looks() === 2)
  t.equal(h.looks(), 2, 'a notification looks at once')
  await sleep(30)
  t.equal(h.looks(), 2, 'and once only')
})

t.test('a notification during a look brings one more look after it, not a second one at once', async t => {
  const h = harness(t)
  const first = h.hold()
  await h.loop.start()
  await first.started
  h.notify()
  h.notify()
  await sleep(20)
  t.equal(h.looks(), 1, 'one look at a time')
  first.release()
  await until(() => h.looks() === 2)
  await sleep(20)
  t.equal(h.looks(), 2, 'the notifications during the look brought one more')
})

t.test('a scheduled look that comes due during a look runs after it', async t => {
  const h = harness(t)
  const first = h.hold()
  await h.loop.start()
  await first.started
  h.loop.schedule(0)
  await sleep(20)
  t.equal(h.looks(), 1, 'not while the first runs')
  first.release()
  await until(() => h.looks() === 2)
  t.equal(h.looks(), 2)
})

t.test('soon keeps a look due sooner; schedule replaces it', async t => {
  const h = harness(t, { wait: 10_000 })
  await h.loop.start()
  await until(() => h.looks() === 1)
  await until(() => h.loop.dueAt !== Infinity)
  const due = h.loop.dueAt
  h.loop.soon(20_000)
  t.equal(h.loop.dueAt, due, 'a later look does not put off the one due')
  h.loop.schedule(20_000)
  t.ok(h.loop.dueAt > due, 'schedule puts it off')
})

t.test('the safety poll looks again after the wait the look gave', async t => {
  const h = harness(t, { wait: 10 })
  await h.loop.start()
  await until(() => h.looks() >= 3)
  t.ok(h.looks() >= 3, 'polled')
  await h.loop.stop()
  const looked = h.looks()
  t.equal(h.loop.dueAt, Infinity, 'nothing due once stopped')
  h.loop.soon(0)
  await sleep(30)
  t.equal(h.looks(), looked, 'no look once stopped')
})

t.test('stopping during a look waits for it and sets no next one', async t => {
  const h = harness(t)
  const first = h.hold()
  await h.loop.start()
  await first.started
  const stopped = h.loop.stop()
  first.release()
  await stopped
  t.equal(h.loop.dueAt, Infinity)
  t.ok(h.loop.stopped)
})

t.test('a database it cannot listen to leaves the poll, logged', async t => {
  const h = harness(t, { listenFails: true, wait: 10 })
  await h.loop.start()
  await until(() => h.looks() >= 2)
  t.strictSame(h.warnings, ['things: not listening'])
  t.ok(h.looks() >= 2, 'polling')
})
