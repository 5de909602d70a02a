import { KeyObject } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { createVerifier, TokenError, type Algorithm, type VerifierOptions } from 'fast-jwt'
import { createRemoteJWKSet } from 'jose'
import { problems } from '../problem/index.js'
import { INVALID_TOKEN_CHALLENGE } from './bearer.js'
import { tokenProblem } from './token-errors.js'
import { PrincipalCache } from './cache.js'
import { optionChecks, shownValue } from '../shared/options.js'

/** Who is calling, as established from the bearer token. */
export interface Principal {
  /** The caller's id (the `sub` claim), e.g. written to `createdBy` / `modifiedBy`. */
  sub: string
  /** Granted scopes: the space-separated `scope` claim and the `scp` list, merged. */
  scopes: string[]
  /** Every claim of the verified token. */
  claims: Record<string, unknown>
}

/** Turns a token into a principal; `null` refuses it (401 "Unauthorized"). May throw a `ProblemError`. */
export type VerifierFunction = (token: string, request: FastifyRequest) => Principal | null | Promise<Principal | null>

interface ClaimChecks {
  /** Accepted `iss` values; when set, a token without `iss` is refused. */
  issuer?: string | string[]
  /** Accepted `aud` values; when set, a token without `aud` is refused. */
  audience?: string | string[]
}

/** HS256 tokens signed with a shared secret. */
export interface SecretVerifierOptions extends ClaimChecks {
  /** The shared secret, at least 32 bytes (RFC 7518 §3.2). */
  secret: string
}

export type AsymmetricAlgorithm = Extract<Algorithm, `RS${string}` | `PS${string}` | `ES${string}` | 'EdDSA'>

/** Asymmetric tokens whose public keys are published as a JWKS (RFC 7517). */
export interface JwksVerifierOptions extends ClaimChecks {
  /** Full address of the JWKS document, e.g. `https://idp.example.com/.well-known/jwks.json`. */
  jwksUrl: string
  /** The allow-list of token algorithms. Default `['RS256', 'ES256']`; HS* and `none` are refused. */
  algorithms?: AsymmetricAlgorithm[]
  /** How long a fetched JWKS is used before it is fetched again, in ms. Default 60 000. */
  keyTtl?: number
  /** Longest wait for the JWKS, in ms: the request is then aborted, and the token answered 503. Default 5 000. */
  timeout?: number
  /**
   * After a fetch, how long a token naming a key id the JWKS lacks is refused (401) without
   * fetching it again, in ms: a flood of made-up key ids costs the identity provider one
   * request per cooldown, and a key rotated in is found at most this late. Default 30 000.
   */
  cooldown?: number
}

export type VerifierOption = VerifierFunction | SecretVerifierOptions | JwksVerifierOptions

const ASYMMETRIC: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

const defaults = {
  algorithms: ['RS256', 'ES256'] as AsymmetricAlgorithm[],
  keyTtl: 60_000,
  timeout: 5_000,
  cooldown: 30_000
}

/** RFC 7518 §3.2: an HS256 key is at least as long as the hash output. */
export const MIN_SECRET_BYTES = 32

export function assertSecret (secret: unknown, name: string): asserts secret is string {
  if (typeof secret !== 'string' || Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    // The value itself is a secret: name its type and length only.
    const got = typeof secret === 'string' ? `${Buffer.byteLength(secret)} bytes` : typeof secret
    throw new TypeError(`auth plugin: ${name} must be a string of at least ${MIN_SECRET_BYTES} bytes (RFC 7518 §3.2), got ${got}`)
  }
}

function stringList (value: unknown, name: string): string[] | undefined {
  if (value === undefined) return undefined
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === 'string' && v !== '')) {
    throw new TypeError(`auth plugin: ${name} must be a non-empty string or list of strings, got ${JSON.stringify(value)}`)
  }
  return list
}

function positiveInteger (value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`auth plugin: ${name} must be a positive integer of milliseconds, got ${shownValue(value)}`)
  return value
}

// fast-jwt only checks a claim that is present, so a configured issuer or audience is also required.
function claimOptions (o: ClaimChecks): Partial<VerifierOptions> {
  const allowedIss = stringList(o.issuer, 'verifier.issuer')
  const allowedAud = stringList(o.audience, 'verifier.audience')
  const requiredClaims = ['exp']
  if (allowedIss !== undefined) requiredClaims.push('iss')
  if (allowedAud !== undefined) requiredClaims.push('aud')
  // Verified tokens are cached in front of fast-jwt (PrincipalCache), which is cheaper than its own hashed cache.
  return { allowedIss, allowedAud, requiredClaims }
}

/** Builds the principal from verified claims; a token without a usable `sub` names nobody. */
export function principalFromClaims (claims: Record<string, unknown>): Principal {
  const sub = claims.sub
  if (typeof sub !== 'string' || sub === '') {
    throw problems.invalidToken('The access token has no sub claim naming the caller; use a token issued to a user or client.', { headers: INVALID_TOKEN_CHALLENGE })
  }
  const scopes = new Set<string>()
  // RFC 8693 §4.2 / RFC 6749 §3.3: `scope` is space-separated; some providers send a `scp` list.
  for (const value of [claims.scope, claims.scp]) {
    const list: unknown[] = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : []
    for (const s of list) if (typeof s === 'string' && s !== '') scopes.add(s)
  }
  return { sub, scopes: [...scopes], claims }
}

function secretVerifier (o: SecretVerifierOptions): VerifierFunction {
  assertSecret(o.secret, 'verifier.secret')
  const algorithms = ['HS256'] as const
  const verify = createVerifier({ key: o.secret, algorithms: [...algorithms], ...claimOptions(o) })
  return (token) => {
    let claims: Record<string, unknown>
    try {
      claims = verify(token)
    } catch (err) {
      throw tokenProblem(err, algorithms)
    }
    return principalFromClaims(claims)
  }
}

/**
 * The JWKS is jose's remote key set (`createRemoteJWKSet`) rather than get-jwks: it keeps the
 * whole set, so a token naming a key id the set lacks is refused from memory until the
 * cooldown has passed since the last fetch (get-jwks fetched again for every such token, which
 * made a flood of made-up key ids a flood of requests to the identity provider); concurrent
 * lookups share one fetch; and its timeout aborts the request (an AbortSignal) instead of only
 * ceasing to wait for it. fast-jwt still verifies the token, so the checks and their messages
 * stay those of the secret verifier.
 */
function jwksVerifier (o: JwksVerifierOptions): VerifierFunction {
  const url = typeof o.jwksUrl === 'string' && URL.canParse(o.jwksUrl) ? new URL(o.jwksUrl) : undefined
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError(`auth plugin: verifier.jwksUrl must be an http(s) URL, got ${JSON.stringify(o.jwksUrl)}`)
  }
  const algorithms = o.algorithms ?? defaults.algorithms
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((a) => ASYMMETRIC.includes(a))) {
    throw new TypeError(`auth plugin: verifier.algorithms must list asymmetric algorithms (${ASYMMETRIC.join(', ')}), got ${JSON.stringify(algorithms)}`)
  }
  // jose aborts the fetch with AbortSignal.timeout: a timer. The key TTL and cooldown are only compared with the time.
  const timeout = optionChecks('auth plugin').timerMillis('verifier.timeout', o.timeout ?? defaults.timeout)
  const keyTtl = positiveInteger(o.keyTtl ?? defaults.keyTtl, 'verifier.keyTtl')
  const cooldown = positiveInteger(o.cooldown ?? defaults.cooldown, 'verifier.cooldown')

  // The JWKS address is fixed here: a token's own iss or jku never chooses where keys come from.
  const jwks = createRemoteJWKSet(url, { timeoutDuration: timeout, cacheMaxAge: keyTtl, cooldownDuration: cooldown })
  // fast-jwt takes a PEM; one per key of the set (jose returns the same key object for the same JWK).
  const pems = new WeakMap<object, string>()

  async function key ({ header }: { header: Record<string, unknown> }): Promise<string> {
    // Refused before any fetch: an HS256 token "signed" with a public key, or alg none (RFC 8725 §2.1).
    if (!algorithms.includes(header.alg as AsymmetricAlgorithm)) {
      throw new TokenError(TokenError.codes.invalidAlgorithm, 'The token algorithm is not allowed.')
    }
    const found = await jwks({ alg: header.alg as string, ...(typeof header.kid === 'string' ? { kid: header.kid } : {}) })
    let pem = pems.get(found)
    if (pem === undefined) {
      pem = KeyObject.from(found).export({ type: 'spki', format: 'pem' }) as string
      pems.set(found, pem)
    }
    return pem
  }
  const verify = createVerifier({ key, algorithms: [...algorithms], ...claimOptions(o) })

  return async (token) => {
    let claims: Record<string, unknown>
    try {
      claims = await verify(token)
    } catch (err) {
      throw tokenProblem(err, algorithms)
    }
    return principalFromClaims(claims)
  }
}

/** The verifier function for the plugin's `verifier` option, validated at registration. */
export function buildVerifier (option: VerifierOption, cacheSize: number): VerifierFunction {
  if (typeof option === 'function') return option
  const hasSecret = typeof option === 'object' && option !== null && 'secret' in option
  const hasJwks = typeof option === 'object' && option !== null && 'jwksUrl' in option
  if (hasSecret === hasJwks) {
    throw new TypeError(`auth plugin: verifier must be a function, { secret } or { jwksUrl }, got ${hasSecret ? 'both secret and jwksUrl' : typeof option === 'object' && option !== null ? 'neither' : String(option)}`)
  }
  const verify = hasSecret ? secretVerifier(option as SecretVerifierOptions) : jwksVerifier(option as JwksVerifierOptions)
  if (cacheSize === 0) return verify
  const cache = new PrincipalCache(cacheSize)
  return (token, request) => {
    const now = Date.now()
    const hit = cache.get(token, now)
    if (hit !== undefined) return hit
    const result = verify(token, request)
    if (result instanceof Promise) {
      return result.then((principal) => {
        if (principal !== null) cache.set(token, principal, Date.now())
        return principal
      })
    }
    if (result !== null) cache.set(token, result, now)
    return result
  }
}
