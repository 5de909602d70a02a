import t from 'tap'
import { TokenError } from 'fast-jwt'
import { claimOf, tokenProblem } from '../../plugins/auth/token-errors.js'

t.test('claimOf reads the claim out of fast-jwt messages', async t => {
  t.equal(claimOf('The iss claim value is not allowed.'), 'iss')
  t.equal(claimOf('None of aud claim values are allowed.'), 'aud')
  t.equal(claimOf('The exp claim is required.'), 'exp')
  t.equal(claimOf('something else'), 'a required', 'falls back to a neutral word')
})

t.test('tokenProblem: unknown codes and foreign errors stay a generic 401 Invalid Token', async t => {
  const table: unknown[] = [
    new TokenError(TokenError.codes.invalidCritHeader, 'crit'),
    new TokenError(TokenError.codes.verifyError, 'Cannot verify the signature.'),
    new Error('not from fast-jwt')
  ]
  for (const err of table) {
    const pe = tokenProblem(err, ['HS256'])
    t.equal(pe.statusCode, 401)
    t.equal(pe.title, 'Invalid Token')
    t.equal(pe.detail, 'The access token could not be verified; obtain a new token and retry.')
    t.strictSame(pe.headers, { 'www-authenticate': 'Bearer error="invalid_token"' })
  }
})

t.test('tokenProblem: a key fetch failure is 503 with the cause kept for the log', async t => {
  const cause = new Error('connect ECONNREFUSED')
  const pe = tokenProblem(new TokenError(TokenError.codes.keyFetchingError, 'Cannot fetch key.', { originalError: cause }), ['RS256'])
  t.equal(pe.statusCode, 503)
  t.equal(pe.cause, cause)
  t.notMatch(pe.detail, /ECONNREFUSED/)
  const noCause = tokenProblem(new TokenError(TokenError.codes.keyFetchingError, 'Cannot fetch key.'), ['RS256'])
  t.equal(noCause.statusCode, 503)
})

t.test('tokenProblem: a key set without the token\'s key (or with several, the token naming none) is 401', async t => {
  for (const code of ['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS']) {
    const pe = tokenProblem(new TokenError(TokenError.codes.keyFetchingError, 'Cannot fetch key.', { originalError: Object.assign(new Error('no key'), { code }) }), ['RS256'])
    t.equal(pe.statusCode, 401, code)
    t.match(pe.detail, /signed with a key the identity provider does not publish/, code)
  }
})
