import { TokenError } from 'fast-jwt'
import type { ProblemError } from '../problem/index.js'
import { problems } from '../problem/index.js'
import { INVALID_TOKEN_CHALLENGE } from './bearer.js'

const codes = TokenError.codes

const MALFORMED = 'The access token is not a well-formed JWT; send the token exactly as issued.'

// fast-jwt's codes → a detail that names the reason and the fix (convention: Errors, 401 row).
const DETAILS: Record<string, string> = {
  [codes.expired]: 'The access token has expired; obtain a new token and retry.',
  [codes.inactive]: 'The access token is not valid yet (its nbf claim lies in the future); check the clocks or retry later.',
  [codes.invalidSignature]: 'The access token signature does not verify; send a token issued by the identity provider this service trusts, unchanged.',
  [codes.missingSignature]: 'The access token is unsigned; send a signed token issued by the identity provider this service trusts.',
  [codes.malformed]: MALFORMED,
  [codes.invalidPayload]: MALFORMED,
  [codes.invalidType]: MALFORMED
}

// The fast-jwt messages of claim errors name the claim ("The iss claim value is not allowed.").
export function claimOf (message: string): string {
  return /(\w+) claim/.exec(message)?.[1] ?? 'a required'
}

function detailOf (err: TokenError, algorithms: readonly string[]): string {
  switch (err.code) {
    case codes.invalidAlgorithm:
    case codes.invalidKey:
      return `The access token is signed with an algorithm this service does not accept; use a token signed with ${algorithms.join(' or ')}.`
    case codes.missingRequiredClaim:
      return `The access token has no ${claimOf(err.message)} claim; use a token issued for this service.`
    case codes.invalidClaimType:
    case codes.invalidClaimValue:
      return `The access token's ${claimOf(err.message)} claim is not accepted by this service; use a token issued for this service.`
    default:
      return DETAILS[err.code] ?? 'The access token could not be verified; obtain a new token and retry.'
  }
}

/**
 * The problem for a token fast-jwt refused: 401 "Invalid Token" with the RFC 6750 challenge,
 * except when the signing keys could not be fetched, which is the service's fault (503).
 */
export function tokenProblem (err: unknown, algorithms: readonly string[]): ProblemError {
  const tokenError = err instanceof TokenError ? err : new TokenError(codes.verifyError, String(err))
  if (tokenError.code === codes.keyFetchingError) {
    const cause: unknown = tokenError.originalError
    // jose: the JWKS was fetched but has no key for the token's kid and alg (rotated away, or
    // forged), or more than one and the token names none.
    const code = (cause as { code?: unknown } | undefined)?.code
    if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') {
      return problems.invalidToken('The access token is signed with a key the identity provider does not publish; obtain a new token and retry.', { headers: INVALID_TOKEN_CHALLENGE })
    }
    return problems.unavailable('The signing keys of the identity provider could not be fetched, so the access token cannot be checked now; retry later.', { cause })
  }
  return problems.invalidToken(detailOf(tokenError, algorithms), { headers: INVALID_TOKEN_CHALLENGE })
}
