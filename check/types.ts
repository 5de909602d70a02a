// The shapes `check()` works with and answers: rules, verdicts, the exchanges that prove them.

/** The four answers a rule can get (issue 40): `fail` carries the exchange that shows why. */
export type VerdictKind = 'pass' | 'fail' | 'not applicable' | 'not checked'

/** One request as sent, the token left out. */
export interface SentRequest {
  method: string
  /** The path and query, relative to the base URL's origin. */
  path: string
  headers: Record<string, string>
  body?: string
  /** `HTTP/1.0` for the one raw probe; HTTP/1.1 otherwise. */
  version?: string
}

/** One answer as received; `json` is the parsed body when it parses. */
export interface Answer {
  status: number
  headers: Record<string, string>
  text: string
  json: unknown
}

export interface Exchange { request: SentRequest, response: Answer }

export interface Verdict {
  id: string
  section: string
  title: string
  verdict: VerdictKind
  /** Why it failed, or why it was not applicable or not checked. */
  reason?: string
  /** The exchange that shows a failure. */
  exchange?: Exchange
}

export type OutputFormat = 'text' | 'json' | 'junit' | 'tap'

export interface CheckOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  /** A bearer token sent on probes that should pass; never printed. */
  token?: string
  /** A token the service accepts but that lacks a permission `token` has (read or write of a collection): the 403 probe. Never printed. */
  limitedToken?: string
  /** An origin the service allows, for the CORS probes of an accepted preflight. */
  origin?: string
  /** The OpenAPI document: a URL, a path on the service (`/spec.json`), or the parsed document. Default: `<base-url>/openapi.json` when it answers. */
  openapi?: string | Record<string, unknown>
  /** Collection paths to probe, each beginning with `/` (e.g. `/v1/orders`); with a document, only these. */
  collections?: readonly string[]
  /** Permission to create, change and delete entities of its own (removed at the end). */
  writes?: boolean
  /** Only these rule ids (and their prerequisites' requests). */
  only?: readonly string[]
  /** Every rule but these ids. */
  skip?: readonly string[]
  /** At most this many requests in all. Default 500. */
  maxRequests?: number
  /** At most this many requests in flight. Default 2. */
  concurrency?: number
  /** Per request, for the whole answer (body included), in milliseconds; at least 1. Default 10 s. */
  timeoutMillis?: number
  /** CA certificates (PEM) trusted besides those Node.js trusts by default, for services with their own CA. */
  ca?: string
}

export interface CheckResult {
  baseUrl: string
  writes: boolean
  /** One verdict per rule of the list, in its order (rules left out by --only/--skip absent). */
  verdicts: Verdict[]
  requests: number
  durationMillis: number
  /** What the check created and did not delete, as paths, each with the reason. */
  leftBehind: string[]
}

/** Why the check could not run at all: the CLI's exit code 2. */
export class CheckError extends Error {
  readonly kind: 'unreachable' | 'tls' | 'token' | 'usage' | 'document' | 'no-collection'
  constructor (kind: CheckError['kind'], message: string) {
    super(message)
    this.name = 'CheckError'
    this.kind = kind
  }
}
