import type { RouteOptions } from 'fastify'
import type { RouteFacts } from './facts.js'
import { ruleOn } from './headers.js'

/** Statuses a route gives by what it takes, not by what it does: 404 with path parameters, 413 and 415 with a body. */
const BY_PARAMS: readonly number[] = [404]
const BY_BODY: readonly number[] = [413, 415]
export const DERIVED_PROBLEMS: readonly number[] = [...BY_PARAMS, ...BY_BODY]

/**
 * The problem statuses a route can give, from the common ones, what it declares
 * (`config.problems`) and what its schema and config imply: 404 with path parameters; 413
 * and 415 with a body (Fastify's `bodyLimit`, the Content-Type rule); no 401 without a token
 * to check; no 403 when neither a token nor a User-Agent is checked; no 406 without the
 * Accept rule; no 429 where neither the rate limit nor the auth plugin's refusal limit counts.
 */
export function statusesOf (route: RouteOptions, schema: { params?: unknown, body?: unknown }, common: readonly number[], facts: Pick<RouteFacts, 'config'>): number[] {
  const set = new Set(common)
  const { config } = facts
  if (config.auth === false) {
    set.delete(401)
    if (!ruleOn(config, 'userAgent')) set.delete(403)
    if (config.rateLimit === false) set.delete(429)
  }
  if (!ruleOn(config, 'accept')) set.delete(406)
  if (schema.params !== undefined || route.url.includes(':')) for (const s of BY_PARAMS) set.add(s)
  if (schema.body !== undefined) for (const s of BY_BODY) set.add(s)
  for (const s of config.problems ?? []) set.add(s)
  return [...set].sort((a, b) => a - b)
}
