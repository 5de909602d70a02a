import type { FastifyRequest } from 'fastify'
import { Memo } from './memo.js'
import { problems } from '../problem/index.js'
import { shown } from './shown.js'
import { pathOf } from '../shared/url.js'
import { isValidUserAgent, type UserAgentSyntax } from '../shared/user-agent.js'

export type { UserAgent, UserAgentSyntax } from '../shared/user-agent.js'

/** How the User-Agent rule reads the header (conventions: Headers, User-Agent). */
export interface UserAgentOptions extends UserAgentSyntax {
  /** Replaces the syntax check; gets the header value (undefined when absent). */
  validate?: (value: string | undefined, request: FastifyRequest) => boolean | Promise<boolean>
}

function ruleText (opts: UserAgentOptions): string {
  let text = 'a User-Agent header of the form <product>/<major-version> <comment>, for example "order-service/2 (orders-team)"'
  if (opts.strictVersion === true) text += ', the version being digits only'
  if (opts.requireComment === true) text += ', with a comment in parentheses'
  return text
}

/** The User-Agent rule of a route: its options, and the verdict by exact header value. */
export interface UserAgentRule {
  readonly options: UserAgentOptions
  /** Null with a custom `validate`, which decides every request itself. */
  readonly valid: Memo<boolean> | null
}

/** The rule of `options`, resolved once at registration: routes only switch it off. */
export function userAgentRule (options: UserAgentOptions): UserAgentRule {
  return { options, valid: options.validate === undefined ? new Memo((v) => isValidUserAgent(v, options)) : null }
}

/**
 * Conventions: Headers, User-Agent — absent or invalid gives 403, and the detail names the
 * path and the rule. `value` is the request's header; sent more than once (`repeated`: Node
 * keeps the first line and drops the others), it is invalid whatever the values.
 */
export async function checkUserAgent (request: FastifyRequest, value: string | undefined, rule: UserAgentRule, repeated: boolean): Promise<void> {
  const opts = rule.options
  if (repeated) refuse(request, 'the header is sent more than once; send it once', opts)
  const valid = rule.valid === null
    ? await (opts.validate as NonNullable<UserAgentOptions['validate']>)(value, request)
    : value !== undefined && rule.valid.get(value)
  if (!valid) refuse(request, value === undefined ? 'the header is missing' : `${shown(value)} does not follow it`, opts)
}

function refuse (request: FastifyRequest, why: string, opts: UserAgentOptions): never {
  const path = pathOf(request.url)
  throw problems.forbidden(`Requests to ${path} need ${ruleText(opts)}; ${why}.`, { instance: path })
}
