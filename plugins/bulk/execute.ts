import { randomUUID } from 'node:crypto'
import { isStoreError, SerializationFailure, UniqueViolation, Unavailable } from '../../store/errors.js'
import type { Queryable, Store, Tx } from '../../store/types.js'
import { strongMatch } from '../conditional/entity-tags.js'
import { replayStatus, type IdempotencyClaim, type IdempotencyKeys } from '../idempotency/keys.js'
import { problems } from '../problem/errors.js'
import type { ResourceDefinition } from '../resource/define.js'
import type { Registry } from '../resource/errors.js'
import type { Repository, Write } from '../resource/repository.js'
import { constraintNames } from '../resource/columns.js'
import { newEtag } from '../resource/routes.js'
import { notFound, preconditionFailed, preconditionRequired, rolledBack, storeFailure, succeeded, type Operation, type Outcome } from './outcome.js'
import type { BatchStatements } from './statements.js'

/** What the bulk endpoint of one resource works with, built once at registration. */
export interface BulkTarget {
  def: ResourceDefinition
  store: Store
  repo: Repository
  batch: BatchStatements
  keys: IdempotencyKeys
  registry: Registry
}

/** Who asks, and how. */
export interface BulkCall {
  /** Execution context: every statement is scoped by it. */
  ctx: string
  /** The token's `sub`, written to createdBy / modifiedBy. */
  by: string | null
  atomic: boolean
  /** The `Svc-Idempotency-Key` claim, or null without a key. */
  claim: IdempotencyClaim | null
}

type Kind = 'insert' | 'update' | 'delete'

/** An operation the database has to apply. */
interface Step {
  op: Operation
  kind: Kind
  etag: string
}

/**
 * Runs of a bulk transaction after a deadlock or a lost insert race (two requests locking
 * rows in different orders, or creating one id at once): the later run sees the winner's rows.
 */
const SERIALIZATION_RETRIES = 3

/** Ends the transaction without keeping anything; never leaves `execute`. */
class Rollback extends Error {}

const isFailed = (op: Operation): boolean => op.outcome?.status === 'FAILED'

function settle (op: Operation, outcome: Outcome): null {
  op.outcome = outcome
  return null
}

/**
 * Decides an operation from the current ETag of its entity (`current`, read and locked by
 * the prefetch): what the database must do, or null when the outcome is already known.
 */
function decide (def: ResourceDefinition, op: Operation, current: ReadonlyMap<string, string>): Kind | null {
  if (op.action === 'CREATE') {
    op.id = randomUUID()
    return 'insert'
  }
  const etag = current.get(op.id as string)
  if (etag === undefined) {
    if (op.action === 'UPDATE') return settle(op, notFound(def, op))
    // As DELETE on an item: deleting what does not exist succeeds (Method rules 10).
    if (op.action === 'DELETE') return settle(op, succeeded(`No ${def.name} had this id; there was nothing to delete.`))
    // CREATE_UPDATE of a new id: a PUT that creates; an ETag cannot match what does not exist.
    return op.ifMatch === null ? 'insert' : settle(op, preconditionFailed(def, op, false))
  }
  if (op.ifMatch === null) {
    // UPDATE and DELETE without a required ifMatch were refused before any read.
    if (def.requireIfMatch) return settle(op, preconditionRequired(def, op))
  } else if (!strongMatch(op.ifMatch, etag)) {
    return settle(op, preconditionFailed(def, op, true))
  }
  return op.action === 'DELETE' ? 'delete' : 'update'
}

/** Consecutive steps of one kind, so request order is kept (a delete may free a name a later create takes). */
function runsOf (steps: readonly Step[]): Step[][] {
  const runs: Step[][] = []
  for (const s of steps) {
    const last = runs.at(-1)
    if (last !== undefined && (last[0] as Step).kind === s.kind) last.push(s)
    else runs.push([s])
  }
  return runs
}

async function batch (t: BulkTarget, call: BulkCall, db: Queryable, run: readonly Step[]): Promise<void> {
  const kind = (run[0] as Step).kind
  if (kind === 'delete') {
    await t.batch.delete(db, call.ctx, run.map(s => s.op.id as string))
    return
  }
  const rows = run.map(s => ({ id: s.op.id as string, etag: s.etag, values: s.op.values }))
  if (kind === 'insert') await t.batch.insert(db, call.ctx, call.by, rows)
  else await t.batch.update(db, call.ctx, call.by, rows)
}

/**
 * One operation with the single-item routes' statements. The rows of UPDATE and DELETE are
 * locked by the prefetch, so these statements find them: their results need no check.
 */
async function single (t: BulkTarget, call: BulkCall, db: Queryable, s: Step): Promise<void> {
  const id = s.op.id as string
  const w: Write = { ctx: call.ctx, id, etag: s.etag, by: call.by, values: s.op.values }
  if (s.kind === 'insert') await t.repo.insert(db, w)
  else if (s.kind === 'update') await t.repo.update(db, w, {}, 'writable')
  else await t.repo.delete(db, call.ctx, id)
}

/**
 * Applies a run: a run of several steps in one statement first, inside a savepoint; if that
 * breaks a constraint, the savepoint undoes it and the steps run one by one to find which
 * fail. ISOLATED gives each its own savepoint, so a failure undoes only its own statement
 * (without one, PostgreSQL aborts the whole transaction at the first error); ATOMIC stops
 * at the first failure, since everything is rolled back then anyway.
 */
async function apply (t: BulkTarget, call: BulkCall, tx: Tx, run: readonly Step[]): Promise<void> {
  if (run.length > 1) {
    try {
      await tx.savepoint(async (db) => { await batch(t, call, db, run) })
      for (const s of run) s.op.outcome = succeeded()
      return
    } catch (err) {
      // An unreachable database is no constraint to find: no point in trying each step.
      if (!isStoreError(err) || err instanceof Unavailable) throw err
    }
  }
  for (const s of run) {
    try {
      if (call.atomic) await single(t, call, tx, s)
      else await tx.savepoint(async (db) => { await single(t, call, db, s) })
      s.op.outcome = succeeded()
    } catch (err) {
      // The whole transaction runs again (store retries), not just this operation: a deadlock
      // victim's other statements are undone too.
      if (err instanceof SerializationFailure) throw err
      if (lostInsertRace(t, s, err)) throw new SerializationFailure({ sqlState: '40001', cause: err })
      s.op.outcome = storeFailure(err, t.def, s.op, t.registry)
      if (call.atomic) return
    }
  }
}

/**
 * A CREATE_UPDATE that found no row and then could not insert one: a concurrent request
 * created that id since the prefetch. Run again, the transaction finds the row and updates
 * it (or answers its precondition), as the operation would have had it come second.
 */
function lostInsertRace (t: BulkTarget, s: Step, err: unknown): boolean {
  return s.op.action === 'CREATE_UPDATE' && s.kind === 'insert' && err instanceof UniqueViolation && err.constraint === constraintNames.primaryKey(t.def.table)
}

/**
 * Claims the key with the change it guards. The bulk endpoint is not idempotent
 * (conventions: "Bulk endpoint"), so a key used before gets 409 (Svc-Idempotency-Key: "a
 * non-idempotent action returns 409"), never a second run.
 */
async function claimKey (keys: IdempotencyKeys, tx: Tx, claim: IdempotencyClaim): Promise<void> {
  const record = await keys.claim(tx, claim)
  if (record === null) return
  // Another method, path or body: the idempotency plugin's own 409 says which.
  replayStatus(record, claim)
  throw problems.conflict('The Svc-Idempotency-Key was already used for this bulk request; a bulk PATCH is not idempotent, so it is not run again. Send a new key to run it again.', { instance: claim.target })
}

async function run (t: BulkTarget, call: BulkCall, tx: Tx, pending: readonly Operation[]): Promise<void> {
  // A run again after a serialization failure starts from nothing decided.
  for (const op of pending) op.outcome = null
  if (call.claim !== null) await claimKey(t.keys, tx, call.claim)
  const ids = pending.filter(op => op.action !== 'CREATE').map(op => op.id as string)
  const current = ids.length === 0 ? new Map<string, string>() : await t.batch.prefetch(tx, call.ctx, ids)
  const steps: Step[] = []
  for (const op of pending) {
    const kind = decide(t.def, op, current)
    if (kind !== null) steps.push({ op, kind, etag: newEtag() })
  }
  if (call.atomic && pending.some(isFailed)) return
  for (const r of runsOf(steps)) {
    await apply(t, call, tx, r)
    if (call.atomic && r.some(s => isFailed(s.op))) return
  }
}

/**
 * Runs the prepared operations in ONE transaction (conventions: "Bulk endpoint"). ATOMIC
 * commits only when every operation succeeded. ISOLATED commits the operations that
 * succeeded, each isolated by a savepoint; one transaction rather than one per operation
 * costs one BEGIN/COMMIT and one connection, and a system failure half-way (answered with
 * a 5xx) then leaves nothing stored instead of successes nobody was told about. Rows the
 * operations change are locked for the transaction's length (at most `maxOperations`
 * statements). Sets every operation's outcome; throws only on a system failure.
 */
export async function execute (t: BulkTarget, call: BulkCall, ops: readonly Operation[]): Promise<void> {
  const pending = ops.filter(op => op.outcome === null)
  // ATOMIC with an invalid operation: nothing to try.
  if (pending.length > 0 && !(call.atomic && pending.length < ops.length)) {
    try {
      await t.store.transaction(async (tx) => {
        await run(t, call, tx, pending)
        // ATOMIC keeps all or nothing. ISOLATED without any success keeps nothing either,
        // so its idempotency key stays free, as after any request that changed nothing.
        const kept = call.atomic ? !ops.some(isFailed) : ops.some(op => op.outcome?.status === 'SUCCEEDED')
        if (!kept) throw new Rollback()
      }, { retries: SERIALIZATION_RETRIES })
    } catch (err) {
      if (!(err instanceof Rollback)) throw err
    }
  }
  if (!call.atomic) return
  const failures = ops.filter(isFailed).map(op => op.index)
  if (failures.length === 0) return
  for (const op of ops) if (!isFailed(op)) op.outcome = rolledBack(failures)
}
