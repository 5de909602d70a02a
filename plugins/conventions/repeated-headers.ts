import type { FastifyRequest } from 'fastify'
import { problems } from '../problem/index.js'

/*
 * Node keeps the first of repeated headers that may appear once and drops the others without
 * a word (IncomingMessage.headers), so `Host: a` then `Host: b` would be served as host a, and
 * the paging URLs built from it. RFC 9112 §3.2: a request with more than one Host is a 400; the
 * same holds here for the other one-value headers the service reads, where two values leave
 * unclear which one the sender meant (RFC 9110 §5.3). User-Agent is not among them: a repeated
 * one is an invalid User-Agent, which the User-Agent rule refuses with 403 (user-agent.ts).
 */
const SINGLE = new Set(['host', 'authorization', 'content-type', 'content-length', 'if-modified-since', 'if-unmodified-since', 'proxy-authorization'])
const USER_AGENT = 'user-agent'
const LENGTHS = new Set([...SINGLE, USER_AGENT].map((name) => name.length))

/**
 * One pass over the request's header lines: throws a 400 for a repeated Host (RFC 9112 §3.2
 * asks it of every server), and with `refuse` for the first other one-value header the request
 * repeats; says whether User-Agent comes more than once, which the User-Agent rule refuses.
 */
export function checkRepeatedHeaders (request: FastifyRequest, refuse: boolean): boolean {
  const raw = request.raw.rawHeaders
  let seen: Set<string> | undefined
  let userAgents = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string
    // Most names are told apart by their length alone, without making a lower-case copy.
    if (!LENGTHS.has(name.length)) continue
    const lower = name.toLowerCase()
    if (lower === USER_AGENT) userAgents++
    if (!SINGLE.has(lower) || (!refuse && lower !== 'host')) continue
    seen ??= new Set()
    if (seen.has(lower)) {
      throw problems.badRequest(`The request carries the ${lower} header more than once; send it once, with one value.`)
    }
    seen.add(lower)
  }
  return userAgents > 1
}
