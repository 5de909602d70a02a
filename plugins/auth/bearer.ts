import { problems } from '../problem/index.js'

/** RFC 6750 §3: the challenge of a 401 when no usable bearer credentials were sent. */
export const CHALLENGE = { 'www-authenticate': 'Bearer' } as const

/** RFC 6750 §3.1: the challenge once a token was sent but refused. */
export const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer error="invalid_token"' } as const

// RFC 6750 §2.1 b64token; the convention (Authentication 1) narrows the scheme to exactly
// `Bearer` followed by one space.
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/

// Only a short word is named back to the client, so a token sent without a scheme is never echoed.
const SCHEME_WORD = /^[A-Za-z][A-Za-z0-9-]{0,19}$/

/**
 * The access token of an `Authorization: Bearer <token>` header. Anything else throws a
 * 401 "Invalid Request" whose detail says what is wrong without showing the token.
 */
export function bearerToken (header: string | undefined): string {
  const match = header === undefined ? null : BEARER.exec(header)
  if (match !== null) return match[1] as string
  throw problems.invalidRequest(reason(header), { headers: CHALLENGE })
}

const HOW = 'send Authorization: Bearer <access token>.'

function reason (header: string | undefined): string {
  if (header === undefined) return `The request has no Authorization header; ${HOW}`
  const space = header.indexOf(' ')
  const scheme = space === -1 ? header : header.slice(0, space)
  if (scheme === 'Bearer') return 'The Authorization header has no token, or a malformed one, after Bearer; send one space and then the token exactly as issued.'
  if (scheme.toLowerCase() === 'bearer') return `The Authorization scheme must be written Bearer, with a capital B; ${HOW}`
  if (space !== -1 && SCHEME_WORD.test(scheme)) return `The Authorization header uses the ${scheme} scheme, which this service does not accept; ${HOW}`
  return `The Authorization header does not start with the Bearer scheme; ${HOW}`
}
