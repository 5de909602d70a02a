import { problems } from '../problem/index.js'
import { checkedDeliveryId, digestOf, headerValue, matchesDigest, MAX_DELIVERY_ID_LENGTH, type VerifierDocumentation, type WebhookVerifier } from './verifier.js'
import { shownValue } from '../shared/options.js'

/** Options of the shared-token verifier: the producer sends a secret token with each delivery. */
export interface SharedTokenOptions {
  /** The accepted token, or several during a rotation; each at least 16 characters. Required. */
  tokens: string | readonly string[]
  /**
   * The header carrying the token: `authorization` sends it as `Bearer <token>`, any
   * other header carries the bare token. Default `authorization`.
   */
  header?: string
  /**
   * The header carrying the delivery's id, used to apply each delivery once; `false`
   * when the producer sends none (every delivery is then applied). Default `webhook-id`.
   */
  idHeader?: string | false
}

const defaults = { header: 'authorization', idHeader: 'webhook-id' }

const MIN_TOKEN_LENGTH = 16
// RFC 9110 §5.1: a field name is a token; these are the characters names use in practice.
const HEADER_NAME = /^[A-Za-z0-9-]+$/
const BEARER = 'Bearer '

function checkHeader (name: string, value: unknown): string {
  if (typeof value !== 'string' || !HEADER_NAME.test(value)) {
    throw new TypeError(`sharedToken: ${name} must be a header name, got ${shownValue(value)}`)
  }
  return value.toLowerCase()
}

/**
 * A verifier for producers that authenticate with a shared secret token rather than a
 * signature (conventions: Authentication 5). Tokens are compared by their SHA-256
 * digests in constant time, so neither their content nor their length leaks.
 */
export function sharedToken (opts: SharedTokenOptions): WebhookVerifier {
  const tokens: unknown = typeof opts?.tokens === 'string' ? [opts.tokens] : opts?.tokens
  if (!Array.isArray(tokens) || tokens.length === 0) {
    throw new TypeError(`sharedToken: tokens must be a token or a non-empty array of tokens, got ${Array.isArray(tokens) ? 'an empty array' : String(tokens)}`)
  }
  const digests = tokens.map((token: unknown, i) => {
    if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || token.trim() !== token) {
      // Never the token itself: only what is wrong with it.
      throw new TypeError(`sharedToken: tokens[${i}] must be a string of at least ${MIN_TOKEN_LENGTH} characters without surrounding spaces, got ${typeof token === 'string' ? `a string of ${token.length} characters` : String(token)}`)
    }
    return digestOf(token)
  })
  const header = checkHeader('header', opts.header ?? defaults.header)
  const idHeader = opts.idHeader === false ? false : checkHeader('idHeader', opts.idHeader ?? defaults.idHeader)
  const bearer = header === 'authorization'
  // RFC 9110 §11.6.1: a 401 carries a challenge; only the Bearer form has a scheme to name.
  const challenge = bearer ? { headers: { 'www-authenticate': 'Bearer' } } : {}

  const verify: WebhookVerifier = (_rawBody, request) => {
    const value = headerValue(request, header)
    if (value === undefined) {
      throw problems.unauthorized(`The delivery has no ${header} header; the producer must send the endpoint's token${bearer ? ' as Bearer <token>' : ''}.`, challenge)
    }
    if (bearer && !value.startsWith(BEARER)) {
      throw problems.unauthorized('The Authorization header must be Bearer <token>, with that capitalization.', challenge)
    }
    if (!matchesDigest(bearer ? value.slice(BEARER.length) : value, digests)) {
      throw problems.unauthorized(`The token in the ${header} header is not the endpoint's token.`, challenge)
    }
    if (idHeader === false) return { id: null }
    const id = headerValue(request, idHeader)
    if (id === undefined) {
      throw problems.badRequest(`The delivery has no ${idHeader} header; the producer must send one id per delivery, the same on each retry, so that it is applied once.`)
    }
    return { id: checkedDeliveryId(id, idHeader) }
  }
  verify.documentation = documentation(header, idHeader)
  return verify
}

/**
 * The headers the verifier reads. OpenAPI ignores a header parameter named Authorization
 * (§4.8.12.1), so a Bearer token is told of in the description only.
 */
function documentation (header: string, idHeader: string | false): VerifierDocumentation {
  const headers: VerifierDocumentation['headers'] = {}
  if (header !== 'authorization') headers[header] = { type: 'string', minLength: MIN_TOKEN_LENGTH, maxLength: 8192, description: 'The endpoint\'s token; another gives 401.' }
  if (idHeader !== false) headers[idHeader] = { type: 'string', minLength: 1, maxLength: MAX_DELIVERY_ID_LENGTH, description: 'The delivery\'s id, the same on every retry: a delivery is applied once, a repeated id acknowledged with 204; 400 without it or longer.' }
  const sent = header === 'authorization' ? 'Authorization: Bearer <token>' : `the ${header} header`
  return { headers, description: `Authenticated by the endpoint's token in ${sent}; a missing or wrong token gives 401.` }
}
