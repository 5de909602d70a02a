import type { ContextItem } from '../../../schemas/problem.js'
import type { EntityTagList, PreconditionHeader } from '../../conditional/index.js'
import type { AttachedPart, OutboxPart, QuietPart } from '../../../store/statement-parts.js'

type Row = Record<string, unknown>

/**
 * What a write does to one entity, whoever asks (an item route, a bulk operation, a job, a
 * webhook):
 * - `create`: a new entity with this id; fails when the id exists (a PUT with
 *   `If-None-Match: *`, or a new server id);
 * - `put`: replaces the entity, or creates it with this id (PUT, bulk CREATE_UPDATE);
 * - `update`: replaces an existing entity (bulk UPDATE);
 * - `patch`: applies a JSON Merge Patch to an existing entity (PATCH);
 * - `change`: replaces the given fields of an existing entity under the client's conditions
 *   (PUT on a sub-collection; a file's read-only description when the file is uploaded);
 * - `transition`: moves an existing entity along one of its actions (POST `<item>/<action>`);
 * - `delete`: deletes it, or marks it deleted when soft-deletable; nothing to do when it does
 *   not exist (DELETE);
 * - `set`: the server sets stored fields of an existing entity, read-only ones included
 *   (a webhook recording what a producer reports).
 */
export type WriteAction = 'create' | 'put' | 'update' | 'patch' | 'change' | 'transition' | 'delete' | 'set'

export interface WriteOp {
  action: WriteAction
  id: string
  /**
   * `create`, `put`, `update`: the entity's writable fields as sent (defaults are filled by
   * the write path); `patch`: the merge patch; `change`, `set`: the fields to set;
   * `transition`, `delete`: unused.
   */
  values: Row
  /** The action's name, for a `transition`. */
  transition?: string
  /** Strong comparison with the current ETag (RFC 9110 §13.1.1); null when not sent. */
  ifMatch: EntityTagList | null
  /** Weak comparison with the current ETag (RFC 9110 §13.1.2); `*`: must not exist. */
  ifNoneMatch: EntityTagList | null
  /** Not changed after this time (ms, RFC 9110 §13.1.4), when If-Match is not sent; null or left out: no condition. */
  ifUnmodifiedSince?: number | null
  /**
   * The ETag the write gives the entity, when its caller must know it before the write (an
   * idempotency key keeps the answer's ETag for its retries); default a new one.
   */
  etag?: string
  /** A write of another table that goes with this one, in its statement (a file's bytes with its description). */
  attached?: AttachedPart
}

/** Why an operation was not applied; each caller words it for its own channel. */
export type Failure =
  /** `update`, `patch`, `set` of an entity that does not exist. */
  | { kind: 'not-found' }
  /** A precondition does not hold; `exists` says whether the entity does. */
  | { kind: 'precondition-failed', header: PreconditionHeader, exists: boolean }
  /** The entity requires `If-Match` (`requireIfMatch`) and exists. */
  | { kind: 'precondition-required' }
  /** The entity would break its schema after a patch. */
  | { kind: 'invalid', items: ContextItem[] }
  /** The entity is soft-deleted: it must be restored before it changes. */
  | { kind: 'deleted' }
  /** The action does not apply from the entity's current state (`current` null for restore: it is not deleted). */
  | { kind: 'invalid-transition', action: string, current: string | null, allowed: readonly string[] }
  /** The database refused the change (a unique value, a reference, children): the store's error. */
  | { kind: 'conflict', error: unknown }

export interface WriteResult {
  op: WriteOp
  /** The stored values the write used (defaults filled, a patch merged): what a conflict names. */
  values: Row
  /**
   * The entity's row after the write (as it was, for a delete); null when nothing was written.
   * Its `id` and `etag` alone when the write was asked for no more (`Writer.one`, `returning`).
   */
  row: Row | null
  failure: Failure | null
  /**
   * What happened to the entity, as an event names it (`created`, `updated`, `deleted`,
   * `restored`, or an action's past tense such as `published`); null when nothing was written.
   */
  change: string | null
}

/** Who writes, where, and how failures end a run of several operations. */
export interface WriteCall {
  /** Execution context: every statement is scoped by it. */
  ctx: string
  /** The token's `sub`, written to createdBy / modifiedBy; null without one. */
  by: string | null
  /**
   * All or nothing: the run stops at the first failure, and the caller rolls back. Otherwise
   * each operation is isolated by a savepoint, so one failure undoes only its own statement.
   */
  atomic: boolean
  /** The requestId of the request that asked for the change (a job's: the request that created it); events carry it. */
  requestId?: string | null
}

/**
 * Where a resource's changes go as events (the events plugin): each write statement adds its
 * own outbox rows, so they commit exactly when the changes do.
 */
export interface WriteOutbox {
  /**
   * The outbox part of a statement writing changes of `type` (e.g. `document.created`).
   * `committing`: the statement commits by itself (no transaction around it); its deliveries
   * are then announced by `written`, else by the statement when its transaction commits.
   * `replaced`: for an upsert, the event of a row it replaces (`type` that of a row it creates).
   */
  part: (type: string, call: WriteCall, committing: boolean, replaced?: string) => OutboxPart
  /**
   * In place of the outbox part, for a write of one entity: the check that no subscription of
   * the call's execution context wants `type`, while none was found to (`heard`); else null.
   */
  quiet: (type: string, call: WriteCall) => QuietPart | null
  /** Told whether a write of `type` found a subscription of the call's context that wants it. */
  heard: (type: string, call: WriteCall, wanted: boolean) => void
  /** Told how many deliveries a statement wrote, once it answered; `committed` as `part`'s `committing`. */
  written: (count: number, committed: boolean) => void
}
