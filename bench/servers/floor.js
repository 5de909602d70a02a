// The floor: the least work any implementation of the trivial route's rules could do, written
// by hand with none of the suite's code. One callback onRequest hook reads the request headers
// once and applies what the convention asks of this GET: HTTP/1.1 with Host, a User-Agent of
// the `<product>/<major-version>` form and an Accept that admits JSON (each checked once per
// distinct value, as the suite memoizes them), no Svc-Idempotency-Key on a GET, the
// X-Request-ID and Svc-Execution-Context echoed when sent, and a bearer token verified once
// per connection (then its expiry and scope checked per request); every answer carries
// Content-Language and, once authenticated, Cache-Control: no-store. Refusals are plain 4xx
// here: the floor measures the accepted request's path only.
import Fastify from 'fastify'
import { createVerifier } from 'fast-jwt'
import { serveStats } from '../lib/harness.js'

const verify = createVerifier({ key: process.env.BENCH_SECRET, algorithms: ['HS256'] })
const kAuth = Symbol('floor.auth')
const USER_AGENT = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[0-9][!#$%&'*+.^_`|~0-9A-Za-z-]*( |$)/
let lastUserAgent = ''
let lastAccept = ''

function refuse (reply, status) {
  reply.code(status).send({ status })
}

const app = Fastify({ logger: false })
app.addHook('onRequest', function floor (request, reply, done) {
  const headers = request.headers
  const raw = request.raw
  reply.header('content-language', 'en-US')
  const requestId = headers['x-request-id']
  if (requestId !== undefined) reply.header('x-request-id', requestId)
  const context = headers['svc-execution-context']
  if (context !== undefined) reply.header('svc-execution-context', context)
  if (raw.httpVersionMajor === 1 && (raw.httpVersionMinor === 0 || headers.host === undefined)) return refuse(reply, 400)
  const userAgent = headers['user-agent']
  if (userAgent !== lastUserAgent) {
    if (userAgent === undefined || !USER_AGENT.test(userAgent)) return refuse(reply, 403)
    lastUserAgent = userAgent
  }
  const accept = headers.accept
  if (accept !== undefined && accept !== lastAccept) {
    if (!/(^|,)\s*(application\/json|application\/\*|\*\/\*)\s*(;|,|$)/.test(accept)) return refuse(reply, 406)
    lastAccept = accept
  }
  if (headers['svc-idempotency-key'] !== undefined) return refuse(reply, 400)
  const authorization = headers.authorization
  const socket = raw.socket
  let known = socket[kAuth]
  if (known === undefined || known.header !== authorization) {
    if (authorization === undefined || !authorization.startsWith('Bearer ')) return refuse(reply, 401)
    try {
      const claims = verify(authorization.slice(7))
      known = { header: authorization, until: claims.exp * 1000, scopes: String(claims.scope).split(' ') }
    } catch {
      return refuse(reply, 401)
    }
    socket[kAuth] = known
  }
  if (known.until <= Date.now()) return refuse(reply, 401)
  reply.header('cache-control', 'no-store')
  if (!known.scopes.includes('ping:read')) return refuse(reply, 403)
  done()
})
app.get('/ping', {
  schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } }
}, async () => ({ hello: 'world' }))
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
