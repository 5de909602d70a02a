import t from 'tap'
import { CallAbort } from '../../plugins/downstream/call-abort.js'

// What aborts one call: undici's signal (an emitter with aborted and reason), and the wait between attempts.

t.test('aborts once, with the first reason, and tells its listeners once', async t => {
  const call = new CallAbort()
  let told = 0
  call.on('abort', () => { told++ })
  t.equal(call.aborted, false)
  const first = new Error('first')
  call.abort(first)
  call.abort(new Error('second'))
  t.equal(call.aborted, true)
  t.equal(call.reason, first)
  t.equal(told, 1)
})

t.test('a wait: the sleep\'s own end, or the abort\'s, whichever comes first', async t => {
  const slept: number[] = []
  const call = new CallAbort()
  await call.wait(async (ms) => { slept.push(ms) }, 25)
  t.strictSame(slept, [25], 'the sleep ended it')
  t.equal(call.listenerCount('abort'), 0, 'nothing left listening')

  let signal: AbortSignal | null = null
  const waiting = call.wait(async (_ms, s) => { signal = s; await new Promise(() => {}) }, 1000)
  const reason = new Error('stop')
  call.abort(reason)
  await waiting
  t.equal((signal as AbortSignal | null)?.reason, reason, 'the sleep told, with the reason')
  t.equal(call.listenerCount('abort'), 0)

  let asked = false
  await call.wait(async () => { asked = true }, 1000)
  t.equal(asked, false, 'aborted already: no wait at all')
})
