import { imp } from '../lib/code.js'

/** bin/token.(ts|js): `npm run token`, a bearer token signed with the service's secret. */
export default function token (ctx) {
  return `${imp(ctx, 'node:util', { names: ['parseArgs'] })}${imp(ctx, 'svc-conventions/auth', { names: ['signToken'] })}${imp(ctx, '../config.js', { names: ['loadConfig'] })}${imp(ctx, '../resources/index.js', { names: ['scopes'] })}
// \`npm run -s token -- [--sub ID] [--scope "a b"] [--expires-in 1h]\`: prints a token signed
// with AUTH_JWT_SECRET (the development secret when unset), and nothing else, so that
// TOKEN=$(npm run -s token) works. Run it where the service runs, with the same environment.
try {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string', default: 'dev-user' },
      scope: { type: 'string', default: scopes.join(' ') },
      'expires-in': { type: 'string', default: '1h' }
    }
  })
  const { config } = loadConfig(process.env)
  process.stdout.write(signToken({ secret: config.jwtSecret, sub: values.sub, scope: values.scope, expiresIn: values['expires-in'] }) + '\\n')
} catch (err) {
  process.stderr.write(\`\${err instanceof Error ? err.message : String(err)}\\n\`)
  process.exitCode = 2
}
`
}
