import t from 'tap'
import Fastify from 'fastify'
import { FIRST_PURGE_MILLIS, schedulePurge } from '../../plugins/shared/purge-timer.js'
import type { After } from '../../plugins/shared/after.js'

// The purge's turns, on a timer fired by hand: a first one soon after the start, the next one
// an interval after each run ends.

const HOUR = 3_600_000

function handTimer (): { after: After, waits: number[], fire: () => void, cancelled: () => number } {
  const pending: Array<() => void> = []
  const waits: number[] = []
  let cancelled = 0
  const after: After = (ms, fn) => {
    waits.push(ms)
    pending.push(fn)
    return () => { cancelled++ }
  }
  return { after, waits, fire: () => { (pending.shift() as () => void)() }, cancelled: () => cancelled }
}

const settled = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve)) }

t.test('a first purge within a minute of the start, then one an interval after each run ends', async t => {
  const cases: Array<[number, number]> = [[HOUR, FIRST_PURGE_MILLIS], [20, 20], [FIRST_PURGE_MILLIS + 1, FIRST_PURGE_MILLIS]]
  for (const [interval, first] of cases) {
    const app = Fastify()
    const timer = handTimer()
    const runs: Array<(v: { deleted: number }) => void> = []
    schedulePurge(app, interval, async () => await new Promise((resolve) => runs.push(resolve)), { done: 'purged', failed: 'failed' }, timer.after)
    t.strictSame(timer.waits, [first], `interval ${interval}: the first wait`)
    timer.fire()
    t.equal(runs.length, 1, 'the purge runs')
    await settled()
    t.strictSame(timer.waits, [first], 'no next turn while it runs')
    ;(runs[0] as (v: { deleted: number }) => void)({ deleted: 3 })
    await settled()
    t.strictSame(timer.waits, [first, interval], 'the next turn an interval after it ended')
    await app.close()
    t.equal(timer.cancelled(), 1, 'closing cancels the turn waiting')
  }
})

t.test('a failed purge is logged and tried again at the next turn; none after the close', async t => {
  const warned: string[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { warned.push(JSON.parse(line).msg) } } } })
  const timer = handTimer()
  let runs = 0
  let finish: () => void = () => {}
  schedulePurge(app, HOUR, async () => {
    runs++
    if (runs === 1) throw new Error('database gone')
    return await new Promise((resolve) => { finish = () => resolve({ deleted: 0 }) })
  }, { done: 'purged', failed: 'purge failed' }, timer.after)
  timer.fire()
  await settled()
  t.strictSame(warned, ['purge failed'])
  t.strictSame(timer.waits, [FIRST_PURGE_MILLIS, HOUR])
  timer.fire()
  await settled()
  await app.close()
  finish()
  await settled()
  t.equal(runs, 2)
  t.strictSame(timer.waits, [FIRST_PURGE_MILLIS, HOUR], 'a run that ends after the close schedules nothing')
})

t.test('an interval of 0 never purges', async t => {
  const app = Fastify()
  const timer = handTimer()
  schedulePurge(app, 0, async () => ({ deleted: 0 }), { done: 'purged', failed: 'failed' }, timer.after)
  t.strictSame(timer.waits, [])
  await app.close()
})
