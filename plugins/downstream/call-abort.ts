import { EventEmitter } from 'node:events'
import type { Sleep } from './options.js'

/**
 * What aborts one call in flight: its deadline, or the caller's signal (`follow`). undici takes
 * an EventEmitter with `aborted` and `reason` as a request's signal, as it takes an AbortSignal;
 * an AbortController makes an EventTarget for each call, many times dearer to make, to listen to
 * and to collect, and an events dispatcher makes a call for every delivery.
 */
export class CallAbort extends EventEmitter {
  aborted = false
  reason: unknown = undefined

  /** Aborts with `reason` (the first one given): undici ends the request with it. */
  abort (reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    this.emit('abort')
  }

  /**
   * Waits `ms` with `sleep`, or until this aborts, whichever comes first. The sleep gets an
   * AbortSignal that aborts with this, made here alone: waits between attempts are rare, and
   * an error of the sleep's after the abort is its answer to that signal, not a failure.
   */
  async wait (sleep: Sleep, ms: number): Promise<void> {
    if (this.aborted) return
    const controller = new AbortController()
    const aborted = new Promise<void>((resolve) => { controller.signal.addEventListener('abort', () => { resolve() }, { once: true }) })
    const stop = (): void => { controller.abort(this.reason) }
    this.once('abort', stop)
    try {
      await Promise.race([aborted, sleep(ms, controller.signal).catch((err: unknown) => { if (!controller.signal.aborted) throw err })])
    } finally {
      this.removeListener('abort', stop)
    }
  }
}
