import type { FastifyInstance } from 'fastify'

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
