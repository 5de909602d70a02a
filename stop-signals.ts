/** What one SIGINT or SIGTERM asks of the service. */
export type StopVerdict = 'stop' | 'repeat' | 'force'

export interface StopRequests {
  /** The stop has begun for another reason (an error nothing handled, a signal close-with-grace took). */
  begin: () => void
  /** A SIGINT or SIGTERM: the stop, nothing (the same stop again), or an exit at once. */
  signal: () => StopVerdict
}

/**
 * Tells a stop asked twice from a second stop asked. Under `npm start` (whose script execs the
 * service, so that a SIGTERM sent to npm alone reaches it), one Ctrl-C arrives twice: the
 * terminal signals npm's process group, the service in it, and npm forwards the signal again.
 * A signal within `repeatMillis` of the stop's start is that same stop; a later one is somebody
 * who will not wait for the drain, and exits at once.
 */
export function stopRequests ({ now = () => performance.now(), repeatMillis = 1000 }: { now?: () => number, repeatMillis?: number } = {}): StopRequests {
  let since: number | undefined
  return {
    begin: () => { since ??= now() },
    signal: () => {
      if (since === undefined) {
        since = now()
        return 'stop'
      }
      return now() - since < repeatMillis ? 'repeat' : 'force'
    }
  }
}
