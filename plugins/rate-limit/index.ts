import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { problems } from '../problem/index.js'
import { plural } from '../shared/plural.js'
import { refuseUnknownOptions, type OptionKeys } from '../shared/options.js'
import { formatDuration, parseDuration } from '../shared/duration.js'
import { redisStoreOf, type RedisClient } from './redis-store.js'
import { needs } from '../shared/dependencies.js'
import { countedAddress } from '../shared/client-address.js'

/** Options of the `rate-limit` plugin: how many requests a caller may make in a window. */
export interface RateLimitPluginOptions {
  /** Requests allowed per caller in a window (`RATE_LIMIT_MAX`). Default 1000. */
  max?: number
  /** The window: milliseconds, or a duration such as `'1 minute'` or `'30 s'` (`RATE_LIMIT_WINDOW`). Default `'1 minute'`. */
  timeWindow?: number | string
  /**
   * Shares the counts between instances: a `redis://` or `rediss://` URL (the plugin opens
   * the client with the `ioredis` package, an optional peer to install then, and closes it with
   * the app) or an ioredis client (yours to close). Default: counted in memory, per instance.
   */
  redis?: string | RedisClient
  /** Prefix of the keys in Redis. Default `svc-rate-limit:`. */
  nameSpace?: string
  /** When counting fails (Redis unreachable), let requests through rather than answer 503. Default false. */
  skipOnError?: boolean
  /**
   * Counted in memory: the callers whose counts are kept, the least recently seen forgotten
   * first (a forgotten caller starts a new window). Default 100,000.
   */
  memoryCallers?: number
}

/**
 * What a route may set in `config.rateLimit` besides `false` (exempt): its own limit,
 * counted apart from the global one. The key is typed by @fastify/rate-limit (which
 * accepts more); other keys are refused at registration.
 */
export interface RateLimitRouteConfig {
  max?: number
  timeWindow?: number | string
}

const defaults = {
  max: 1000,
  timeWindow: '1 minute',
  nameSpace: 'svc-rate-limit:',
  skipOnError: false,
  // @fastify/rate-limit's own is 5,000: a service with more callers in a window than that
  // gave the least recent ones a fresh window each time, limited or not.
  memoryCallers: 100_000
}

const ROUTE_KEYS = new Set(['max', 'timeWindow'])
const OPTION_KEYS: OptionKeys<RateLimitPluginOptions> = { max: true, timeWindow: true, redis: true, nameSpace: true, skipOnError: true, memoryCallers: true }

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function show (value: unknown): string {
  return typeof value === 'function' ? 'a function' : String(JSON.stringify(value))
}

function checkMax (where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`rate-limit plugin: ${where}max must be a positive integer of requests, got ${show(value)}`)
  }
  return value
}

function checkWindow (where: string, value: unknown): number {
  const ms = typeof value === 'string' ? parseDuration(value) : value
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 1) {
    throw new TypeError(`rate-limit plugin: ${where}timeWindow must be a positive integer of milliseconds or a duration such as "1 minute", got ${show(value)}`)
  }
  return ms
}

function checkRedis (value: unknown): string | RedisClient | undefined {
  if (value === undefined || (isObject(value) && typeof value.defineCommand === 'function')) return value as RedisClient | undefined
  if (typeof value === 'string' && /^rediss?:\/\/./.test(value)) return value
  // A URL may hold a password: never shown.
  const shown = typeof value === 'string' ? `a string of ${value.length} characters` : show(value)
  throw new TypeError(`rate-limit plugin: redis must be a redis:// or rediss:// URL or an ioredis client, got ${shown}`)
}

/** ioredis, an optional peer dependency: a missing one is a message saying what to install. */
async function loadIoredis (): Promise<{ Redis: typeof import('ioredis').Redis }> {
  try {
    return await import('ioredis')
  /* c8 ignore start: the tests run with ioredis installed */
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err
    throw new TypeError('rate-limit plugin: redis as a URL needs the ioredis package: npm install ioredis', { cause: err })
  }
  /* c8 ignore stop */
}

/**
 * Limits requests per caller with @fastify/rate-limit: by the token's subject when the
 * auth plugin found one, else by the client address (`request.ip`, which honours
 * Fastify's `trustProxy`). Counting runs as a route-level onRequest hook, and Fastify
 * runs those after every instance onRequest hook, so after auth whatever the
 * registration order (and before the body is read). A request auth refuses never gets here:
 * the auth plugin's `refusalLimit` counts those per address, and stops an address that keeps
 * sending bad tokens before its next token is checked.
 * Answers with the draft IETF `RateLimit-*` headers, and `Retry-After` on a 429 problem.
 */
async function rateLimitPlugin (fastify: FastifyInstance, opts: RateLimitPluginOptions): Promise<void> {
  refuseUnknownOptions('rate-limit', opts, OPTION_KEYS)
  const max = checkMax('', opts.max ?? defaults.max)
  const timeWindow = checkWindow('', opts.timeWindow ?? defaults.timeWindow)
  const redisOption = checkRedis(opts.redis)
  const nameSpace = opts.nameSpace ?? defaults.nameSpace
  if (typeof nameSpace !== 'string' || nameSpace.length === 0) throw new TypeError(`rate-limit plugin: nameSpace must be a non-empty string, got ${show(nameSpace)}`)
  const skipOnError = opts.skipOnError ?? defaults.skipOnError
  if (typeof skipOnError !== 'boolean') throw new TypeError(`rate-limit plugin: skipOnError must be a boolean, got ${show(skipOnError)}`)
  const memoryCallers = opts.memoryCallers ?? defaults.memoryCallers
  if (typeof memoryCallers !== 'number' || !Number.isSafeInteger(memoryCallers) || memoryCallers < 1) throw new TypeError(`rate-limit plugin: memoryCallers must be a positive integer of callers, got ${show(memoryCallers)}`)

  let redis: RedisClient | undefined
  if (typeof redisOption === 'string') {
    // Loaded here only: an app counting in memory needs no ioredis.
    const { Redis } = await loadIoredis()
    // Short timeouts: a slow Redis must not hold every request (the library's advice). A
    // command's own timeout too: one that connected but does not answer (hung, cut off) would
    // hold each request for ever, and while it reconnects each would wait out the backoff.
    const client = new Redis(redisOption, { connectTimeout: 500, maxRetriesPerRequest: 1, commandTimeout: 500 })
    client.on('error', (err: Error) => { fastify.log.warn({ err }, 'rate-limit: Redis connection error') })
    fastify.addHook('onClose', async () => { client.disconnect() })
    redis = client
  } else {
    redis = redisOption
  }

  // A route's own limit, checked at registration and given to the library in milliseconds.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const config: unknown = route.config?.rateLimit
    if (config === undefined || config === false) return
    const where = `route ${String(route.method)} ${route.url}: config.rateLimit.`
    if (!isObject(config)) throw new TypeError(`rate-limit plugin: route ${String(route.method)} ${route.url}: config.rateLimit must be false or { max?, timeWindow? }, got ${show(config)}`)
    for (const key of Object.keys(config)) {
      if (!ROUTE_KEYS.has(key)) throw new TypeError(`rate-limit plugin: ${where}${key} is not supported; use max and timeWindow`)
    }
    const own = { max: checkMax(where, config.max ?? max), timeWindow: checkWindow(where, config.timeWindow ?? timeWindow) }
    // The library keeps a route's own limit in a store of its own, sized by the route's `cache`.
    route.config = { ...route.config, rateLimit: { ...own, cache: memoryCallers } }
  })

  function windowOf (request: FastifyRequest): number {
    const own = request.routeOptions.config.rateLimit
    return own === undefined ? timeWindow : (own as { timeWindow: number }).timeWindow
  }

  await fastify.register(rateLimit, {
    global: true,
    max,
    timeWindow,
    hook: 'onRequest',
    enableDraftSpec: true,
    skipOnError,
    nameSpace,
    cache: memoryCallers,
    // Refusing when Redis cannot count: a 503 saying so, not the raw error (redis-store.ts).
    ...(redis === undefined ? {} : skipOnError ? { redis } : { store: redisStoreOf(redis, nameSpace) }),
    keyGenerator: (request) => {
      const sub = request.principal?.sub
      return sub === undefined ? `ip:${countedAddress(request.ip)}` : `sub:${sub}`
    },
    // @fastify/rate-limit throws what this returns: the problem plugin renders it.
    errorResponseBuilder: (request, context) => {
      const seconds = Math.ceil(context.ttl / 1000)
      return problems.tooManyRequests(
        `The limit of ${plural(context.max, 'request')} per ${formatDuration(windowOf(request))} is used up; retry after ${plural(seconds, 'second')}.`,
        { headers: { 'retry-after': seconds } }
      )
    }
  })
}

export { parseDuration, formatDuration } from '../shared/duration.js'
// Its 429 is a problem: the problem plugin renders it.
export default fp(needs('rate-limit', ['problem'], rateLimitPlugin), { fastify: '5.x', name: 'svc-rate-limit' })
