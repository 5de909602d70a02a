import type { FastifyRequest } from 'fastify'
import { problems } from '../problem/index.js'
import { shown } from './shown.js'
import { essenceOf, type MediaTypes } from '../shared/media-type.js'
import { negotiate, parseAccept } from '../shared/accept.js'
import { Memo } from './memo.js'
import { pathOf } from '../shared/url.js'

/** The media types a route can produce, in its order of preference. */
export type Produces = MediaTypes

/** The Accept rule of a route: the types it produces, and the negotiated type by exact Accept value. */
export interface AcceptRule {
  readonly produces: Produces
  /** What an absent or blank Accept gets: JSON when produced, else the route's first type. */
  readonly fallback: string
  readonly chosen: Memo<string | null>
}

/** The rule of a list of produced types, resolved once at registration (no lookup per request). */
export function acceptRule (produces: Produces): AcceptRule {
  const fallback = essenceOf(produces.find(mt => essenceOf(mt) === 'application/json') ?? produces[0])
  // A blank Accept means "anything" (RFC 9110 §12.5.1), like an absent one.
  const chosen = new Memo<string | null>((h) => h.trim() === '' ? fallback : negotiate(parseAccept(h), produces))
  return { produces, fallback, chosen }
}

/** Returns the negotiated type for the request's Accept (`header`), or throws 406. */
export function checkAccept (request: FastifyRequest, header: string | undefined, rule: AcceptRule): string {
  if (header === undefined) return rule.fallback
  const chosen = rule.chosen.get(header)
  if (chosen !== null) return chosen
  const path = pathOf(request.url)
  const offered = rule.produces.map(essenceOf).join(', ')
  // Problem details are an error format (RFC 9457): `application/problem+json` alone never
  // selects a success representation, though the 406 itself is written in it.
  throw problems.notAcceptable(
    `None of the media types in the Accept header ${shown(header)} can be produced by ${request.method} ${path}; accept ${offered}.`,
    { instance: path }
  )
}
