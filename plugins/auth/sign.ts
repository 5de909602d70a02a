import { createSigner } from 'fast-jwt'
import { assertSecret } from './verifiers.js'
import { shownValue } from '../shared/options.js'

export interface SignTokenOptions {
  /** The HS256 secret the auth plugin verifies with, at least 32 bytes. */
  secret: string
  /** The caller's id, written to `createdBy` / `modifiedBy`. */
  sub: string
  /** Granted scopes, space-separated or as a list. Default: none. */
  scope?: string | string[]
  /** Lifetime in seconds, or a span such as `'15m'` or `'1h'`. Default `'1h'`. A negative number mints an expired token (tests). */
  expiresIn?: number | string
  /** The `iss` claim, when the verifier checks it. */
  issuer?: string
  /** The `aud` claim, when the verifier checks it. */
  audience?: string | string[]
}

/** An HS256 bearer token (for `npm run token` and tests), verifiable by the auth plugin's `{ secret }` verifier. */
export function signToken (opts: SignTokenOptions): string {
  assertSecret(opts.secret, 'signToken secret')
  if (typeof opts.sub !== 'string' || opts.sub === '') throw new TypeError(`signToken: sub must be a non-empty string, got ${JSON.stringify(opts.sub)}`)
  const expiresIn = opts.expiresIn ?? '1h'
  // 0 would make fast-jwt drop `exp`, and the verifier refuses a token without one.
  if (expiresIn === 0 || (typeof expiresIn === 'number' && !Number.isFinite(expiresIn))) {
    throw new TypeError(`signToken: expiresIn must be a non-zero number of seconds or a span such as '1h', got ${shownValue(expiresIn)}`)
  }
  const scope = Array.isArray(opts.scope) ? opts.scope.join(' ') : opts.scope ?? ''
  const sign = createSigner({
    key: opts.secret,
    algorithm: 'HS256',
    sub: opts.sub,
    // fast-jwt reads a number as milliseconds.
    expiresIn: typeof expiresIn === 'number' ? expiresIn * 1000 : expiresIn,
    iss: opts.issuer,
    aud: opts.audience
  })
  return sign(scope === '' ? {} : { scope })
}
