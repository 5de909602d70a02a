import { problems } from '../problem/index.js'
import type { PreconditionHeader } from './evaluate.js'

/** What a 412 is worded by: the request, and which of its conditions failed (`evaluatePreconditions`). */
export interface PreconditionFailure {
  /** The request's method: a read (GET, HEAD), a DELETE, a PATCH, or another write. */
  method: string
  /** The target's path, the problem's `instance`. */
  path: string
  header: PreconditionHeader
  /** The write would have created the target (`If-None-Match: *` on one that exists). */
  creates?: boolean
}

/**
 * The 412 of a failed precondition (RFC 9110 §13.2.2), worded for every route that evaluates
 * them: resources (items, their GET), the GET conditional and webhook subscriptions. It tells
 * the client what to do next: read the entity again, reapply a change, or replace rather than
 * create.
 */
export function preconditionProblem (f: PreconditionFailure): Error {
  return problems.preconditionFailed(detailOf(f), { instance: f.path })
}

function detailOf ({ method, path, header, creates = false }: PreconditionFailure): string {
  if (header === 'If-Unmodified-Since') {
    const then = method === 'GET' || method === 'HEAD' ? 'read it without the condition' : method === 'PATCH' ? 'GET it again, reapply your change and retry' : 'GET it again and retry'
    return `${path} has changed since the date in If-Unmodified-Since; ${then}.`
  }
  // A read fails otherwise on If-Match only: a matching If-None-Match is a 304.
  if (method === 'GET' || method === 'HEAD') return `If-Match does not match the current ETag of ${path}; GET it again and retry with its ETag.`
  if (method === 'DELETE') return `The conditions of If-Match / If-None-Match do not hold for ${path}; GET it again and retry with its ETag.`
  // With If-Match as well, no state can satisfy both.
  if (creates) return `${path} already exists, and If-None-Match: * only creates; send If-Match with its ETag to replace it.`
  if (header === 'If-Match') {
    return method === 'PATCH'
      ? `If-Match does not match the current ETag of ${path}; GET it again, reapply your change and retry with its ETag.`
      : `If-Match does not match the current ETag of ${path}, or it does not exist; GET it again and retry with its ETag.`
  }
  return method === 'PATCH'
    ? `If-None-Match matches the current ETag of ${path}; it was not changed.`
    : `If-None-Match matches the current ETag of ${path}; it was not replaced.`
}
