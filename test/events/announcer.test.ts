import t from 'tap'
import { Announcer } from '../../plugins/events/announcer.js'

// The announcer's counts, never its timing: each case waits for it to settle, and the one bound
// checked (a gap at least as long as asked) only grows on a loaded machine.

/** An announcer whose sends are recorded, each held until `release` when `hold` is set. */
function recorded (gapMillis: number, hold = false): { announcer: Announcer, sends: number[], release: () => void, failures: unknown[], fail: (err: Error | null) => void } {
  const sends: number[] = []
  const failures: unknown[] = []
  let waiting: Array<() => void> = []
  let failWith: Error | null = null
  const announcer = new Announcer({
    gapMillis,
    send: async () => {
      sends.push(performance.now())
      if (hold) await new Promise<void>((resolve) => { waiting.push(resolve) })
      if (failWith !== null) throw failWith
    },
    log: { warn: (obj, msg) => { failures.push({ ...obj, msg }) } }
  })
  const release = (): void => { const w = waiting; waiting = []; for (const r of w) r() }
  return { announcer, sends, release, failures, fail: (err) => { failWith = err } }
}

t.test('a burst in one tick: one notification at once, one after the gap for the rest', async t => {
  const { announcer, sends } = recorded(30)
  for (let i = 0; i < 100; i++) announcer.announce()
  t.equal(sends.length, 1, 'the first leaves at once')
  await announcer.settled()
  t.equal(sends.length, 2, 'the other 99 share one')
  t.ok((sends[1] as number) - (sends[0] as number) >= 29, 'no sooner than the gap after the first')
  announcer.announce()
  await announcer.settled()
  t.equal(sends.length, 3, 'a later one is sent too')
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
  announcer.announce()
  t.equal(sends.length, 1, 'the second waits a minute for its turn')
  await announcer.close()
  t.equal(sends.length, 2, 'sent by close, without the wait')
  announcer.announce()
  await announcer.settled()
  t.equal(sends.length, 2, 'nothing once closed')
})
