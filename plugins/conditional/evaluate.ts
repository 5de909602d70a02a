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
  | { kind: 'precondition-failed', header: PreconditionHeader, exists: boolean }
  | { kind: 'precondition-required' }

/** The request header whose condition failed, as a 412 names it. */
export type PreconditionHeader = 'If-Match' | 'If-None-Match' | 'If-Unmodified-Since'

export interface PreconditionRules {
  /** GET or HEAD: a matching If-None-Match is a 304, not a 412. */
  read?: boolean
  /** Method rules 13: an existing entity is written only with If-Match. */
  requireIfMatch?: boolean
}

const NONE: Preconditions = Object.freeze({ ifMatch: null, ifNoneMatch: null, ifUnmodifiedSince: null })
const PROCEED: PreconditionVerdict = Object.freeze({ kind: 'proceed' })
const NOT_MODIFIED: PreconditionVerdict = Object.freeze({ kind: 'not-modified' })
const REQUIRED: PreconditionVerdict = Object.freeze({ kind: 'precondition-required' })

/**
 * The one decision on If-Match, If-Unmodified-Since and If-None-Match, for every route that
 * has an ETag to compare: resources (items, bulk operations), the GET conditional and webhook
 * subscriptions. `etag` is the current one, or null when nothing exists: no tag matches it,
 * `*` included, and creating it needs no If-Match. `modified` is when it last changed (an ISO
 * date-time or a Date); without one, If-Unmodified-Since is ignored (§13.1.4), as it is when
 * nothing exists or If-Match was sent. The order is §13.2.2's: If-Match, else
 * If-Unmodified-Since, then If-None-Match.
 */
export function evaluatePreconditions (given: Preconditions | null, etag: string | null, rules: PreconditionRules = {}, modified?: string | Date): PreconditionVerdict {
  const pre = given ?? NONE
  if (etag === null) {
    return pre.ifMatch !== null ? { kind: 'precondition-failed', header: 'If-Match', exists: false } : PROCEED
  }
  if (pre.ifMatch === null) {
    if (rules.requireIfMatch === true) return REQUIRED
    if (modifiedSince(pre, modified)) return { kind: 'precondition-failed', header: 'If-Unmodified-Since', exists: true }
  } else if (!strongMatch(pre.ifMatch, etag)) {
    return { kind: 'precondition-failed', header: 'If-Match', exists: true }
  }
  if (pre.ifNoneMatch !== null && weakMatch(pre.ifNoneMatch, etag)) {
    return rules.read === true ? NOT_MODIFIED : { kind: 'precondition-failed', header: 'If-None-Match', exists: true }
  }
  return PROCEED
}

/**
 * Whether If-Unmodified-Since fails: the entity changed after its date, compared to the second
 * (an HTTP date has no finer unit, so a change within the named second has not happened "since").
 */
function modifiedSince (pre: Preconditions, modified: string | Date | undefined): boolean {
  const since = pre.ifUnmodifiedSince ?? null
  if (since === null || modified === undefined) return false
  const at = typeof modified === 'string' ? Date.parse(modified) : modified.getTime()
  return Math.floor(at / 1000) * 1000 > since
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
 * weakly). Null when tags alone cannot let it go on, so that the write is decided on the
 * entity as read: it goes on at none (If-Match with weak tags only, `If-None-Match: *`), or
 * If-Unmodified-Since is to be evaluated (no If-Match), which needs the modification date.
 * Without If-Match, any ETag: a route that requires it checks that first.
 * test/conditional/writable-tags.test.ts holds the two to the same answers.
 */
export function writableTags (given: Preconditions | null): WritableTags | null {
  const pre = given ?? NONE
  if (pre.ifMatch === null && (pre.ifUnmodifiedSince ?? null) !== null) return null
  let allowed: string[] | null = null
  if (pre.ifMatch !== null && pre.ifMatch !== '*') {
    allowed = strongTags(pre.ifMatch)
    if (allowed.length === 0) return null
  }
  if (pre.ifNoneMatch === '*') return null
  return { allowed, refused: pre.ifNoneMatch === null ? null : opaqueTags(pre.ifNoneMatch) }
}
