import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { problems, unavailableProblem } from '../problem/index.js'
import { plural } from '../shared/plural.js'
import { matchedNoRoute, preflightForCors } from '../shared/unmatched.js'
import { pathOf } from '../shared/url.js'
import { bearerToken, INVALID_TOKEN_CHALLENGE } from './bearer.js'
import { buildVerifier, type JwksVerifierOptions, type Principal, type SecretVerifierOptions, type VerifierOption } from './verifiers.js'
import { trustedUntil } from './cache.js'
import { RefusalCounter, type SharedRefusalCounts } from './refusals.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { needs } from '../shared/dependencies.js'
import { countedAddress } from '../shared/client-address.js'

export interface AuthPluginOptions {
  /**
   * How a bearer token becomes a principal: `{ secret }` (HS256), `{ jwksUrl, issuer?,
   * audience?, algorithms? }` (RS256/ES256 from a JWKS), or your own
   * `async (token, request) => Principal | null`. Required.
   */
  verifier: VerifierOption
  /** Whether a route without `config.auth` needs a token. Default true. When false, a token that is sent is still verified. */
  required?: boolean
  /**
   * Verified tokens remembered by the built-in verifiers (PrincipalCache, the oldest leaving first, each kept until
   * its `exp` and at most 10 minutes), so a repeated token is not checked again. 0 turns it off.
   * Default 1000.
   */
  cacheSize?: number
  /**
   * Stops token guessing: once an address has had `max` credentials refused with 401 within
   * `timeWindow` milliseconds (a request without `Authorization` is not counted), its further requests with a token not yet verified are answered
   * 429 (with `Retry-After`) before the token is checked, until the window ends. Counted in
   * memory, per instance, unless `shared` keeps the counts where every instance sees them
   * (`redisRefusalCounts(redis)`, or a `RefusalCounts` table of the store): with N instances
   * and counts of their own, an address gets N times the guesses. Default `false` (off).
   */
  refusalLimit?: false | { max: number, timeWindow: number, shared?: SharedRefusalCounts }
  /** The clock of refusal windows, in milliseconds since the epoch. Default `Date.now`; tests pass one they move. */
  now?: () => number
}

/** Where the refusals of an address are counted: in memory (a number now) or shared (later). */
interface Limiter {
  waitFor: (key: string, now: number) => number | Promise<number>
  add: (key: string, now: number) => void | Promise<void>
}

/** `config.auth` of a route that needs a token: every listed scope is required. */
export interface AuthRouteConfig {
  scopes: string[]
}

interface ConnectionMemo { header: string, principal: Principal, until: number }

const OPTION_KEYS: OptionKeys<AuthPluginOptions> = { verifier: true, required: true, cacheSize: true, refusalLimit: true, now: true }
const SECRET_KEYS: OptionKeys<SecretVerifierOptions> = { secret: true, issuer: true, audience: true }
const JWKS_KEYS: OptionKeys<JwksVerifierOptions> = { jwksUrl: true, issuer: true, audience: true, algorithms: true, keyTtl: true, timeout: true, cooldown: true }

/**
 * A verifier object's keys: those of the JWKS form when it names `jwksUrl`, else those of the
 * secret form. One naming both is refused by buildVerifier, saying so.
 */
function checkVerifierKeys (verifier: unknown): void {
  if (typeof verifier !== 'object' || verifier === null || ('jwksUrl' in verifier && 'secret' in verifier)) return
  refuseUnknownOptions('auth', verifier, 'jwksUrl' in verifier ? JWKS_KEYS : SECRET_KEYS, { path: 'verifier.' })
}

const defaults = {
  required: true,
  cacheSize: 1000
}

function validRouteConfig (auth: unknown): boolean {
  if (auth === undefined || auth === false) return true
  const scopes = (auth as { scopes?: unknown } | null)?.scopes
  // RFC 6749 §3.3: a scope token has no spaces.
  return Array.isArray(scopes) && scopes.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, or null on a route without auth (or an optional one without a token). */
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** `false`: no authentication (health, OpenAPI, webhooks); `{ scopes }`: a token with every scope listed. */
    auth?: false | AuthRouteConfig
  }
}

/** Whether the principal has every scope listed. */
function grants (principal: Principal, scopes: readonly string[]): boolean {
  return scopes.every((scope) => principal.scopes.includes(scope))
}

async function authPlugin (fastify: FastifyInstance, opts: AuthPluginOptions): Promise<void> {
  refuseUnknownOptions('auth', opts, OPTION_KEYS)
  checkVerifierKeys(opts.verifier)
  const required = opts.required ?? defaults.required
  const cacheSize = opts.cacheSize ?? defaults.cacheSize
  if (typeof required !== 'boolean') throw new TypeError(`auth plugin: required must be a boolean, got ${shownValue(required)}`)
  if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new TypeError(`auth plugin: cacheSize must be a non-negative integer, got ${shownValue(cacheSize)}`)
  const now = opts.now ?? Date.now
  if (typeof now !== 'function') throw new TypeError(`auth plugin: now must be a function returning milliseconds, got ${shownValue(now)}`)
  const refusalLimit = opts.refusalLimit ?? false
  if (refusalLimit !== false) {
    const { max, timeWindow, shared } = refusalLimit as { max?: unknown, timeWindow?: unknown, shared?: unknown }
    if (!Number.isSafeInteger(max) || (max as number) < 1 || !Number.isSafeInteger(timeWindow) || (timeWindow as number) < 1) {
      throw new TypeError(`auth plugin: refusalLimit must be false or { max, timeWindow } of positive integers (requests, milliseconds), got ${JSON.stringify(refusalLimit)}`)
    }
    if (shared !== undefined && (typeof (shared as SharedRefusalCounts | null)?.add !== 'function' || typeof (shared as SharedRefusalCounts).read !== 'function')) {
      throw new TypeError('auth plugin: refusalLimit.shared must have add and read functions (redisRefusalCounts, or a RefusalCounts of the store)')
    }
  }
  const refusals: Limiter | null = refusalLimit === false ? null : limiterOf(refusalLimit, fastify)
  const verify = buildVerifier(opts.verifier, cacheSize)
  // A kept-alive connection nearly always repeats its Authorization header: its last verified
  // principal is reused, while the token is trusted, without parsing, hashing or checking the
  // token again. Only with the built-in verifiers' cache on: a custom verifier decides itself.
  const perConnection = cacheSize > 0 && typeof opts.verifier !== 'function' ? new WeakMap<object, ConnectionMemo>() : null

  // Guarded: a context registered below another one with its own options inherits it.
  if (!fastify.hasRequestDecorator('principal')) fastify.decorateRequest('principal', null)

  fastify.addHook('onRoute', (route: RouteOptions) => {
    const auth: unknown = route.config?.auth
    if (!validRouteConfig(auth)) {
      throw new TypeError(`auth plugin: config.auth of ${String(route.method)} ${route.url} must be false or { scopes: string[] }, got ${JSON.stringify(auth)}`)
    }
  })

  /** Lets the request through as `principal`, or throws its 401 or 403. */
  function admit (request: FastifyRequest, reply: FastifyReply, principal: Principal | null, config: AuthRouteConfig | undefined): void {
    if (principal === null) {
      throw problems.unauthorized('The access token was not accepted; obtain a new token and retry.', { headers: INVALID_TOKEN_CHALLENGE })
    }
    request.principal = principal
    // Convention, Authentication 6: set now, so the 403 below and any later error keep it too.
    reply.header('cache-control', 'no-store')
    if (config === undefined || grants(principal, config.scopes)) return
    const scopes = config.scopes
    const missing = scopes.filter((s) => !principal.scopes.includes(s))
    const path = pathOf(request.url)
    const which = missing.length === 1 ? `the scope ${missing[0] as string}` : `the scopes ${missing.join(', ')}`
    throw problems.forbidden(`The access token does not grant ${which} that ${request.method} ${path} requires; request a token with ${missing.length === 1 ? 'it' : 'them'}.`, {
      instance: path,
      // RFC 6750 §3.1: insufficient_scope names the scopes the resource needs.
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"` }
    })
  }

  /**
   * Counts a 401 against the request's address (refusalLimit) when it refused a credential the
   * request presented: a request without one guesses nothing, and counting it would let an
   * address's anonymous requests shut out its valid tokens. Other errors pass through.
   */
  async function counted (request: FastifyRequest, err: unknown): Promise<unknown> {
    if (refusals !== null && request.headers.authorization !== undefined && (err as { statusCode?: unknown }).statusCode === 401) await refusals.add(countedAddress(request.ip), now())
    return err
  }

  // onRequest: after the CORS preflight hook, before body parsing and validation (design: request travel).
  fastify.addHook('onRequest', async function authHook (request, reply) {
    // A request that matched no route has nothing to protect: the methods plugin answers it
    // (405 or OPTIONS 204 with Allow) or it is a 404. A CORS preflight carries no credentials
    // (Fetch): the cors plugin answers it, whichever of the two was registered first.
    if (matchedNoRoute(request) || preflightForCors(request, fastify)) return
    const config = request.routeOptions.config.auth
    if (config === false) return
    const header = request.headers.authorization
    if (header === undefined && config === undefined && !required) return

    const socket = request.raw.socket
    const memo = perConnection?.get(socket)
    if (memo !== undefined && memo.header === header && memo.until > Date.now()) {
      admit(request, reply, memo.principal, config)
      return
    }
    if (refusals !== null) {
      const pending = refusals.waitFor(countedAddress(request.ip), now())
      const wait = typeof pending === 'number' ? pending : await pending
      if (wait > 0) {
        throw problems.tooManyRequests(`Too many requests from this address were refused authentication; retry after ${plural(wait, 'second')} with a valid token.`, { headers: { 'retry-after': wait } })
      }
    }
    try {
      const principal = await verify(bearerToken(header), request)
      if (principal !== null && perConnection !== null) perConnection.set(socket, { header: header as string, principal, until: trustedUntil(principal, Date.now()) })
      admit(request, reply, principal, config)
    } catch (err) {
      throw await counted(request, err)
    }
  })
}

/** The limiter of `refusalLimit`: in memory, or on the shared counts, whose failures are answered or logged. */
function limiterOf (limit: { max: number, timeWindow: number, shared?: SharedRefusalCounts }, fastify: FastifyInstance): Limiter {
  const { max, timeWindow, shared } = limit
  if (shared === undefined) {
    const counter = new RefusalCounter(max, timeWindow)
    return { waitFor: (key, now) => counter.waitFor(key, now), add: (key, now) => { counter.add(key, now) } }
  }
  return {
    async waitFor (key, now) {
      let read
      try {
        read = await shared.read(key, now)
      } catch (err) {
        // Not known whether this address may try: refused for now, as the rate limit does. Counts
        // kept in the database answer as every route does when it is down.
        const problem = unavailableProblem(err)
        throw problem !== err ? problem : problems.unavailable('Authentication cannot be checked now; retry later.', { cause: err, headers: { 'retry-after': 1 } })
      }
      return read.count < max ? 0 : Math.max(1, Math.ceil(read.resetInMs / 1000))
    },
    async add (key, now) {
      try {
        await shared.add(key, timeWindow, now)
      } catch (err) {
        // The refusal itself is answered all the same.
        fastify.log.warn({ err }, 'auth: a refusal could not be counted')
      }
    }
  }
}

export { signToken, type SignTokenOptions } from './sign.js'
export { redisRefusalCounts, type SharedRefusalCounts, type RedisScripts } from './refusals.js'
export { principalFromClaims, type Principal, type VerifierFunction, type VerifierOption, type SecretVerifierOptions, type JwksVerifierOptions, type AsymmetricAlgorithm } from './verifiers.js'
// Its refusals are problems: the problem plugin renders them.
export default fp(needs('auth', ['problem'], authPlugin), { fastify: '5.x', name: 'svc-auth' })
