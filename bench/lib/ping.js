// The trivial route's request, shared by trivial.js, floor.js and instructions.js: the secret its
// servers verify tokens with (BENCH_SECRET) and the headers of every request (a valid token with
// the route's scope, a User-Agent of the convention's form, Accept: application/json).
import { signToken } from '../../dist/index.js'

export const PING_SECRET = 'bench-secret-that-is-long-enough-0123456789'

const token = signToken({ secret: PING_SECRET, sub: 'bench', scope: 'ping:read', expiresIn: '1h' })

export const pingHeaders = { 'user-agent': 'bench/1 (autocannon)', accept: 'application/json', authorization: `Bearer ${token}` }
