import { EventEmitter } from 'node:events'

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
}
