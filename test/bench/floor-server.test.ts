import { request } from 'node:http'
import t from 'tap'
import * as suite from '../../index.js'
import { signToken } from '../../plugins/auth/index.js'

// bench/servers/floor.js claims to apply, by hand, every rule the suite applies to the trivial
// route's request. It answers the cases below as the suite does (the same status, and the
// headers the convention asks for), or bench/trivial.js would hold the suite to a server that
// does less.

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
// bench/lib/harness.js and bench/servers/suite-app.js are plain JavaScript without types: computed
// specifiers keep them `any`.
const harness = await import(new URL('../../bench/lib/harness.js', import.meta.url).href)
// The app bench/servers/suite.js serves, built here from the sources.
const { buildSuite } = await import(new URL('../../bench/servers/suite-app.js', import.meta.url).href)

t.test('the floor server answers the trivial route\'s requests as the suite does', async (t) => {
  const token = signToken({ secret: SECRET, sub: 'bench', scope: 'ping:read', expiresIn: '1h' })
  const otherScope = signToken({ secret: SECRET, sub: 'bench', scope: 'other:read', expiresIn: '1h' })
  const expired = signToken({ secret: SECRET, sub: 'bench', scope: 'ping:read', expiresIn: -60 })
  const base = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
  const cases: Array<[string, Record<string, string | undefined>]> = [
    ['accepted', base],
    ['with X-Request-ID and Svc-Execution-Context', { ...base, 'x-request-id': 'req-1', 'svc-execution-context': 'prod' }],
    ['Accept listing JSON among others', { ...base, accept: 'text/html, application/json;q=0.5' }],
    ['no User-Agent', { ...base, 'user-agent': undefined }],
    ['a User-Agent without a version', { ...base, 'user-agent': 'curl' }],
    ['Accept without JSON', { ...base, accept: 'text/html' }],
    ['no Authorization', { ...base, authorization: undefined }],
    ['another scheme', { ...base, authorization: `Basic ${token}` }],
    ['a token with a bad signature', { ...base, authorization: `Bearer ${token.slice(0, -2)}xx` }],
    ['an expired token', { ...base, authorization: `Bearer ${expired}` }],
    ['a token without the scope', { ...base, authorization: `Bearer ${otherScope}` }],
    ['Svc-Idempotency-Key on a GET', { ...base, 'svc-idempotency-key': '0123456789abcdef01234' }]
  ]

  const app = await buildSuite(suite, SECRET)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const suitePort: number = app.server.address().port
  const floor = await harness.startServer('floor.js', { BENCH_SECRET: SECRET })
  t.teardown(() => floor.stop())

  for (const [name, sent] of cases) {
    const headers = Object.fromEntries(Object.entries(sent).filter((e): e is [string, string] => e[1] !== undefined))
    // Both over HTTP, each case on a new connection (the floor remembers a verified token per connection).
    const suite = await get(suitePort, headers)
    const answer = await get(floor.port as number, headers)
    t.equal(answer.status, suite.status, `${name}: status ${suite.status}`)
    for (const header of ['content-language', 'cache-control', 'x-request-id', 'svc-execution-context']) {
      t.equal(answer.headers[header], suite.headers[header], `${name}: ${header}`)
    }
  }
  t.equal((await get(suitePort, base)).status, 200, 'the suite accepts the benchmark\'s request')
})

/** GET /ping with exactly `headers` (node:http adds none of its own but Host), on a new connection. */
async function get (port: number, headers: Record<string, string>): Promise<{ status: number, headers: Record<string, string | string[] | undefined> }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers }) })
    })
    req.on('error', reject)
    req.end()
  })
}
