import { opaqueTags, strongMatch, strongTags, weakMatch } from './entity-tags.js'
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

/**
 * The ETags an existing entity may have for a write to go on, as a condition its statement
 * checks on the row: one of `allowed` (null: any), none of `refused` (null: no such condition).
 */
export interface WritableTags {
  allowed: string[] | null
  refused: string[] | null
}

/**
 * `evaluatePreconditions` for a write of an existing entity decided without reading it: the
 * ETags on which it goes on, If-Match's strong tags and none of If-None-Match's (compared
 * weakly). Null when it goes on at none: If-Match with weak tags only, `If-None-Match: *`.
 * Without If-Match, any ETag: a route that requires it checks that first.
 * test/conditional/writable-tags.test.ts holds the two to the same answers.
 */
export function writableTags (given: Preconditions | null): WritableTags | null {
  const pre = given ?? NONE
  let allowed: string[] | null = null
  if (pre.ifMatch !== null && pre.ifMatch !== '*') {
    allowed = strongTags(pre.ifMatch)
    if (allowed.length === 0) return null
  }
  if (pre.ifNoneMatch === '*') return null
  return { allowed, refused: pre.ifNoneMatch === null ? null : opaqueTags(pre.ifNoneMatch) }
}
