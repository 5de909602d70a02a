import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { invalidData } from '../problem/index.js'

/** What a verifier learned about an accepted delivery. */
export interface VerifiedDelivery {
  /** The producer's id of the delivery, the same on every retry; null when it sends none (no deduplication). */
  id: string | null
}

/** What the interface document says of a verifier (the openapi plugin shows it on the webhook's operation). */
export interface VerifierDocumentation {
  /** The request headers it reads, each required: JSON Schemas by lowercase name. */
  headers: Record<string, Record<string, unknown>>
  /** How a delivery is authenticated, and what a refusal is. */
  description: string
}

/**
 * Checks that a delivery comes from the producer, over the exact bytes received.
 * Returns what it learned, `null` to refuse it with a generic 401, or throws a
 * `ProblemError` (a 401 whose detail says what is wrong, never a secret).
 * `documentation` describes it in the interface document (the suite's verifiers have one).
 */
export type WebhookVerifier = ((rawBody: Buffer, request: FastifyRequest) => VerifiedDelivery | null | Promise<VerifiedDelivery | null>) & {
  documentation?: VerifierDocumentation
}

/**
 * A header's value, or undefined when absent or empty. Node joins a repeated header into
 * one value (`a, b`), which then fails verification like any altered header.
 */
export function headerValue (request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * The longest delivery id kept. The store's key holds it whatever its characters (255 UTF-16
 * units are at most 765 bytes of UTF-8, well within a B-tree entry); a producer's ids are far
 * shorter (a UUID, `msg_` and a KSUID).
 */
export const MAX_DELIVERY_ID_LENGTH = 255

/**
 * `id`, read from `header` of a delivery already authenticated; a longer one is a 400 naming
 * the header, which the producer's retries cannot mend, where the store would fail it with a 500.
 */
export function checkedDeliveryId (id: string, header: string): string {
  if (id.length <= MAX_DELIVERY_ID_LENGTH) return id
  const message = `must be at most ${MAX_DELIVERY_ID_LENGTH} characters, and is ${id.length}`
  throw invalidData([{ code: 'INPUT_INVALID', message, field: header, source: 'header', value: id }],
    `The ${header} header ${message}; send a shorter id, the same on each retry of the delivery.`)
}

/** Digests of the accepted secrets, compared in constant time whatever the candidate's length. */
export function digestOf (value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest()
}

/** Whether `candidate` equals one of the digests; each comparison takes the same time. */
export function matchesDigest (candidate: string, digests: readonly Buffer[]): boolean {
  const digest = digestOf(candidate)
  let found = false
  for (const d of digests) found = timingSafeEqual(digest, d) || found
  return found
}
