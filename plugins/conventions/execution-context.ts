import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ContextItem } from '../../schemas/problem.js'

export const EXECUTION_CONTEXT_HEADER = 'svc-execution-context'

/** Conventions: Svc-Execution-Context — 1 to 100 characters of `[a-z0-9_-]`. */
export const EXECUTION_CONTEXT_PATTERN = /^[a-z0-9_-]{1,100}$/

/** Which execution contexts the service runs (conventions: Headers, Svc-Execution-Context). */
export interface ExecutionContextOptions {
  /** The supported names, or a predicate deciding per request. Default `['prod', 'preprod']`. */
  supported?: readonly string[] | ((name: string, request: FastifyRequest) => boolean)
  /** Dynamic names supported besides `supported`. Default `[]`. */
  extra?: readonly string[]
  /** The context of a request without the header ("absent header means production"). Default `'prod'`. */
  default?: string
}

/** The options resolved once at registration. */
export interface ExecutionContextRule {
  names: ReadonlySet<string>
  predicate: ((name: string, request: FastifyRequest) => boolean) | null
  fallback: string
}

function item (message: string, value: string): ContextItem {
  return { code: 'INPUT_INVALID', message, field: 'Svc-Execution-Context', source: 'header', value }
}

/**
 * Sets `request.executionContext` (the sent value, else the default) and echoes a sent value
 * on the response ("returned … when it was in the request": the requested value, on the 400
 * for a malformed or unsupported one too; it arrived as a legal header value, so it can be
 * sent back as it came). Returns the violation, or null.
 */
export function applyExecutionContext (request: FastifyRequest, headers: IncomingHttpHeaders, reply: FastifyReply, rule: ExecutionContextRule): ContextItem | null {
  const value = headers[EXECUTION_CONTEXT_HEADER]
  if (typeof value !== 'string') return null
  reply.header(EXECUTION_CONTEXT_HEADER, value)
  if (!EXECUTION_CONTEXT_PATTERN.test(value)) {
    return item('must be 1 to 100 characters among a-z, 0-9, _ and -', value)
  }
  if (!rule.names.has(value) && (rule.predicate === null || !rule.predicate(value, request))) {
    const hint = rule.predicate === null ? `use one of ${[...rule.names].join(', ')}` : 'use a context this service runs'
    return item(`names an execution context this service does not support; ${hint}, or omit the header for ${rule.fallback}`, value)
  }
  request.executionContext = value
  return null
}
