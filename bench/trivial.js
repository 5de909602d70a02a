// The trivial authenticated route, `GET /ping` answering `{"hello":"world"}`, three ways:
// - bare Fastify (servers/bare.js): no rule applied; a reference only;
// - the floor (servers/floor.js): every rule the convention applies to this request, written by
//   hand in one hook with none of the suite's code: the least any implementation could do;
// - the suite (servers/suite.js): the conventions core registered from dist/index.js.
// The guard holds the suite to the floor, not to bare Fastify: what the rules cost is the
// convention's price; what the suite adds on top of them is its own.
import { signToken } from 'svc-conventions/auth'
import { pairedRounds, pinned, startServer } from './lib/harness.js'

const SECRET = 'bench-secret-that-is-long-enough-0123456789'
const token = signToken({ secret: SECRET, sub: 'bench', scope: 'ping:read', expiresIn: '2h' })
// A valid token with the route's scope, a User-Agent of the convention's form, JSON accepted.
const headers = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }

export async function runTrivial ({ log }) {
  const env = { BENCH_SECRET: SECRET }
  return await pinned(() => pairedRounds({
    start: async () => ({ bare: await startServer('bare.js'), floor: await startServer('floor.js', env), suite: await startServer('suite.js', env) }),
    cases: Object.fromEntries(['bare', 'floor', 'suite'].map((server) => [server, { server, path: '/ping', headers }])),
    log
  }))
}
