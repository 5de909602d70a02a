/**
 * A timer that can be injected: calls `fn` after `ms` and returns what cancels it. A test gives
 * one that it fires by hand, or never, so that nothing it checks waits on the wall clock.
 */
export type After = (ms: number, fn: () => void) => () => void

/** The real one: `setTimeout`, not keeping the process alive. */
export const after: After = (ms, fn) => {
  const timer = setTimeout(fn, ms)
  timer.unref()
  return () => { clearTimeout(timer) }
}
