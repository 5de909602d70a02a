import { randomFillSync } from 'node:crypto'
import type { TSchema } from '@sinclair/typebox'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { ForeignKeyViolation, isStoreError, SerializationFailure, UniqueViolation, Unavailable } from '../../../store/errors.js'
import { constraintNames, type ResourceTable, type RowWrite } from '../../../store/table/index.js'
import type { Tx } from '../../../store/types.js'
import { contextFromAjv } from '../../problem/index.js'
import type { ResourceDefinition } from '../define.js'
import { mergePatch } from '../merge-patch.js'
import { compileBodyValidator, fillerOf, type Filler } from '../write-schemas.js'
import { decide, type Rules, type StepKind } from './decide.js'
import type { WriteCall, WriteObserver, WriteOp, WriteResult } from './operations.js'

type Row = Record<string, unknown>

// Random bytes for entity tags, drawn a block at a time: one call into the system's
// generator serves many writes (as Node's own randomUUID does).
const TAG_BYTES = 12
const pool = Buffer.alloc(TAG_BYTES * 256)
let drawn = pool.length

/** A new strong entity tag: opaque, random, quoted as the ETag header carries it. */
export function newEtag (): string {
  if (drawn === pool.length) {
    randomFillSync(pool)
    drawn = 0
  }
  const tag = pool.toString('base64url', drawn, drawn + TAG_BYTES)
  drawn += TAG_BYTES
  return `"${tag}"`
}

/** An operation on its way to the database. */
interface Step {
  result: WriteResult
  kind: StepKind
  /** For an update: the fields it sets (undefined: the writable ones). */
  fields: readonly string[] | undefined
  write: RowWrite
}

/** An action's name in the past tense, as its event names it: publish → published, archive → archived. */
export function pastTense (action: string): string {
  return action.endsWith('e') ? `${action}d` : `${action}ed`
}

/** What a step did to its entity, as an event names it. */
function changeOf (s: Step): string {
  switch (s.kind) {
    case 'insert': return 'created'
    case 'delete':
    case 'mark-deleted': return 'deleted'
    case 'restore': return 'restored'
    case 'update': return s.result.op.action === 'transition' ? pastTense(s.result.op.transition as string) : 'updated'
  }
}

/** Consecutive steps of one kind, so request order is kept (a delete may free a name a later create takes). */
function runsOf (steps: readonly Step[]): Step[][] {
  const runs: Step[][] = []
  for (const s of steps) {
    const last = runs.at(-1)
    const head = last?.[0]
    if (head !== undefined && head.kind === s.kind && String(head.fields) === String(s.fields)) (last as Step[]).push(s)
    else runs.push([s])
  }
  return runs
}

/**
 * The one write path of a resource: every change of its entities (item routes, bulk
 * operations, jobs, webhooks) runs these steps, so a rule added here holds for all of them:
 * 1. the current rows the operations name are read and locked;
 * 2. each operation is decided on them: existence and preconditions (`decide`), a patch
 *    merged and checked against the entity's schema, defaults filled;
 * 3. the writes go to the table, consecutive ones of a kind in one statement;
 * 4. each result carries its row as stored, for the representation.
 * It runs inside the caller's transaction, which the caller commits or rolls back.
 */
export class Writer {
  readonly def: ResourceDefinition
  readonly table: ResourceTable
  private readonly fillAll: Filler
  private readonly fillWritable: Filler
  /** Checks a merged PATCH result like a PUT body. */
  private readonly validateMerged: ValidateFunction
  private readonly rules: Rules
  /** The time a change is made at, for the `'now'` values of transitions; a clock of the caller's in tests. */
  private readonly now: () => Date
  private readonly observers: WriteObserver[] = []

  constructor (def: ResourceDefinition, table: ResourceTable, now: () => Date = () => new Date()) {
    this.def = def
    this.table = table
    this.now = now
    this.rules = { requireIfMatch: def.api.requireIfMatch, softDelete: def.api.softDelete, actions: new Map(def.api.actions.map(a => [a.name, a])) }
    this.fillAll = fillerOf(def.fields)
    this.fillWritable = fillerOf(Object.fromEntries(def.api.writable.map(f => [f, def.fields[f] as TSchema])))
    this.validateMerged = compileBodyValidator(def.api.bodies.create)
  }

  /**
   * Calls `observer` after every run that changed entities, in its transaction (the events
   * plugin writes the run's events there, so they commit exactly when the changes do).
   */
  observe (observer: WriteObserver): void {
    this.observers.push(observer)
  }

  /** Applies `ops` in the transaction `tx`; one result per operation, in order. Throws only on a system failure. */
  async run (tx: Tx, call: WriteCall, ops: readonly WriteOp[]): Promise<WriteResult[]> {
    const results = await this.decideAndApply(tx, call, ops)
    // An atomic run with a failure is rolled back by its caller: nothing happened.
    if (this.observers.length === 0 || (call.atomic && results.some(r => r.failure !== null))) return results
    const changes = results.filter(r => r.change !== null)
    if (changes.length > 0) for (const observer of this.observers) await observer(tx, call, changes)
    return results
  }

  private async decideAndApply (tx: Tx, call: WriteCall, ops: readonly WriteOp[]): Promise<WriteResult[]> {
    const results: WriteResult[] = ops.map(op => ({ op, values: op.values, row: null, failure: null, change: null }))
    // A new entity with a server-made id cannot exist yet: nothing to read for it.
    const named = ops.filter(op => op.action !== 'create' || op.ifNoneMatch !== null).map(op => op.id)
    // A patch merges into the stored fields, and a transition reads the state it starts from.
    const full = ops.some(op => op.action === 'patch' || op.action === 'transition')
    const current = named.length === 0 ? new Map<string, Row>() : await this.table.current(tx, call.ctx, named, full)
    const steps: Step[] = []
    for (const result of results) {
      const step = this.prepare(result, current.get(result.op.id))
      if (step !== null) steps.push(step)
    }
    // Every operation is decided before any is applied, so each failure gets its own reason.
    if (call.atomic && results.some(r => r.failure !== null)) return results
    for (const run of runsOf(steps)) {
      await this.apply(tx, call, run)
      if (call.atomic && run.some(s => s.result.failure !== null)) return results
    }
    return results
  }

  /** Decides one operation; the step to apply, or null when its outcome is known already. */
  private prepare (result: WriteResult, row: Row | undefined): Step | null {
    const { op } = result
    const decision = decide(op, row, this.rules)
    if ('failure' in decision) {
      result.failure = decision.failure
      return null
    }
    if ('nothing' in decision) return null
    let fields: readonly string[] | undefined
    if (op.action === 'patch') {
      const merged = this.fillWritable(mergePatch(this.writableOf(row as Row), op.values) as Row)
      result.values = merged
      if (!this.validateMerged(merged)) {
        result.failure = { kind: 'invalid', items: contextFromAjv(this.validateMerged.errors as ErrorObject[], 'body') }
        return null
      }
    } else if (op.action === 'set') {
      fields = Object.keys(op.values)
    } else if (op.action === 'change') {
      fields = Object.keys(op.values)
      // The fields as a write stores them: defaults and nulls filled, nested ones too.
      result.values = this.fillAll({ ...op.values })
    } else if (op.action === 'transition' && decision.step === 'update') {
      const action = this.rules.actions.get(op.transition as string) as NonNullable<ReturnType<Rules['actions']['get']>>
      const at = this.now().toISOString()
      result.values = { [action.field]: action.to }
      for (const [f, v] of Object.entries(action.set)) result.values[f] = v === 'now' ? at : v
      fields = Object.keys(result.values)
    } else if (op.action === 'transition') {
      // Restoring: what a unique value taken meanwhile is named by.
      result.values = { ...row }
    } else if (op.action !== 'delete') {
      result.values = this.fillAll({ ...op.values })
    }
    return { result, kind: decision.step, fields, write: { id: op.id, etag: newEtag(), values: result.values } }
  }

  /** The writable fields of a stored row, as a merge patch's target. */
  private writableOf (row: Row): Row {
    const out: Row = {}
    for (const f of this.def.api.writable) out[f] = row[f]
    return out
  }

  private async batch (tx: Tx, call: WriteCall, run: readonly Step[]): Promise<void> {
    const head = run[0] as Step
    const scope = { ctx: call.ctx, by: call.by }
    const writes = run.map(s => s.write)
    let rows: Row[]
    switch (head.kind) {
      case 'insert': rows = await this.table.insert(tx, scope, writes); break
      case 'update': rows = await this.table.update(tx, scope, writes, head.fields); break
      case 'delete': rows = await this.table.delete(tx, call.ctx, writes.map(w => w.id)); break
      case 'mark-deleted': rows = await this.table.markDeleted(tx, scope, writes); break
      case 'restore': rows = await this.table.restore(tx, scope, writes); break
    }
    const byId = new Map(rows.map(r => [r.id as string, r]))
    for (const s of run) {
      s.result.row = byId.get(s.write.id) ?? null
      s.result.change = s.result.row === null ? null : changeOf(s)
    }
  }

  /**
   * Applies a run: a run of several steps in one statement first, inside a savepoint; if that
   * breaks a constraint, the savepoint undoes it and the steps run one by one to find which
   * fail. Not atomic, each gets its own savepoint, so a failure undoes only its own statement
   * (without one, PostgreSQL aborts the whole transaction at the first error); atomic, it
   * stops at the first failure, since everything is rolled back then anyway.
   */
  private async apply (tx: Tx, call: WriteCall, run: readonly Step[]): Promise<void> {
    if (run.length > 1) {
      try {
        await tx.savepoint(async (db) => { await this.batch(db, call, run) })
        return
      } catch (err) {
        // An unreachable database is no constraint to find: no point in trying each step.
        if (!isStoreError(err) || err instanceof Unavailable) throw err
      }
    }
    for (const s of run) {
      try {
        if (call.atomic) await this.batch(tx, call, [s])
        else await tx.savepoint(async (db) => { await this.batch(db, call, [s]) })
      } catch (err) {
        // The whole transaction runs again (store retries), not just this operation: a deadlock
        // victim's other statements are undone too.
        if (err instanceof SerializationFailure) throw err
        if (this.lostInsertRace(s, err)) throw new SerializationFailure({ sqlState: '40001', cause: err })
        if (!(err instanceof UniqueViolation) && !(err instanceof ForeignKeyViolation)) throw err
        s.result.failure = { kind: 'conflict', error: err }
        if (call.atomic) return
      }
    }
  }

  /**
   * An insert of a named id that found no row and then could not insert one: a concurrent
   * request created that id since the read. Run again, the transaction finds the row and
   * decides on it, as the operation would have had it come second.
   */
  private lostInsertRace (s: Step, err: unknown): boolean {
    return s.kind === 'insert' && err instanceof UniqueViolation && err.constraint === constraintNames.primaryKey(this.def.storage.table)
  }
}
