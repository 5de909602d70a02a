import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { compile as compileProxyList } from '@fastify/proxy-addr'

/** One delay of WEBHOOK_RETRY_SCHEDULE: a number and a unit parseDuration knows (`5s`, `30 minutes`). */
const DELAY = String.raw`\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\s*`

/**
 * The longest delay a Node timer waits, in ms (about 24.8 days; the suite's MAX_TIMER_MILLIS):
 * setTimeout takes a longer one as 1 ms. Also PostgreSQL's largest statement_timeout.
 */
const TIMER_MAX = 2_147_483_647

/** The reference service's configuration, read from environment variables only. */
export const Config = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
  // The directory of versioned SQL migration files; null: ./migrations when it exists.
  migrationsDir: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  // Milliseconds a statement may wait for the PostgreSQL server's answer (0: for ever).
  databaseStatementTimeout: Type.Integer({ minimum: 0, maximum: TIMER_MAX }),
  // Renewed every third of it, on a timer.
  jobLeaseMillis: Type.Integer({ minimum: 1, maximum: TIMER_MAX }),
  // DATABASE_URL names PgBouncer in transaction mode: no prepared statements, no start-up parameters.
  databasePgbouncer: Type.Boolean(),
  // At least SECRET_BYTES.jwtSecret bytes, checked by loadConfig.
  jwtSecret: Type.String(),
  jwksUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
  // The iss and aud a token must carry (any one of each list); empty: not checked.
  authIssuer: Type.Array(Type.String({ minLength: 1 })),
  authAudience: Type.Array(Type.String({ minLength: 1 })),
  corsOrigins: Type.Array(Type.String({ pattern: '^https?://[^/*]+$' })),
  // whsec_ and the base64 of at least SECRET_BYTES.webhookSecretScanner bytes, checked by loadConfig.
  webhookSecretScanner: Type.String(),
  // How long received delivery ids are kept (a duration such as `7 days`), checked by app.ts.
  webhookDeliveryRetention: Type.String({ minLength: 1 }),
  // Delays between delivery attempts of outgoing events: comma-separated durations.
  webhookRetrySchedule: Type.String({ pattern: `^${DELAY}(,${DELAY})*$` }),
  // Subscriptions may name http:// URLs and internal addresses (local development and tests only).
  webhookAllowInsecureTargets: Type.Boolean(),
  // This instance delivers outgoing events; false: it only writes them, for instances that do.
  webhookDelivery: Type.Boolean(),
  // The proxies Fastify believes X-Forwarded-* from: true (any), or their addresses and ranges.
  trustProxy: Type.Union([Type.Boolean(), Type.String()]),
  rateLimitMax: Type.Integer({ minimum: 1 }),
  rateLimitWindow: Type.String({ minLength: 1 }),
  // The service's own identity, sent as Svc-Service on its outgoing requests.
  serviceId: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }),
  serviceName: Type.String({ pattern: '^[a-z0-9-]{1,60}$' }),
  executionContexts: Type.Array(Type.String({ pattern: '^[a-z0-9_-]{1,100}$' })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l))),
  // Comma-separated: the first key signs cursors, every one verifies them (rotation).
  cursorSecret: Type.Array(Type.String(), { minItems: 1 }),
  redisUrl: Type.Union([Type.String({ pattern: '^rediss?://' }), Type.Null()]),
  // Overload thresholds (0: not checked); past one, requests get a 503 with Retry-After.
  overloadMaxEventLoopDelay: Type.Integer({ minimum: 0 }),
  overloadMaxEventLoopUtilization: Type.Number({ minimum: 0, maximum: 1 }),
  overloadMaxHeapUsedBytes: Type.Integer({ minimum: 0 }),
  overloadMaxRssBytes: Type.Integer({ minimum: 0 }),
  overloadRetryAfter: Type.Integer({ minimum: 1 }),
  // OpenTelemetry: traces go to this OTLP/HTTP address when set; none otherwise.
  otelEndpoint: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
  // Milliseconds a stop may take to finish requests in flight and close the store; past it the
  // process exits with 1 anyway.
  shutdownTimeout: Type.Integer({ minimum: 1, maximum: TIMER_MAX }),
  production: Type.Boolean()
})
export type Config = Static<typeof Config>

/**
 * The fewest bytes of each secret: what the plugin using it refuses at start (the auth plugin's
 * HS256 key, RFC 7518 §3.2; each cursor key; the Standard Webhooks key, decoded), checked here
 * so that one message names the variable. Bytes, as the plugins count them, not characters.
 */
const SECRET_BYTES = { jwtSecret: 32, cursorSecret: 16, webhookSecretScanner: 16 } as const
const WHSEC = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/

/** What is wrong with a secret, or null: bytes too few, or (WEBHOOK_SECRET_SCANNER) not whsec_<base64>. */
function secretFault (key: keyof typeof SECRET_BYTES, value: string): string | null {
  const min = SECRET_BYTES[key]
  if (key !== 'webhookSecretScanner') {
    const bytes = Buffer.byteLength(value)
    return bytes >= min ? null : `expected at least ${min} bytes (got ${bytes} bytes, not shown)`
  }
  const base64 = WHSEC.exec(value)?.[1]
  if (base64 === undefined) return `expected whsec_ and the base64 of the key (got ${value.length} characters, not shown)`
  const bytes = Buffer.from(base64, 'base64').length
  return bytes >= min ? null : `expected a key of at least ${min} bytes (got ${bytes} bytes, not shown)`
}

/** Development defaults: safe on a laptop, refused in production where a secret matters. */
export const DEV_JWT_SECRET = 'dev-only-secret-change-me-0123456789'
export const DEV_WEBHOOK_SECRET = 'whsec_ZGV2LW9ubHktd2ViaG9vay1zZWNyZXQtc2Nhbm5lcg=='
export const DEV_CURSOR_SECRET = 'dev-only-cursor-secret-0123456789'
/** The identity of a service nobody named: fine on a laptop, to be replaced where services meet. */
export const DEV_SERVICE_ID = '5d0c7a3e-2f1b-4c8a-9e6d-0b1a2c3d4e5f'
export const DEV_SERVICE_NAME = 'svc-reference'

/** The iss and aud tokens are checked for (AUTH_ISSUER, AUTH_AUDIENCE), only those set. */
export function tokenClaims (config: Pick<Config, 'authIssuer' | 'authAudience'>): { issuer?: string[], audience?: string[] } {
  return {
    ...config.authIssuer.length > 0 ? { issuer: config.authIssuer } : {},
    ...config.authAudience.length > 0 ? { audience: config.authAudience } : {}
  }
}

export interface ConfigResult { config: Config, warnings: string[] }

function list (value: string | undefined): string[] {
  return (value ?? '').split(',').map(s => s.trim()).filter(s => s !== '')
}

/** The value, or `fallback` when unset or set empty (as every variable here reads an empty value). */
function text (value: string | undefined, fallback: string): string {
  return value === undefined || value === '' ? fallback : value
}

/** A number, or `fallback` when unset; text that is no number stays text, for the check to name. */
function number (value: string | undefined, fallback: number): unknown {
  if (value === undefined || value === '') return fallback
  return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value
}

/** `true` or `false` (unset: false); anything else is left as it is, for the check to name. */
function flag (value: string | undefined): unknown {
  if (value === undefined || value === '' || value === 'false') return false
  return value === 'true' ? true : value
}

function trustProxy (value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === 'false') return false
  return value === 'true' ? true : value
}

/**
 * Whether Fastify takes TRUST_PROXY's list: it compiles the entries, split on commas, with
 * proxy-addr, which refuses at start one that is no address, range or range name, naming the
 * address but not the variable.
 */
function proxyList (value: string): boolean {
  try {
    compileProxyList(value.split(',').map((entry) => entry.trim()))
    return true
  } catch {
    return false
  }
}

/** The variable each setting comes from, for messages that name what the user set. */
const VARIABLES: Record<keyof Config, string> = {
  host: 'HOST',
  port: 'PORT',
  dataDir: 'DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  migrationsDir: 'MIGRATIONS_DIR',
  databaseStatementTimeout: 'DATABASE_STATEMENT_TIMEOUT',
  jobLeaseMillis: 'JOB_LEASE_MILLIS',
  databasePgbouncer: 'DATABASE_PGBOUNCER',
  jwtSecret: 'AUTH_JWT_SECRET',
  jwksUrl: 'AUTH_JWKS_URL',
  authIssuer: 'AUTH_ISSUER',
  authAudience: 'AUTH_AUDIENCE',
  corsOrigins: 'CORS_ORIGINS',
  webhookSecretScanner: 'WEBHOOK_SECRET_SCANNER',
  webhookDeliveryRetention: 'WEBHOOK_DELIVERY_RETENTION',
  webhookRetrySchedule: 'WEBHOOK_RETRY_SCHEDULE',
  webhookAllowInsecureTargets: 'WEBHOOK_ALLOW_INSECURE_TARGETS',
  webhookDelivery: 'WEBHOOK_DELIVERY',
  trustProxy: 'TRUST_PROXY',
  rateLimitMax: 'RATE_LIMIT_MAX',
  rateLimitWindow: 'RATE_LIMIT_WINDOW',
  serviceId: 'SERVICE_ID',
  serviceName: 'SERVICE_NAME',
  executionContexts: 'EXECUTION_CONTEXTS',
  logLevel: 'LOG_LEVEL',
  cursorSecret: 'CURSOR_SECRET',
  redisUrl: 'REDIS_URL',
  overloadMaxEventLoopDelay: 'OVERLOAD_MAX_EVENT_LOOP_DELAY',
  overloadMaxEventLoopUtilization: 'OVERLOAD_MAX_EVENT_LOOP_UTILIZATION',
  overloadMaxHeapUsedBytes: 'OVERLOAD_MAX_HEAP_USED_BYTES',
  overloadMaxRssBytes: 'OVERLOAD_MAX_RSS_BYTES',
  overloadRetryAfter: 'OVERLOAD_RETRY_AFTER',
  otelEndpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  shutdownTimeout: 'SHUTDOWN_TIMEOUT',
  production: 'NODE_ENV'
}

/** What a variable takes, where the schema's own message would only say "Expected union value". */
const EXPECTED: Partial<Record<keyof Config, string>> = {
  databaseUrl: 'expected a postgres:// or postgresql:// URL',
  jwksUrl: 'expected an http:// or https:// URL',
  redisUrl: 'expected a redis:// or rediss:// URL',
  otelEndpoint: 'expected an http:// or https:// URL',
  trustProxy: 'expected true, false, or comma-separated addresses or ranges of the proxies',
  corsOrigins: 'expected comma-separated origins of a scheme and a host, such as https://app.example.com',
  serviceId: 'expected a UUID',
  serviceName: 'expected 1 to 60 characters among a-z, 0-9 and -',
  executionContexts: 'expected comma-separated names of lowercase letters, digits, _ and -',
  webhookRetrySchedule: 'expected comma-separated durations such as 5s,5m,30m',
  webhookAllowInsecureTargets: 'expected true or false',
  webhookDelivery: 'expected true or false'
}

/** Never repeated in a message (logs keep it): secrets, and addresses that may hold a password. */
const HIDDEN: ReadonlySet<string> = new Set(['AUTH_JWT_SECRET', 'WEBHOOK_SECRET_SCANNER', 'CURSOR_SECRET', 'DATABASE_URL', 'REDIS_URL'])

/** The allowed values of a union of literals (LOG_LEVEL's levels), else undefined. */
function literals (schema: unknown): string[] | undefined {
  const members = (schema as { anyOf?: unknown } | undefined)?.anyOf
  if (!Array.isArray(members) || !members.every((m) => typeof m === 'object' && m !== null && 'const' in m)) return undefined
  return members.map((m: { const: unknown }) => String(m.const))
}

/** One line per bad setting: the variable, what is wrong, and what was set (a secret only by its length). */
function describe (key: string, error: { message: string, schema: unknown }, env: NodeJS.ProcessEnv): string {
  const name = VARIABLES[key as keyof Config] ?? key
  const text = env[name] ?? ''
  const got = HIDDEN.has(name) ? `${text.length} characters, not shown` : JSON.stringify(text)
  const allowed = literals(error.schema)
  const message = allowed !== undefined ? `expected one of ${allowed.join(', ')}` : EXPECTED[key as keyof Config] ?? error.message
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
    host: text(env.HOST, '127.0.0.1'),
    port: env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT),
    dataDir: text(env.DATA_DIR, './data'),
    databaseUrl: env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? null : env.DATABASE_URL,
    migrationsDir: env.MIGRATIONS_DIR === undefined || env.MIGRATIONS_DIR === '' ? null : env.MIGRATIONS_DIR,
    databaseStatementTimeout: env.DATABASE_STATEMENT_TIMEOUT === undefined || env.DATABASE_STATEMENT_TIMEOUT === '' ? 30_000 : Number(env.DATABASE_STATEMENT_TIMEOUT),
    // How long an instance holds a background job without renewing its lease: a job whose instance died is taken up again after it.
    jobLeaseMillis: env.JOB_LEASE_MILLIS === undefined || env.JOB_LEASE_MILLIS === '' ? 30_000 : Number(env.JOB_LEASE_MILLIS),
    databasePgbouncer: flag(env.DATABASE_PGBOUNCER),
    jwtSecret: env.AUTH_JWKS_URL !== undefined && env.AUTH_JWKS_URL !== '' && (env.AUTH_JWT_SECRET ?? '') === ''
      ? DEV_JWT_SECRET
      : secret('AUTH_JWT_SECRET', DEV_JWT_SECRET),
    jwksUrl: env.AUTH_JWKS_URL === undefined || env.AUTH_JWKS_URL === '' ? null : env.AUTH_JWKS_URL,
    authIssuer: list(env.AUTH_ISSUER),
    authAudience: list(env.AUTH_AUDIENCE),
    corsOrigins: list(env.CORS_ORIGINS),
    webhookSecretScanner: secret('WEBHOOK_SECRET_SCANNER', DEV_WEBHOOK_SECRET),
    webhookDeliveryRetention: env.WEBHOOK_DELIVERY_RETENTION === undefined || env.WEBHOOK_DELIVERY_RETENTION === '' ? '7 days' : env.WEBHOOK_DELIVERY_RETENTION,
    webhookRetrySchedule: env.WEBHOOK_RETRY_SCHEDULE === undefined || env.WEBHOOK_RETRY_SCHEDULE === '' ? '5s,5m,30m,2h,5h,10h,10h' : env.WEBHOOK_RETRY_SCHEDULE,
    webhookAllowInsecureTargets: flag(env.WEBHOOK_ALLOW_INSECURE_TARGETS),
    webhookDelivery: env.WEBHOOK_DELIVERY === undefined || env.WEBHOOK_DELIVERY === '' ? true : flag(env.WEBHOOK_DELIVERY),
    trustProxy: trustProxy(env.TRUST_PROXY),
    rateLimitMax: env.RATE_LIMIT_MAX === undefined || env.RATE_LIMIT_MAX === '' ? 1000 : Number(env.RATE_LIMIT_MAX),
    rateLimitWindow: text(env.RATE_LIMIT_WINDOW, '1 minute'),
    serviceId: env.SERVICE_ID === undefined || env.SERVICE_ID === '' ? DEV_SERVICE_ID : env.SERVICE_ID,
    serviceName: env.SERVICE_NAME === undefined || env.SERVICE_NAME === '' ? DEV_SERVICE_NAME : env.SERVICE_NAME,
    executionContexts: list(env.EXECUTION_CONTEXTS),
    logLevel: text(env.LOG_LEVEL, 'info'),
    cursorSecret: list(secret('CURSOR_SECRET', DEV_CURSOR_SECRET)),
    redisUrl: env.REDIS_URL === undefined || env.REDIS_URL === '' ? null : env.REDIS_URL,
    // Shedding load is on by default in production only, where a slow answer for everyone is worse.
    overloadMaxEventLoopDelay: number(env.OVERLOAD_MAX_EVENT_LOOP_DELAY, production ? 1000 : 0),
    overloadMaxEventLoopUtilization: number(env.OVERLOAD_MAX_EVENT_LOOP_UTILIZATION, production ? 0.98 : 0),
    overloadMaxHeapUsedBytes: number(env.OVERLOAD_MAX_HEAP_USED_BYTES, 0),
    overloadMaxRssBytes: number(env.OVERLOAD_MAX_RSS_BYTES, 0),
    overloadRetryAfter: number(env.OVERLOAD_RETRY_AFTER, 10),
    otelEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined || env.OTEL_EXPORTER_OTLP_ENDPOINT === '' ? null : env.OTEL_EXPORTER_OTLP_ENDPOINT,
    shutdownTimeout: env.SHUTDOWN_TIMEOUT === undefined || env.SHUTDOWN_TIMEOUT === '' ? 10_000 : Number(env.SHUTDOWN_TIMEOUT),
    production
  }
  // One line per variable: an array's items (CORS_ORIGINS) may each fail.
  const seen = new Set<string>()
  const errors = [...Value.Errors(Config, raw)].flatMap((e) => {
    const key = e.path.split('/')[1] ?? ''
    if (seen.has(key)) return []
    seen.add(key)
    return [describe(key, e, env)]
  })
  // An origin as a browser sends it (URL's serialization): the cors plugin refuses any other at start, naming its own option.
  if (!seen.has('corsOrigins') && !raw.corsOrigins.every((origin) => URL.canParse(origin) && new URL(origin).origin === origin)) {
    errors.push(`CORS_ORIGINS: ${EXPECTED.corsOrigins ?? ''} (got ${JSON.stringify(env.CORS_ORIGINS)})`)
  }
  if (typeof raw.trustProxy === 'string' && /^\d+$/.test(raw.trustProxy)) {
    // Fastify would take it and then believe no X-Forwarded-* header: refused, not ignored.
    errors.push(`TRUST_PROXY: a hop count is not taken: Fastify trusts no proxy for one, since it cannot tell the proxy from a client that reaches the service directly; give the proxies' addresses or ranges, such as 10.0.0.0/8 (got ${JSON.stringify(env.TRUST_PROXY)})`)
  } else if (typeof raw.trustProxy === 'string' && !seen.has('trustProxy') && !proxyList(raw.trustProxy)) {
    errors.push(`TRUST_PROXY: ${EXPECTED.trustProxy ?? ''} (got ${JSON.stringify(env.TRUST_PROXY)})`)
  }
  for (const [key, values] of [['jwtSecret', [raw.jwtSecret]], ['cursorSecret', raw.cursorSecret], ['webhookSecretScanner', [raw.webhookSecretScanner]]] as const) {
    const fault = values.map((v) => secretFault(key, v)).find((f) => f !== null)
    if (fault !== undefined && !seen.has(key)) errors.push(`${VARIABLES[key]}: ${fault}`)
  }
  // On PGlite this process is the only one that can open the data: nothing else would deliver.
  if (raw.webhookDelivery === false && raw.databaseUrl === null) errors.push('WEBHOOK_DELIVERY: false needs DATABASE_URL, where other instances of the service deliver the events this one writes (on PGlite no other instance can open the data, so none would be delivered)')
  if (missing.length > 0 || errors.length > 0) throw new Error(`Invalid configuration:\n- ${[...missing, ...errors].join('\n- ')}`)
  // An identity provider signs tokens for every service it serves, each with the same keys.
  if (raw.jwksUrl !== null && raw.authAudience.length === 0) warnings.push('AUTH_JWKS_URL without AUTH_AUDIENCE: a token the identity provider issued for any other service is accepted too (set AUTH_AUDIENCE, and AUTH_ISSUER, to the values its tokens for this service carry)')
  if (raw.webhookAllowInsecureTargets === true) warnings.push('WEBHOOK_ALLOW_INSECURE_TARGETS=true: webhook subscriptions may name http:// URLs and internal addresses, so a client can make the service call its own network (local development and tests only, never in production)')
  return { config: raw as Config, warnings }
}
