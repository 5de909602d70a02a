import { strongMatch, weakMatch } from '../../conditional/index.js'
import type { Failure, WriteOp } from './operations.js'

/** What the database must do for an operation. */
export type StepKind = 'insert' | 'update' | 'delete'

/** An operation decided: a step to apply, a failure, or nothing to do (deleting what is not there). */
export type Decision = { step: StepKind } | { failure: Failure } | { nothing: true }

/**
 * Decides an operation from the current ETag of its entity (`etag`, read and locked by the
 * write path; undefined when the entity does not exist): existence and preconditions
 * (RFC 9110 §13.1.1, §13.1.2; conventions: Method rules 8 to 10 and 13), the same for
 * every channel.
 */
export function decide (op: WriteOp, etag: string | undefined, requireIfMatch: boolean): Decision {
  if (etag === undefined) {
    switch (op.action) {
      case 'update':
      case 'patch':
      case 'set':
        return { failure: { kind: 'not-found' } }
      // Deleting what does not exist succeeds (Method rules 10: a repeated delete is 204).
      case 'delete':
        return { nothing: true }
    }
    // create, put: an ETag cannot match what does not exist.
    if (op.ifMatch !== null) return { failure: { kind: 'precondition-failed', header: 'If-Match', exists: false } }
    return { step: 'insert' }
  }
  if (op.action === 'create') return { failure: { kind: 'precondition-failed', header: 'If-None-Match', exists: true } }
  if (op.ifMatch === null) {
    // Method rules 13: a write of an existing entity that needs its ETag.
    if (requireIfMatch && op.action !== 'set') return { failure: { kind: 'precondition-required' } }
  } else if (!strongMatch(op.ifMatch, etag)) {
    return { failure: { kind: 'precondition-failed', header: 'If-Match', exists: true } }
  }
  if (op.ifNoneMatch !== null && weakMatch(op.ifNoneMatch, etag)) {
    return { failure: { kind: 'precondition-failed', header: 'If-None-Match', exists: true } }
  }
  return { step: op.action === 'delete' ? 'delete' : 'update' }
}
