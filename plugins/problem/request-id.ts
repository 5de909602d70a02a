import { randomUUID } from 'node:crypto'
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify'

/** Longest `X-Request-ID` honoured by default; a longer one is replaced by a generated id. */
export const MAX_REQUEST_ID_LENGTH = 200

/** The header carrying the caller's correlation id, unless the problem plugin names another. */
export const DEFAULT_REQUEST_ID_HEADER = 'x-request-id'

/**
 * The caller's request id when it can be used as sent (conventions: Errors, rule 4): a
 * non-empty value of at most `max` characters; undefined otherwise, and a generated id is used.
 */
export function sentRequestId (value: unknown, max: number = MAX_REQUEST_ID_LENGTH): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined
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
  const generate = (raw: RawRequestDefaultExpression): string => sentRequestId(raw.headers[settings.header], settings.maxLength) ?? randomUUID()
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
