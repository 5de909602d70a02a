import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** The reference service's configuration, read from environment variables only. */
export const Config = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
  // The directory of versioned SQL migration files; null: ./migrations when it exists.
  migrationsDir: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  // Milliseconds a statement may wait for the PostgreSQL server's answer (0: for ever).
  databaseStatementTimeout: Type.Integer({ minimum: 0 }),
  // The auth plugin refuses an HS256 secret under 32 bytes (RFC 7518 §3.2); checked here too, so one message says so.
  jwtSecret: Type.String({ minLength: 32 }),
  jwksUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
  corsOrigins: Type.Array(Type.String({ pattern: '^https?://[^/*]+$' })),
  webhookSecretScanner: Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]+$' }),
  trustProxy: Type.Union([Type.Boolean(), Type.String(), Type.Integer({ minimum: 1 })]),
  rateLimitMax: Type.Integer({ minimum: 1 }),
  rateLimitWindow: Type.String({ minLength: 1 }),
  executionContexts: Type.Array(Type.String({ pattern: '^[a-z0-9_-]{1,100}$' })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l))),
  cursorSecret: Type.String({ minLength: 16 }),
  redisUrl: Type.Union([Type.String({ pattern: '^rediss?://' }), Type.Null()]),
  production: Type.Boolean()
})
export type Config = Static<typeof Config>

/** Development defaults: safe on a laptop, refused in production where a secret matters. */
export const DEV_JWT_SECRET = 'dev-only-secret-change-me-0123456789'
export const DEV_WEBHOOK_SECRET = 'whsec_ZGV2LW9ubHktd2ViaG9vay1zZWNyZXQtc2Nhbm5lcg=='
export const DEV_CURSOR_SECRET = 'dev-only-cursor-secret-0123456789'

export interface ConfigResult { config: Config, warnings: string[] }

function list (value: string | undefined): string[] {
  return (value ?? '').split(',').map(s => s.trim()).filter(s => s !== '')
}

function trustProxy (value: string | undefined): boolean | string | number {
  if (value === undefined || value === '' || value === 'false') return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) return Number(value)
  return value
}

/** The variable each setting comes from, for messages that name what the user set. */
const VARIABLES: Record<keyof Config, string> = {
  host: 'HOST',
  port: 'PORT',
  dataDir: 'DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  migrationsDir: 'MIGRATIONS_DIR',
  databaseStatementTimeout: 'DATABASE_STATEMENT_TIMEOUT',
  jwtSecret: 'AUTH_JWT_SECRET',
  jwksUrl: 'AUTH_JWKS_URL',
  corsOrigins: 'CORS_ORIGINS',
  webhookSecretScanner: 'WEBHOOK_SECRET_SCANNER',
  trustProxy: 'TRUST_PROXY',
  rateLimitMax: 'RATE_LIMIT_MAX',
  rateLimitWindow: 'RATE_LIMIT_WINDOW',
  executionContexts: 'EXECUTION_CONTEXTS',
  logLevel: 'LOG_LEVEL',
  cursorSecret: 'CURSOR_SECRET',
  redisUrl: 'REDIS_URL',
  production: 'NODE_ENV'
}

/** Never repeated in a message (logs keep it): secrets, and addresses that may hold a password. */
const HIDDEN: ReadonlySet<string> = new Set(['AUTH_JWT_SECRET', 'WEBHOOK_SECRET_SCANNER', 'CURSOR_SECRET', 'DATABASE_URL', 'REDIS_URL'])

/** One line per bad setting: the variable, what is wrong, and what was set (a secret only by its length). */
function describe (key: string, message: string, env: NodeJS.ProcessEnv): string {
  const name = VARIABLES[key as keyof Config] ?? key
  const text = env[name] ?? ''
  const got = HIDDEN.has(name) ? `${text.length} characters, not shown` : JSON.stringify(text)
  return `${name}: ${message} (got ${got})`
}

/** Reads and checks the environment; throws one message naming every bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const production = env.NODE_ENV === 'production'
  const warnings: string[] = []
  const missing: string[] = []
  function secret (name: string, dev: string): string {
    const v = env[name]
    if (v !== undefined && v !== '') return v
    if (production) missing.push(`${name} is required when NODE_ENV=production`)
    else warnings.push(`${name} is not set: using a fixed development secret (never use it in production)`)
    return dev
  }
  const raw = {
    host: env.HOST ?? '127.0.0.1',
    port: env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT),
    dataDir: env.DATA_DIR ?? './data',
    databaseUrl: env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? null : env.DATABASE_URL,
    migrationsDir: env.MIGRATIONS_DIR === undefined || env.MIGRATIONS_DIR === '' ? null : env.MIGRATIONS_DIR,
    databaseStatementTimeout: env.DATABASE_STATEMENT_TIMEOUT === undefined || env.DATABASE_STATEMENT_TIMEOUT === '' ? 30_000 : Number(env.DATABASE_STATEMENT_TIMEOUT),
    jwtSecret: env.AUTH_JWKS_URL !== undefined && env.AUTH_JWKS_URL !== '' && (env.AUTH_JWT_SECRET ?? '') === ''
      ? DEV_JWT_SECRET
      : secret('AUTH_JWT_SECRET', DEV_JWT_SECRET),
    jwksUrl: env.AUTH_JWKS_URL === undefined || env.AUTH_JWKS_URL === '' ? null : env.AUTH_JWKS_URL,
    corsOrigins: list(env.CORS_ORIGINS),
    webhookSecretScanner: secret('WEBHOOK_SECRET_SCANNER', DEV_WEBHOOK_SECRET),
    trustProxy: trustProxy(env.TRUST_PROXY),
    rateLimitMax: env.RATE_LIMIT_MAX === undefined || env.RATE_LIMIT_MAX === '' ? 1000 : Number(env.RATE_LIMIT_MAX),
    rateLimitWindow: env.RATE_LIMIT_WINDOW ?? '1 minute',
    executionContexts: list(env.EXECUTION_CONTEXTS),
    logLevel: env.LOG_LEVEL ?? 'info',
    cursorSecret: secret('CURSOR_SECRET', DEV_CURSOR_SECRET),
    redisUrl: env.REDIS_URL === undefined || env.REDIS_URL === '' ? null : env.REDIS_URL,
    production
  }
  const errors = [...Value.Errors(Config, raw)].map(e => describe(e.path.split('/')[1] ?? '', e.message, env))
  if (missing.length > 0 || errors.length > 0) throw new Error(`Invalid configuration:\n- ${[...missing, ...errors].join('\n- ')}`)
  return { config: raw as Config, warnings }
}
