import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { signToken } from 'svc-conventions/auth'
import { loadConfig, tokenClaims } from '../config.js'

/**
 * `npm run token -- [--sub ID] [--scope "a b"] [--expires-in 1h]`: prints a bearer token signed
 * with the configured AUTH_JWT_SECRET (the development secret when unset), and nothing else, so
 * that `TOKEN=$(npm run -s token)` works (`-s`: without npm's own banner). It loads the auth plugin alone, not the whole suite.
 */
export const ALL_SCOPES = 'authors:read authors:write documents:read documents:write webhooks:read webhooks:write'

export const TOKEN_USAGE = `usage: npm run token -- [--sub ID] [--scope "a b"] [--expires-in 1h]

Prints a bearer token for the reference service, signed with AUTH_JWT_SECRET (the
development secret when it is unset), with AUTH_ISSUER's first issuer and AUTH_AUDIENCE's
audiences when they are set, on one line and nothing else:

  TOKEN=$(npm run -s token)          # -s: without npm's banner
  curl -H "Authorization: Bearer $TOKEN" -H 'User-Agent: me/1.0' http://127.0.0.1:3000/v1/authors

  --sub ID          the token's subject, written to createdBy and modifiedBy (default dev-user)
  --scope "a b"     space-separated scopes (default: every scope of the service:
                    ${ALL_SCOPES})
  --expires-in T    lifetime: seconds, or a duration such as 15m, 1h, 7d (default 1h)
  -h, --help        this text`

/** The token for `argv`, or the usage text for --help. Throws for an unknown or malformed option. */
export function tokenCommand (argv: string[], env: NodeJS.ProcessEnv): string {
  const { values } = parseArgs({
    args: argv,
    options: {
      sub: { type: 'string', default: 'dev-user' },
      scope: { type: 'string', default: ALL_SCOPES },
      'expires-in': { type: 'string', default: '1h' },
      help: { type: 'boolean', short: 'h', default: false }
    },
    strict: true,
    allowPositionals: false
  })
  if (values.help) return TOKEN_USAGE
  const { config } = loadConfig(env)
  const expiresIn = /^\d+$/.test(values['expires-in']) ? Number(values['expires-in']) : values['expires-in']
  // A token the service accepts: the first issuer it takes, and every audience it takes.
  const { issuer, audience } = tokenClaims(config)
  return signToken({ secret: config.jwtSecret, sub: values.sub, scope: values.scope, expiresIn, issuer: issuer?.[0], audience })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.stdout.write(tokenCommand(process.argv.slice(2), process.env) + '\n')
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n(npm run token -- --help for the options)\n`)
    process.exit(2)
  }
}
