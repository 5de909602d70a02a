import { strongMatch, weakMatch } from './entity-tags.js'
import type { Preconditions } from './index.js'

/**
 * What a request's preconditions say about the representation it targets (RFC 9110 §13.2.2;
 * conventions: Method rules 1 and 13): go on, answer 304 (a read only), 412 naming the header
 * that failed, or 428 (a write of an existing entity that must send If-Match and did not).
 */
export type PreconditionVerdict =
  | { kind: 'proceed' }
  | { kind: 'not-modified' }
  | { kind: 'precondition-failed', header: 'If-Match' | 'If-None-Match', exists: boolean }
  | { kind: 'precondition-required' }

export interface PreconditionRules {
  /** GET or HEAD: a matching If-None-Match is a 304, not a 412. */
  read?: boolean
  /** Method rules 13: an existing entity is written only with If-Match. */
  requireIfMatch?: boolean
}

const NONE: Preconditions = Object.freeze({ ifMatch: null, ifNoneMatch: null })
const PROCEED: PreconditionVerdict = Object.freeze({ kind: 'proceed' })
const NOT_MODIFIED: PreconditionVerdict = Object.freeze({ kind: 'not-modified' })
const REQUIRED: PreconditionVerdict = Object.freeze({ kind: 'precondition-required' })

/**
 * The one decision on If-Match and If-None-Match, for every route that has an ETag to compare:
 * resources (items, bulk operations), the GET conditional and webhook subscriptions. `etag` is
 * the current one, or null when nothing exists: no tag matches it, `*` included, and creating
 * it needs no If-Match. If-Match is evaluated first, as §13.2.2 orders.
 */
export function evaluatePreconditions (given: Preconditions | null, etag: string | null, rules: PreconditionRules = {}): PreconditionVerdict {
  const pre = given ?? NONE
  if (etag === null) {
    return pre.ifMatch !== null ? { kind: 'precondition-failed', header: 'If-Match', exists: false } : PROCEED
  }
  if (pre.ifMatch === null) {
    if (rules.requireIfMatch === true) return REQUIRED
  } else if (!strongMatch(pre.ifMatch, etag)) {
    return { kind: 'precondition-failed', header: 'If-Match', exists: true }
  }
  if (pre.ifNoneMatch !== null && weakMatch(pre.ifNoneMatch, etag)) {
    return rules.read === true ? NOT_MODIFIED : { kind: 'precondition-failed', header: 'If-None-Match', exists: true }
  }
  return PROCEED
}
