import type { FastifyServerOptions } from 'fastify'
import pino from 'pino'
import type { Config } from './config.js'

/**
 * The service's log: JSON lines for log collectors, or readable lines for a person at a
 * terminal in development (pino-pretty, a development dependency, loaded only then).
 *
 * Either way each line is written when it is logged. pino's default destination writes in the
 * background and, at an exit, writes what it holds at once, possibly ahead of a line still on
 * its way: the last lines came out of order ("stopped" before a request logged earlier) or not
 * at all. A line costs the service a system call of its own instead.
 */
export async function logOptions (config: Pick<Config, 'production' | 'logLevel'>, terminal = process.stdout.isTTY === true): Promise<NonNullable<FastifyServerOptions['logger']>> {
  if (!config.production && terminal) {
    try {
      const { default: pretty } = await import('pino-pretty')
      return { level: config.logLevel, stream: pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) }
    } catch {} // installed without development dependencies
  }
  return { level: config.logLevel, stream: pino.destination({ dest: 1, sync: true }) }
}
