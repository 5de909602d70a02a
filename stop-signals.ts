/** What one SIGINT or SIGTERM asks of the service. */
export type StopVerdict = 'stop' | 'repeat' | 'force'

export interface StopRequests {
  /** The stop has begun for another reason (an error nothing handled, a signal close-with-grace took). */
  begin: () => void
  /** A SIGINT or SIGTERM: the stop, nothing (a copy of the stop's own signal), or an exit at once. */
  signal: () => StopVerdict
}

/**
 * Tells the copies of one stop from a second stop asked. Under an npm script (`npm start`, whose
 * script execs the service so that a SIGTERM sent to npm alone reaches it), one Ctrl-C arrives
 * twice: the terminal signals npm's process group, the service in it, and npm forwards the
 * signal again. So the first signal stops, the next `copies - 1` are copies of it, and the one
 * after them is somebody who will not wait for the drain: it exits at once. Counted, not timed,
 * so that a busy machine cannot turn a copy into a second request.
 */
export function stopRequests (copies: number): StopRequests {
  let started = false
  let seen = 0
  return {
    // Stopping already: the next signal is a request of its own, and exits at once.
    begin: () => {
      if (started) return
      started = true
      seen = copies
    },
    signal: () => {
      seen++
      if (!started) {
        started = true
        return 'stop'
      }
      return seen <= copies ? 'repeat' : 'force'
    }
  }
}

/** How many times one stop reaches the service: twice when an npm script runs it (npm forwards a terminal's signal), else once. */
export function signalCopies (env: NodeJS.ProcessEnv): number {
  return env.npm_lifecycle_event === undefined ? 1 : 2
}
