import type { FastifyInstance } from 'fastify'
import { SECRET, listen } from '../resource/helper.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import type { Store } from '../../index.js'

/**
 * The reference service (app.ts) listening on a loopback port, over the test's store (or
 * its own in-memory one), configured by environment variables like `npm start`.
 */
export async function startService (t: { teardown: (fn: () => unknown) => void }, store?: Store, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, base: string }> {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', ...env })
  const app = await buildApp(config, store === undefined ? {} : { store })
  t.teardown(() => app.close())
  return { app, base: await listen(app) }
}
