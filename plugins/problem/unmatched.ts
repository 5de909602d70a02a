import type { FastifyInstance } from 'fastify'
import { problems, type ProblemError } from './errors.js'
import { pathOf } from '../shared/url.js'

/*
 * The answers to a request no route serves, in one place for the three that give them: the
 * not-found handler (problem plugin), the methods plugin (405 with Allow), and the client error
 * handler for a method Node's parser does not know, which no hook sees.
 */

/** No route at the path: 404, or 400 for a target that is no path (CONNECT's authority, `*`). */
export function unmatchedProblem (path: string): ProblemError {
  if (!path.startsWith('/')) return problems.badRequest('The request target is not a path; send the request to a path of this service.')
  return problems.notFound(`No resource exists at ${path}; check the path.`, { instance: path })
}

/** A path served, but not by `method`: 405 naming the methods served, also in `Allow`. */
export function methodNotAllowedProblem (method: string, path: string, allowed: readonly string[]): ProblemError {
  const allow = allowed.join(', ')
  return problems.methodNotAllowed(`The method ${method} is not supported at ${path}; use one of ${allow}.`, {
    headers: { allow },
    instance: path
  })
}

// RFC 9112 §3: method SP request-target SP HTTP-version; the method a token (RFC 9110 §9.1).
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\x21-\x7e]+) HTTP\/([0-9])\.([0-9])$/
// RFC 9112 §5: field-name ":" OWS field-value OWS; no obs-fold, no control character but HTAB.
const FIELD_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):([\t\x20-\x7e\x80-\xff]*)$/

/** What a refused request's head says: its method, target, and the request id header's value. */
export interface RefusedHead {
  method: string
  target: string
  /** The value of `header`, repeated ones joined as Node joins them; undefined when not sent. */
  requestId: string | undefined
}

/**
 * Reads a request head from the bytes Node's parser refused (`rawPacket`): a request line of
 * HTTP/1.1 or later and well-formed header lines, up to the empty line. Null for anything else,
 * a head cut short included (the rest may not have arrived): what Node would have refused on
 * other grounds, or what cannot be read whole, is left to the plain 400.
 */
export function readRefusedHead (raw: Buffer, header: string): RefusedHead | null {
  const text = raw.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  if (end === -1) return null
  const [first, ...fields] = text.slice(0, end).split('\r\n')
  const line = REQUEST_LINE.exec(first as string)
  if (line === null) return null
  const [, method, target, major, minor] = line as unknown as [string, string, string, string, string]
  // HTTP/1.0 and older: the plain 400 names HTTP/1.1, as the conventions plugin's refusal does.
  if (Number(major) * 10 + Number(minor) < 11) return null
  const ids: string[] = []
  for (const field of fields) {
    const f = FIELD_LINE.exec(field)
    if (f === null) return null
    if ((f[1] as string).toLowerCase() === header) ids.push((f[2] as string).replace(/^[\t ]+|[\t ]+$/g, ''))
  }
  return { method, target, requestId: ids.length === 0 ? undefined : ids.join(', ') }
}

/**
 * The answer Fastify's path gives a method no route serves, for a method Node's parser does
 * not know: 405 with Allow where the methods plugin knows the path, else the 404 (or the 400
 * of a target that is no path). No hook runs for such a request, so nothing else is checked.
 */
export function unknownMethodProblem (app: FastifyInstance, method: string, target: string): ProblemError {
  const path = pathOf(target)
  // The methods plugin's decorator, when it is registered (it needs this plugin, not the reverse).
  const lookup = (app as { allowedMethods?: (path: string) => string[] | null }).allowedMethods
  const allowed = lookup === undefined ? null : lookup(path)
  return allowed === null ? unmatchedProblem(path) : methodNotAllowedProblem(method, path, allowed)
}
