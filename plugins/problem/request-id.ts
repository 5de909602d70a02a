import { randomUUID } from 'node:crypto'
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify'

/**
 * Longest `X-Request-ID` taken by default; a longer one is refused. It becomes the problem's
 * `requestId`, whose schema bounds it, and is echoed and written in every log line.
 */
export const MAX_REQUEST_ID_LENGTH = 200

/** The header carrying the caller's correlation id, unless the problem plugin names another. */
export const DEFAULT_REQUEST_ID_HEADER = 'x-request-id'

/*
 * Visible ASCII, with spaces and tabs only between characters (what Node leaves of a header
 * value it trims). Node reads a header's bytes as latin1, so an id beyond ASCII (UTF-8 `café`)
 * would come back garbled in the problem body and the logs: not the id the caller sent.
 */
const USABLE = /^[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?$/

/** The rule a sent request id breaks, as a context item's message says it. */
export function requestIdRule (max: number): string {
  return `must be 1 to ${max} visible ASCII characters (spaces and tabs may separate them); send such an id, or none and one is generated`
}

/**
 * The caller's request id when it can be used as sent (conventions: Errors, rule 4): 1 to
 * `max` visible ASCII characters; undefined otherwise. The problem plugin refuses a request
 * whose id is sent but unusable; the answers made before its hook use a generated id.
 */
export function sentRequestId (value: unknown, max: number = MAX_REQUEST_ID_LENGTH): string | undefined {
  return typeof value === 'string' && value.length <= max && USABLE.test(value) ? value : undefined
}

/**
 * Whether `header` (lowercase) comes more than once among a request's header lines. Node joins
 * the values of a repeated one with ", ", which no caller sent as its id.
 */
export function repeatedHeader (rawHeaders: readonly string[], header: string): boolean {
  let seen = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === header.length && name.toLowerCase() === header && ++seen > 1) return true
  }
  return false
}

/**
 * `sentRequestId` of a request's header: undefined also when the header comes more than once.
 * Only a value with ", " can be a join, so only such a value has the header lines counted.
 */
export function sentRequestIdOf (raw: { headers: Record<string, unknown>, rawHeaders: readonly string[] }, header: string, max: number): string | undefined {
  const sent = sentRequestId(raw.headers[header], max)
  return sent !== undefined && sent.includes(', ') && repeatedHeader(raw.rawHeaders, header) ? undefined : sent
}

/** Where a server's requests carry their id: one setting for the plugin and the server options. */
export interface RequestIdSettings {
  /** Lowercase header name. */
  readonly header: string
  readonly maxLength: number
}

const DEFAULT_SETTINGS: RequestIdSettings = { header: DEFAULT_REQUEST_ID_HEADER, maxLength: MAX_REQUEST_ID_LENGTH }

// By HTTP server: the router's refusals (problemFrameworkErrors) are answered for the whole
// server, before any context's hooks, so they read what the problem plugin was told.
const byServer = new WeakMap<object, RequestIdSettings>()

/**
 * Records the problem plugin's settings for its server. A server answers router refusals
 * one way, so a second registration (another context) must agree with the first.
 */
export function recordRequestIdSettings (fastify: FastifyInstance, settings: RequestIdSettings): void {
  const known = byServer.get(fastify.server)
  if (known === undefined) {
    byServer.set(fastify.server, settings)
  } else if (known.header !== settings.header || known.maxLength !== settings.maxLength) {
    throw new TypeError(`problem plugin: requestIdHeader and maxRequestIdLength must be the same wherever the plugin is registered on one server (the router's refusals are answered for all of it), got ${settings.header}/${settings.maxLength} after ${known.header}/${known.maxLength}`)
  }
}

/** The settings the problem plugin recorded for `fastify`'s server; the defaults without it. */
export function requestIdSettingsOf (fastify: FastifyInstance): RequestIdSettings {
  return byServer.get(fastify.server) ?? DEFAULT_SETTINGS
}

// The generators whose ids are the convention's requestId (the caller's, else a UUID).
const conventionGenerators = new WeakSet<object>()

/** A Fastify `genReqId` giving the convention's requestId with `settings`. */
export function requestIdGenerator (settings: RequestIdSettings): (raw: RawRequestDefaultExpression) => string {
  const generate = (raw: RawRequestDefaultExpression): string => sentRequestIdOf(raw, settings.header, settings.maxLength) ?? randomUUID()
  conventionGenerators.add(generate)
  return generate
}

/**
 * `problemServerOptions.genReqId`: `request.id`, and so the log's `reqId`, is the
 * convention's requestId. The problem plugin replaces it with one of its own settings.
 */
export const problemGenReqId = requestIdGenerator(DEFAULT_SETTINGS)

/** Whether `request.id` of `fastify`'s requests is the convention's requestId (the server opted in). */
export function idsAreRequestIds (fastify: FastifyInstance): boolean {
  // Fastify has the getter (the context's generator) but does not type it.
  return conventionGenerators.has((fastify as unknown as { genReqId: object }).genReqId)
}
