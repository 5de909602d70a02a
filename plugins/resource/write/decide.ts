import { evaluatePreconditions } from '../../conditional/index.js'
import type { Action } from '../definition/options.js'
import type { Failure, WriteOp } from './operations.js'

type Row = Record<string, unknown>

/** What the database must do for an operation. */
export type StepKind = 'insert' | 'update' | 'delete' | 'mark-deleted' | 'restore'

/** An operation decided: a step to apply, a failure, or nothing to do (deleting what is not there). */
export type Decision = { step: StepKind } | { failure: Failure } | { nothing: true }

/** What of a resource's definition the decisions depend on. */
export interface Rules {
  requireIfMatch: boolean
  softDelete: boolean
  actions: ReadonlyMap<string, Action>
}

/**
 * Decides an operation from the current row of its entity (read and locked by the write path;
 * undefined when the entity does not exist): existence, preconditions (RFC 9110 §13.1.1,
 * §13.1.2; conventions: Method rules 8 to 10 and 13), soft deletion and state transitions,
 * the same for every channel.
 */
export function decide (op: WriteOp, row: Row | undefined, rules: Rules): Decision {
  if (row === undefined) {
    switch (op.action) {
      case 'create':
      case 'put': {
        // An ETag cannot match what does not exist.
        const verdict = evaluatePreconditions(op, null)
        return verdict.kind === 'proceed' ? { step: 'insert' } : { failure: verdict as Failure }
      }
      // Deleting what does not exist succeeds (Method rules 10: a repeated delete is 204).
      case 'delete':
        return { nothing: true }
      default:
        return { failure: { kind: 'not-found' } }
    }
  }
  if (op.action === 'create') return { failure: { kind: 'precondition-failed', header: 'If-None-Match', exists: true } }
  const deleted = rules.softDelete && row.deletedDateTime !== null && row.deletedDateTime !== undefined
  // Deleting it again changes nothing, whatever its conditions, as deleting what does not
  // exist (reference contract, soft delete: "Deleting it again: 204").
  if (op.action === 'delete' && deleted) return { nothing: true }
  // Method rules 13 asks a client's write for the ETag; the server's own (`set`) and an action
  // (which honours If-Match, reference contract) need none.
  const requireIfMatch = rules.requireIfMatch && op.action !== 'set' && op.action !== 'transition'
  const verdict = evaluatePreconditions(op, row.etag as string, { requireIfMatch }, lastChanged(row))
  if (verdict.kind !== 'proceed') return { failure: verdict as Failure }
  switch (op.action) {
    case 'delete':
      return rules.softDelete ? { step: 'mark-deleted' } : { step: 'delete' }
    case 'set':
      return { step: 'update' }
    case 'transition':
      return transition(op, row, rules, deleted)
    default:
      // put, update, patch, change: a deleted entity is restored first.
      return deleted ? { failure: { kind: 'deleted' } } : { step: 'update' }
  }
}

/**
 * When the entity last changed, as If-Unmodified-Since compares it: its `modifiedDateTime`, or
 * its `deletedDateTime` when later (a soft delete leaves the first as it was). Both are ISO
 * date-times in UTC, whose text orders as their times do.
 */
export function lastChanged (row: Row): string {
  const modified = row.modifiedDateTime as string
  const deleted = row.deletedDateTime
  return typeof deleted === 'string' && deleted > modified ? deleted : modified
}

function transition (op: WriteOp, row: Row, rules: Rules, deleted: boolean): Decision {
  const action = rules.actions.get(op.transition as string) as Action
  if (action.name === 'restore') {
    return deleted ? { step: 'restore' } : { failure: { kind: 'invalid-transition', action: action.name, current: null, allowed: [] } }
  }
  if (deleted) return { failure: { kind: 'deleted' } }
  const current = row[action.field] as string | null
  if (current === null || !action.from.includes(current)) {
    return { failure: { kind: 'invalid-transition', action: action.name, current, allowed: action.from } }
  }
  return { step: 'update' }
}
