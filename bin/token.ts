import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../config.js'
import { signToken } from '../index.js'

/**
 * `npm run token -- [--sub ID] [--scope "a b"] [--expires-in 1h]`: prints a bearer token signed
 * with the configured AUTH_JWT_SECRET (the development secret when unset).
 */
export const ALL_SCOPES = 'authors:read authors:write documents:read documents:write'

export function tokenCommand (argv: string[], env: NodeJS.ProcessEnv): string {
  const { values } = parseArgs({
    args: argv,
    options: {
      sub: { type: 'string', default: 'dev-user' },
      scope: { type: 'string', default: ALL_SCOPES },
      'expires-in': { type: 'string', default: '1h' }
    },
    strict: true
  })
  const { config } = loadConfig(env)
  const expiresIn = /^\d+$/.test(values['expires-in']) ? Number(values['expires-in']) : values['expires-in']
  return signToken({ secret: config.jwtSecret, sub: values.sub, scope: values.scope, expiresIn })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.stdout.write(tokenCommand(process.argv.slice(2), process.env) + '\n')
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(2)
  }
}
