import type { FastifyRequest } from 'fastify'
import { defineProblem, problems } from '../problem/index.js'

/**
 * A 400, not RFC 9110's 505: the conventions keep 5xx for server faults a client may retry
 * (Errors, rule 8) and 505 is not among their contractual codes; this is the client's to fix.
 * Titled as every 400 without context is (Common errors: Bad Request); its own code and the
 * detail say which request was refused.
 */
export const httpVersionNotSupported = defineProblem(400, 'SVC_ERR_HTTP_VERSION_NOT_SUPPORTED', 'Bad Request')

/**
 * Conventions: "The service is an HTTP/1.1 API … HTTP/1.0 is unsupported". HTTP/1.1 passes,
 * and so does HTTP/2 on a server that speaks it (an HTTP/2 stream); with `refuseOld`, older
 * versions are refused. An HTTP/1 request line that names a version from 2 up is refused
 * always: HTTP/2 is a connection's protocol, agreed by TLS or prior knowledge, and such a line
 * is no request of any version this server speaks.
 * An HTTP/1.1 request without a Host header gets a 400 problem whatever the route's rules: RFC
 * 9112 §3.2 requires it of every server, and Node, which would answer it with an empty 400 of
 * its own, leaves it to this plugin when the server is created with `requireHostHeader: false`.
 */
export function checkHttpVersion (request: FastifyRequest, host: string | undefined, refuseOld: boolean): void {
  const { httpVersionMajor: major, httpVersionMinor: minor } = request.raw
  if (major > 1) {
    if ((request.raw as { stream?: unknown }).stream !== undefined) return
    throw httpVersionNotSupported(`This service speaks HTTP/1.1; resend the request as HTTP/1.1: HTTP/${major}.${minor} is not a version an HTTP/1 request line can name.`)
  }
  if (major === 1 && minor >= 1) {
    if (host !== undefined) return
    throw problems.badRequest('An HTTP/1.1 request must carry a Host header; add one naming this service.')
  }
  if (refuseOld) throw httpVersionNotSupported(`This service speaks HTTP/1.1; resend the request as HTTP/1.1 instead of HTTP/${major}.${minor}.`)
}
