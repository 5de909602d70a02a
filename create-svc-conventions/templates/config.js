import { exp, exportsLine, js, ts } from '../lib/code.js'

/** config.(ts|js): the environment, checked once at start; production refuses development values. */
export default function config (ctx) {
  return `// The service's configuration, from environment variables only. With NODE_ENV=production
// the secrets must be set and the data must outlive the process; elsewhere fixed development
// values are used, with a warning, so that \`npm start\` works with nothing set.

${ts(ctx, `export interface Config {
  production: boolean
  host: string
  port: number
  /** PostgreSQL embedded (PGlite) in this directory, or \`memory\`; unused with databaseUrl. */
  dataDir: string
  /** A PostgreSQL server instead of the embedded one. */
  databaseUrl: string | undefined
  /** HS256 secret the bearer tokens are signed with. */
  jwtSecret: string
  /** Keys of the paging cursors: the first signs, every one verifies (rotation). */
  cursorSecret: string[]
  corsOrigins: string[]
  rateLimitMax: number
  trustProxy: boolean | string
  logLevel: string
}

`)}${js(ctx, `/**
 * @typedef {object} Config
 * @property {boolean} production
 * @property {string} host
 * @property {number} port
 * @property {string} dataDir PostgreSQL embedded (PGlite) in this directory, or \`memory\`; unused with databaseUrl.
 * @property {string | undefined} databaseUrl A PostgreSQL server instead of the embedded one.
 * @property {string} jwtSecret HS256 secret the bearer tokens are signed with.
 * @property {string[]} cursorSecret Keys of the paging cursors: the first signs, every one verifies (rotation).
 * @property {string[]} corsOrigins
 * @property {number} rateLimitMax
 * @property {boolean | string} trustProxy
 * @property {string} logLevel
 */

`)}/** Development values: safe on a laptop, refused in production. */
const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789'
const DEV_CURSOR_SECRET = 'dev-only-cursor-secret-0123456789'
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

${js(ctx, `/**
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ config: Config, warnings: string[] }}
 */
`)}${ts(ctx, '/** Reads and checks the environment; throws one message naming every bad variable. */\n')}${exp(ctx)}function loadConfig (env${ts(ctx, ': NodeJS.ProcessEnv')} = process.env)${ts(ctx, ': { config: Config, warnings: string[] }')} {
  const production = env.NODE_ENV === 'production'
  const errors${ts(ctx, ': string[]')} = []
  const warnings${ts(ctx, ': string[]')} = []
  const text = (name${ts(ctx, ': string')})${ts(ctx, ': string | undefined')} => env[name] === '' ? undefined : env[name]
  const list = (name${ts(ctx, ': string')})${ts(ctx, ': string[]')} => (text(name) ?? '').split(',').map(s => s.trim()).filter(s => s !== '')

  // A secret is never repeated in a message: logs keep them. Its size counts bytes, as the
  // plugins count them; \`keys\`: a comma-separated list of keys, each checked.
  const secret = (name${ts(ctx, ': string')}, dev${ts(ctx, ': string')}, minBytes${ts(ctx, ': number')}, keys = false)${ts(ctx, ': string')} => {
    const value = text(name)
    if (value === undefined) {
      if (production) errors.push(\`\${name} is required when NODE_ENV=production\`)
      else warnings.push(\`\${name} is not set: using a fixed development secret (never in production)\`)
      return dev
    }
    for (const key of keys ? value.split(',').map(k => k.trim()) : [value]) {
      const bytes = Buffer.byteLength(key)
      if (bytes < minBytes) errors.push(\`\${name}: at least \${minBytes} bytes (got \${bytes}, not shown)\`)
    }
    return value
  }
  const integer = (name${ts(ctx, ': string')}, fallback${ts(ctx, ': number')}, min${ts(ctx, ': number')}, max${ts(ctx, ': number')})${ts(ctx, ': number')} => {
    const value = text(name)
    if (value === undefined) return fallback
    const n = Number(value)
    if (!Number.isInteger(n) || n < min || n > max) errors.push(\`\${name}: an integer from \${min} to \${max} (got \${JSON.stringify(value)})\`)
    return n
  }

  const trustProxy = text('TRUST_PROXY')
  const config = {
    production,
    host: text('HOST') ?? '127.0.0.1',
    port: integer('PORT', 3000, 0, 65535),
    dataDir: text('DATA_DIR') ?? './data',
    databaseUrl: text('DATABASE_URL'),
    jwtSecret: secret('AUTH_JWT_SECRET', DEV_JWT_SECRET, 32),
    cursorSecret: secret('CURSOR_SECRET', DEV_CURSOR_SECRET, 16, true).split(',').map(s => s.trim()),
    corsOrigins: list('CORS_ORIGINS'),
    rateLimitMax: integer('RATE_LIMIT_MAX', 1000, 1, 1_000_000_000),
    // true: the last proxy's X-Forwarded-For; else the proxies' addresses (comma-separated).
    trustProxy: trustProxy === undefined || trustProxy === 'false' ? false : trustProxy === 'true' ? true : trustProxy,
    logLevel: text('LOG_LEVEL') ?? 'info'
  }
  if (config.databaseUrl !== undefined && !/^postgres(ql)?:\\/\\//.test(config.databaseUrl)) errors.push('DATABASE_URL: a postgres:// or postgresql:// URL (got something else, not shown)')
  if (production && config.databaseUrl === undefined && config.dataDir === 'memory') {
    errors.push('DATA_DIR=memory loses every entity when the process stops: set DATA_DIR to a directory, or DATABASE_URL, when NODE_ENV=production')
  }
  for (const origin of config.corsOrigins) {
    if (!/^https?:\\/\\/[^/*]+$/.test(origin)) errors.push(\`CORS_ORIGINS: \${JSON.stringify(origin)} is not an origin such as https://app.example.com\`)
  }
  // Fastify takes a hop count, then believes no proxy: it cannot tell one from a direct client.
  if (typeof config.trustProxy === 'string' && /^\\d+$/.test(config.trustProxy)) errors.push(\`TRUST_PROXY: a hop count is not taken; give the proxies' addresses or ranges, such as 10.0.0.0/8 (got \${JSON.stringify(config.trustProxy)})\`)
  if (!LOG_LEVELS.includes(config.logLevel)) errors.push(\`LOG_LEVEL: one of \${LOG_LEVELS.join(', ')} (got \${JSON.stringify(config.logLevel)})\`)
  if (errors.length > 0) throw new Error(\`Invalid configuration:\\n- \${errors.join('\\n- ')}\`)
  return { config, warnings }
}
${exportsLine(ctx, ['loadConfig'])}`
}
