import type { CallAbort } from './call-abort.js'

/**
 * The calls in flight that follow each caller's signal. A signal gets one listener however many
 * calls share it: one listener a call made Node warn of a leak (`MaxListenersExceededWarning`)
 * as soon as more than ten calls shared a signal, as an events dispatcher's calls share its stop
 * signal. Not `AbortSignal.any` either: each composite it makes is kept by a long-lived signal
 * until the collector finds it, at a few µs a call in weak references and finalizers.
 */
interface Followers {
  calls: Set<CallAbort>
  listener: () => void
}

const bySignal = new WeakMap<AbortSignal, Followers>()

/**
 * Aborts `call` with `signal`'s reason when `signal` aborts (at once when it has), until the
 * function returned is called, which the call does when it ends. The signal's listener goes with
 * its last call in flight.
 */
export function follow (signal: AbortSignal, call: CallAbort): () => void {
  if (signal.aborted) {
    call.abort(signal.reason)
    return () => {}
  }
  let followers = bySignal.get(signal)
  if (followers === undefined) {
    const calls = new Set<CallAbort>()
    followers = { calls, listener: () => { for (const c of calls) c.abort(signal.reason) } }
    bySignal.set(signal, followers)
    signal.addEventListener('abort', followers.listener)
  }
  const { calls, listener } = followers
  calls.add(call)
  return () => {
    calls.delete(call)
    if (calls.size > 0) return
    bySignal.delete(signal)
    signal.removeEventListener('abort', listener)
  }
}
