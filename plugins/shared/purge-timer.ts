import type { FastifyInstance } from 'fastify'
import { optionChecks } from './options.js'

/**
 * Deletes what a table keeps past its retention now and then, never on a request's path.
 * The timer does not keep the process alive and stops when the instance closes; a failed
 * purge is logged and tried again at the next tick.
 */
export function schedulePurge (
  fastify: FastifyInstance,
  interval: number,
  purge: () => Promise<{ deleted: number }>,
  what: { done: string, failed: string }
): void {
  if (interval <= 0) return
  const timer = setInterval(() => {
    purge().then(
      ({ deleted }) => { if (deleted > 0) fastify.log.debug({ purged: deleted }, what.done) },
      (err: unknown) => { fastify.log.warn({ err }, what.failed) }
    )
  }, interval)
  timer.unref()
  fastify.addHook('onClose', async () => { clearInterval(timer) })
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
