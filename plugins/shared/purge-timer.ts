import type { FastifyInstance } from 'fastify'
import { after, type After } from './after.js'
import { optionChecks } from './options.js'

/** The longest wait for an instance's first purge: one restarted more often than its interval still purges. */
export const FIRST_PURGE_MILLIS = 60_000

/**
 * Deletes what a table keeps past its retention now and then, never on a request's path: a
 * first time at most a minute after the start, then `interval` after each run ends, so that an
 * instance restarted more often than its interval (a deploy, a crash loop) still purges, and two
 * runs of one instance never overlap. The timer does not keep the process alive and stops when
 * the instance closes; a failed purge is logged and tried again at the next turn.
 */
export function schedulePurge (
  fastify: FastifyInstance,
  interval: number,
  purge: () => Promise<{ deleted: number }>,
  what: { done: string, failed: string },
  timer: After = after
): void {
  if (interval <= 0) return
  let closed = false
  // Each turn returns what cancels it; the one waiting is the one a close cancels.
  const turn = (ms: number): (() => void) => timer(ms, () => {
    purge().then(
      ({ deleted }) => { if (deleted > 0) fastify.log.debug({ purged: deleted }, what.done) },
      (err: unknown) => { fastify.log.warn({ err }, what.failed) }
    ).finally(() => { if (!closed) cancel = turn(interval) })
  })
  let cancel = turn(Math.min(interval, FIRST_PURGE_MILLIS))
  fastify.addHook('onClose', async () => {
    closed = true
    cancel()
  })
}

const HOUR = 60 * 60 * 1000

/**
 * The `retention` and `purgeInterval` options of a plugin that keeps ended rows for a while,
 * checked, with their defaults: `defaultRetention`, and a purge every retention, at most hourly.
 */
export function retentionOptions (plugin: string, opts: { retention?: unknown, purgeInterval?: unknown }, defaultRetention: number): { retention: number, purgeInterval: number } {
  const { positiveInteger, timerMillis } = optionChecks(`${plugin} plugin`)
  // The retention is only compared with timestamps, in SQL; the interval is a timer's.
  const retention = positiveInteger('retention', opts.retention ?? defaultRetention)
  const purgeInterval = timerMillis('purgeInterval', opts.purgeInterval ?? Math.min(retention, HOUR), 'never')
  return { retention, purgeInterval }
}
