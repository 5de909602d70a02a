import { randomFillSync } from 'node:crypto'
import type { TSchema } from '@sinclair/typebox'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { ForeignKeyViolation, isStoreError, SerializationFailure, UniqueViolation, Unavailable } from '../../../store/errors.js'
import { bothQuiet, HELD, type OutboxPart, type QuietPart, type WriteClaim } from '../../../store/statement-parts.js'
import { constraintNames, type Guard, type ResourceTable, type Returning, type TableWrite, type WriteOutcome, type WriteStatement } from '../../../store/table/index.js'
import type { Store, Tx } from '../../../store/types.js'
import { contextFromAjv } from '../../problem/index.js'
import type { ResourceDefinition } from '../define.js'
import { mergePatch } from '../merge-patch.js'
import { compileBodyValidator, fillerOf, type Filler } from '../write-schemas.js'
import { blindGuard } from './blind.js'
import { decide, type Rules } from './decide.js'
import { changeOf, runsInOrder, runsOf, touchesUnique, type Kind, type Step } from './runs.js'
import { WRITE_RETRIES } from '../../idempotency/internal.js'
import type { WriteCall, WriteOp, WriteOutbox, WriteResult } from './operations.js'

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

/** A failed operation of a transaction that rolls back (`Writer.locked`): its result, for the caller. */
class Undone extends Error {
  readonly result: WriteResult
  constructor (result: WriteResult) {
    super('undone')
    this.result = result
  }
}

/**
 * A statement of a plan's run, guarded by the ETags its rows were decided on, wrote fewer rows
 * than it was made for: one of them changed since it was read (`Writer.execute`).
 */
class Overtaken extends Error {
  constructor () {
    super('overtaken')
  }
}

/** An atomic plan's operation failed: its savepoint is rolled back (the failure may have aborted the transaction). */
class Stopped extends Error {
  constructor () {
    super('stopped')
  }
}

/** How a step's statement ended (Writer.attempt). */
type Attempt = { stored: Row } | { refused: unknown } | { replay: true } | { current: Row | null }

/** The guard of a write decided on the row as read. */
const SEEN: Guard = { by: 'seen' }

/** The guard of a write of rows decided as read, all of them or none. */
const ALL_SEEN: Guard = { by: 'seen', all: true }

/** What a statement writing one entity adds to its run's (Writer.attempt). */
type OneWrite = Required<Pick<TableWrite, 'guard' | 'claim' | 'current' | 'returning'>>

/** Steps written by one statement (`runsOf`), made ahead when their plan could (`Writer.plan`). */
interface PlannedRun {
  steps: Step[]
  statement: WriteStatement | null
}

/**
 * Operations of a transaction decided before it opens (`Writer.plan`, `Writer.planRead`), to be
 * run in it (`Writer.execute`).
 */
export interface WritePlan {
  readonly call: WriteCall
  readonly returning: Returning
  readonly results: WriteResult[]
  /**
   * Each operation's step as decided ahead (null: its outcome is known), or undefined: decided
   * in the transaction, on its row. One decided on its row as read first (`rows`) is decided
   * again in the transaction when that row moved on since.
   */
  readonly decided: ReadonlyArray<Step | null | undefined>
  /** The rows the operations on existing entities were decided on (`Writer.planRead`), by id; null when they were not. */
  readonly rows: ReadonlyMap<string, Row> | null
  /** No entity is named twice. */
  readonly distinct: boolean
  /** When every operation was decided ahead: its runs, with their statements. */
  readonly runs: readonly PlannedRun[] | null
  /** Its runs gather the steps of a kind out of request order (`runsOf`). */
  readonly gathered: boolean
  /**
   * Every entity the operations name was read first (`rows`) and is written by a statement
   * guarded by the ETag it was decided on, no entity twice (`alone` may then send it as one
   * statement); on the embedded store, `execute` then needs no locked read.
   */
  readonly unlocked: boolean
  /** The store's transactions never overlap (the embedded store's one connection). */
  readonly lockFree: boolean
}

/** The steps of a plan decided whole, in request order. */
function decidedSteps (plan: WritePlan): Step[] {
  return plan.decided.filter(s => s != null)
}

/** A step decided on `row`, read without a lock: its write applies only while the row is still at that ETag. */
function seenOn (step: Step | null, row: Row | undefined): Step | null {
  if (step !== null && row !== undefined) step.write.seen = row.etag as string
  return step
}

/** Whether a run's steps were decided on rows read without a lock (`seenOn`): its statement is guarded by their ETags. */
function guarded (run: readonly Step[]): boolean {
  return run.every(s => s.write.seen !== undefined)
}

/** Whether an operation is decided on its entity as stored: all but a new entity with a server-made id, which cannot exist yet. */
function readsRow (op: WriteOp): boolean {
  return op.action !== 'create' || op.ifNoneMatch !== null
}

/**
 * The ids of the operations decided on their rows, and whether any needs each row whole: a
 * patch merges into the stored fields, a transition reads the state it starts from.
 */
function rowsNamed (ops: readonly WriteOp[]): { ids: string[], full: boolean } {
  const ids: string[] = []
  let full = false
  for (const op of ops) {
    if (!readsRow(op)) continue
    ids.push(op.id)
    full ||= op.action === 'patch' || op.action === 'transition'
  }
  return { ids, full }
}

/**
 * What a run's statement answers. With `'etag'`, its count alone where that says which rows it
 * wrote, each with the id and ETag its step gave it, so the database sends no row back: an
 * insert writes every row or fails; an update, a deletion mark or a restore writes every row
 * it names, locked and decided on, unless an earlier statement of the plan removed one, which
 * only a plan naming an entity twice can do (`distinct` false). A deletion answers its rows: a
 * row removed keeps the ETag it had.
 */
function returningOf (run: readonly Step[], { returning, distinct }: Pick<WritePlan, 'returning' | 'distinct'>): Returning {
  if (returning !== 'etag') return returning
  const { kind } = run[0] as Step
  return kind === 'insert' || (distinct && kind !== 'delete') ? 'count' : returning
}

/** What a step's result holds once its statement wrote its row as the step made it: the row's id and ETag. */
function writtenAsMade (s: Step): Pick<WriteResult, 'row' | 'change'> {
  return { row: { id: s.write.id, etag: s.write.etag }, change: changeOf(s) }
}

/**
 * The one write path of a resource: every change of its entities (item routes, bulk
 * operations, jobs, webhooks) runs these steps, so a rule added here holds for all of them:
 * 1. the current rows the operations name are read;
 * 2. each operation is decided on them: existence and preconditions (`decide`), a patch
 *    merged and checked against the entity's schema, defaults filled;
 * 3. the writes go to the table, those of a kind in one statement (`runsOf`), which also
 *    writes their events to the outbox (`emitTo`);
 * 4. each result carries its row as stored, for the representation.
 * `run` does it in the caller's transaction, the rows locked when read. `one` writes one
 * entity with no transaction of its own: the rows are read without a lock, and the write,
 * its idempotency claim and its outbox rows go in one statement that applies only while the
 * entity is still as read; otherwise the operation is decided again.
 */
export class Writer {
  readonly def: ResourceDefinition
  readonly table: ResourceTable
  private readonly fillAll: Filler
  private readonly fillWritable: Filler
  /** Fills inside the fields a merge patch replaces whole, and adds none. */
  private readonly fillNamed: Filler
  /** Checks a merged PATCH result like a PUT body. */
  private readonly validateMerged: ValidateFunction
  private readonly rules: Rules
  /** The time a change is made at, for the `'now'` values of transitions; a clock of the caller's in tests. */
  private readonly now: () => Date
  private outbox: WriteOutbox | null = null
  /** The table references its own rows: a bulk's writes then keep request order (`runsOf`). */
  private readonly selfReferencing: boolean

  constructor (def: ResourceDefinition, table: ResourceTable, now: () => Date = () => new Date()) {
    this.def = def
    this.table = table
    this.now = now
    this.rules = { requireIfMatch: def.api.requireIfMatch, softDelete: def.api.softDelete, actions: new Map(def.api.actions.map(a => [a.name, a])) }
    this.fillAll = fillerOf(def.fields)
    this.fillWritable = fillerOf(Object.fromEntries(def.api.writable.map(f => [f, def.fields[f] as TSchema])))
    this.fillNamed = fillerOf(Object.fromEntries(def.api.writable.map(f => [f, def.fields[f] as TSchema])), true)
    this.validateMerged = compileBodyValidator(def.api.bodies.create)
    this.selfReferencing = def.storage.spec.references.some(r => r.table === def.storage.table)
  }

  /** Writes the events of every change to `outbox`, in the statement that makes the change (the events plugin). */
  emitTo (outbox: WriteOutbox): void {
    this.outbox = outbox
  }

  /**
   * Applies one operation with no transaction held open. One statement for a new entity, and
   * for a replacement, a delete, a server-side change or a merge patch of whole fields decided
   * on their preconditions alone (`blindGuard`); a PUT that names no ETag the entity must have
   * creates or replaces it in that one statement (an upsert). Two when the entity must be read
   * first (a merge patch into objects or with removals, a transition), or when that one
   * statement found the entity other than the write needs (a failure to name). When another request changed the entity between the read
   * and the write, it is decided again in a transaction with the row locked (`locked`). A result with
   * its failure, or `{ replay }` when `claim` answers for an earlier request (nothing is
   * written then). Throws on a system failure. `returning: 'etag'`: the caller answers no body,
   * so the result's `row` may hold the entity's `id` and `etag` alone.
   */
  async one<R> (store: Store, call: WriteCall, op: WriteOp, claim: WriteClaim<R> | null, returning: Returning = 'row'): Promise<WriteResult | { replay: R }> {
    const result: WriteResult = { op, values: op.values, row: null, failure: null, change: null }
    let row: Row | undefined
    const blind = blindGuard(op, this.rules)
    if (blind !== null) {
      const step = this.blindStep(result, op.ifMatch === null)
      const tried = await this.attempt(store, call, step, blind, claim, true, returning)
      if (!('current' in tried)) return await this.ended(store, call, tried, result, step, claim)
      // It did not apply: decided on the row as the statement found it (its ETag and deletion).
      row = tried.current === null ? undefined : { id: op.id, ...tried.current }
      result.values = op.values
      // A patch those allow (changed between the statement's snapshot and its update) merges into
      // the entity as stored: read whole.
      if (op.action === 'patch' && row !== undefined && !('failure' in decide(op, row, this.rules))) {
        row = (await this.table.current(store, call.ctx, [op.id], true, false)).get(op.id)
      }
    } else if (op.action !== 'create' || (op.ifNoneMatch !== null && op.ifMatch !== null)) {
      // Anything but a new entity (a server-made id, or PUT with `If-None-Match: *` alone,
      // which creates unless the id exists) is decided on the entity as it is.
      row = (await this.table.current(store, call.ctx, [op.id], op.action === 'patch' || op.action === 'transition', false)).get(op.id)
    }
    const step = this.prepare(result, row)
    if (step === null) {
      if (claim === null) return result
      // A key already used answers for its first request, whatever this one would do now
      // (its If-Match may be stale since); nothing to write (deleting what is not there)
      // still makes the key this request's.
      const first = result.failure === null ? await claim.take(store) : await claim.holder(store)
      return first === null ? result : { replay: first }
    }
    if (row !== undefined) step.write.seen = row.etag as string
    const tried = await this.attempt(store, call, step, row === undefined ? null : SEEN, claim, false, returning)
    if (!('current' in tried)) return await this.ended(store, call, tried, result, step, claim)
    // Changed (or deleted, or created) since it was read: with others writing the entity now,
    // it is decided again with the row locked, so that it is not overtaken again.
    return await this.locked(store, call, op, claim)
  }

  /** `one` the way `run` writes: in a transaction of its own, the row locked while it is decided. */
  private async locked<R> (store: Store, call: WriteCall, op: WriteOp, claim: WriteClaim<R> | null): Promise<WriteResult | { replay: R }> {
    try {
      return await store.transaction(async (tx) => {
        const first = claim === null ? null : await claim.take(tx)
        if (first !== null) return { replay: first }
        const [result] = await this.run(tx, call, [op]) as [WriteResult]
        // The claim goes with the change it was made for: rolled back.
        if (result.failure !== null) throw new Undone(result)
        return result
      }, { retries: WRITE_RETRIES })
    } catch (err) {
      if (err instanceof Undone) return err.result
      throw err
    }
  }

  /**
   * Runs one step's statement: what it wrote, the key answering for another request, the
   * database's refusal, or `current` when it did not apply (its guard did not hold, or a row
   * appeared under its id), with the row as the statement found it when asked.
   */
  private async attempt<R> (store: Store, call: WriteCall, step: Step, guard: Guard | null, claim: WriteClaim<R> | null, current: boolean, returning: Returning): Promise<Attempt> {
    let written
    try {
      const type = this.eventOf(step)
      // An upsert's rows are of either event: its creation's, or a replacement's.
      const replaced = step.kind === 'upsert' ? `${this.def.name}.updated` : null
      const write = this.statementOf(call, [step], type, true, { guard, claim: claim?.part ?? null, current, returning }, returning, replaced)
      written = await this.table.write(store, write)
      written = await this.withOutbox(store, call, type, replaced, write, written)
    } catch (err) {
      if (this.lostInsertRace(step, err)) return { current: null }
      if (!(err instanceof UniqueViolation) && !(err instanceof ForeignKeyViolation)) throw err
      return { refused: err }
    }
    if (!written.claimed) return { replay: true }
    if (written.events > 0) this.outbox?.written(written.events, true)
    const stored = written.rows[0]
    if (stored === undefined) return { current: written.current ?? null }
    if (step.kind === 'upsert') step.kind = written.created === true ? 'insert' : 'update'
    return { stored }
  }

  /**
   * What a write of one entity did, with its outbox: made again with its outbox part when its
   * quiet check found a subscription that wants the event (and nothing was written). The
   * outbox is told what each write found, so that the next carries what it will need.
   * `replaced`: an upsert's event when it replaces (`type` when it creates); its quiet check
   * found a subscription that wants one of the two, so both are taken as wanted.
   */
  private async withOutbox (store: Store, call: WriteCall, type: string, replaced: string | null, write: TableWrite, written: WriteOutcome): Promise<WriteOutcome> {
    const outbox = this.outbox
    if (outbox === null) return written
    if (write.quiet != null) {
      outbox.heard(type, call, written.wanted === true)
      if (replaced !== null) outbox.heard(replaced, call, written.wanted === true)
      if (written.wanted !== true) return written
      return await this.table.write(store, { ...write, quiet: null, outbox: this.outboxPart(type, call, true, replaced) })
    }
    this.heardFrom(type, call, written, replaced)
    return written
  }

  /**
   * Tells the outbox what a statement that carried its part found: whether a subscription wanted
   * the event (`replaced`: an upsert's, for a row it replaced). One that wrote no row says
   * nothing of the subscriptions.
   */
  private heardFrom (type: string, call: WriteCall, written: WriteOutcome, replaced: string | null = null): void {
    if ((written.count ?? written.rows.length) > 0) this.outbox?.heard(written.created === false && replaced !== null ? replaced : type, call, written.events > 0)
  }

  /** The quiet check of a write of `type` (and, for an upsert, of `replaced`): null when a subscription was found to want either. */
  private quietOf (type: string, call: WriteCall, replaced: string | null): QuietPart | null {
    const quiet = this.outbox?.quiet(type, call) ?? null
    if (quiet === null || replaced === null) return quiet
    const other = (this.outbox as WriteOutbox).quiet(replaced, call)
    return other === null ? null : bothQuiet(quiet, other)
  }

  /** The outbox part of a write of `type` (and, for an upsert, of `replaced` where it replaces). */
  private outboxPart (type: string, call: WriteCall, committing: boolean, replaced: string | null): OutboxPart | null {
    if (this.outbox === null) return null
    return replaced === null ? this.outbox.part(type, call, committing) : this.outbox.part(type, call, committing, replaced)
  }

  /** The result of an attempt that wrote, that the database refused, or whose claim is another's. */
  private async ended<R> (store: Store, call: WriteCall, tried: Exclude<Attempt, { current: unknown }>, result: WriteResult, step: Step, claim: WriteClaim<R> | null): Promise<WriteResult | { replay: R }> {
    if ('replay' in tried) {
      const first = await (claim as WriteClaim<R>).holder(store)
      // Nobody holds it: the write's guard did not hold (the row changed since it was read, so
      // the claim was not even tried), or it expired since. Taken where the row is locked.
      if (first === null) return await this.locked(store, call, result.op, claim)
      return { replay: first }
    }
    if ('refused' in tried) {
      result.failure = { kind: 'conflict', error: tried.refused }
      return result
    }
    result.row = tried.stored
    result.change = changeOf(step)
    return result
  }

  /**
   * Applies `ops` in the transaction `tx`; one result per operation, in order. Throws only on
   * a system failure. `returning: 'etag'`: the caller answers no entity (a bulk request), so
   * each result's `row` may hold the entity's `id` and `etag` alone.
   */
  async run (tx: Tx, call: WriteCall, ops: readonly WriteOp[], returning: Returning = 'row'): Promise<WriteResult[]> {
    return await this.execute(tx, this.plan(call, ops, returning))
  }

  /**
   * `run` in two halves: decides, before the transaction opens, every operation that needs no
   * row read (a new entity with a server-made id: its checks, defaults and ETag), and when
   * that is all of them, makes their statements too; `execute` then runs the plan in the
   * transaction, which is held for its statements alone. The other operations are decided in
   * it, on their rows as read there, locked.
   */
  plan (call: WriteCall, ops: readonly WriteOp[], returning: Returning = 'row'): WritePlan {
    return this.planOn(call, ops, returning, null, true)
  }

  /**
   * `plan`, for a caller that tries `alone` first: the statements are made there, or in the
   * transaction if the plan cannot go alone, never ahead for nothing.
   */
  planAlone (call: WriteCall, ops: readonly WriteOp[], returning: Returning = 'row'): WritePlan {
    return this.planOn(call, ops, returning, null, false)
  }

  /**
   * Runs a plan (`planAlone`) as one statement with no transaction around it, when every
   * operation was decided ahead and they make one run (a bulk of new entities): the statement
   * is its own transaction, so all of them apply or none, with `claim` (the key's, taken in it)
   * and the outbox rows, or the quiet check and its retry as a write of one entity makes them.
   * Sets the plan's results as `execute` does and answers them; `HELD` when the key answers for
   * another request (nothing written); null when the plan cannot go alone (decided in a
   * transaction, several runs) or the statement was refused (a constraint, a deadlock): the
   * transaction (`execute`) then finds which operation breaks it.
   */
  async alone<R> (store: Store, plan: WritePlan, claim: WriteClaim<R> | null): Promise<WriteResult[] | typeof HELD | null> {
    const run = plan.runs?.length === 1 ? plan.runs[0] as PlannedRun : null
    if (run === null || (plan.rows !== null && plan.rows.size > 0 && !plan.unlocked)) return null
    const { call } = plan
    const answer = returningOf(run.steps, plan)
    const type = this.eventOf(run.steps[0] as Step)
    // Decided on rows read without a lock (`planRead`): written only if every one of them is
    // still as read, locked by the statement itself.
    const guard = guarded(run.steps) ? ALL_SEEN : null
    const write = this.statementOf(call, run.steps, type, true, { guard, claim: claim?.part ?? null, current: false, returning: answer }, answer)
    let written: WriteOutcome
    try {
      written = await this.withOutbox(store, call, type, null, write, await this.table.write(store, write))
    } catch (err) {
      if (err instanceof UniqueViolation || err instanceof ForeignKeyViolation || err instanceof SerializationFailure) return null
      throw err
    }
    // A row moved on: nothing was written, nor the key claimed.
    if (guard !== null && (written.count ?? written.rows.length) < run.steps.length) return null
    if (!written.claimed) return HELD
    if (written.events > 0) this.outbox?.written(written.events, true)
    this.record(run.steps, answer, written)
    return plan.results
  }

  /**
   * `plan`, with the operations on existing entities decided too, on their rows read first from
   * `db` without a lock (one statement). `execute` keeps those decisions, and the statements
   * made for them, when its locked read finds each row still at the ETag it was decided on
   * (every write gives a row a new one); otherwise it decides them again there. For a long
   * transaction (an ATOMIC job) that would otherwise decide them while it holds its connection.
   * On the embedded store, whose transactions never overlap, a plan that writes every entity it
   * read needs no locked read (`WritePlan.unlocked`). On a server, the locked read takes the
   * rows' locks in the order of their ids: two transactions writing the same rows in different
   * orders would otherwise deadlock, each holding a row the other waits for.
   * `read`: awaited once the rows are read, before the decisions (a job lets requests in there);
   * `ahead` false: for a caller that tries `alone` first, the statements are made there, or in
   * the transaction.
   */
  async planRead (store: Store, call: WriteCall, ops: readonly WriteOp[], returning: Returning = 'row', { read, ahead = true }: { read?: () => Promise<void>, ahead?: boolean } = {}): Promise<WritePlan> {
    const { ids, full } = rowsNamed(ops)
    const rows = ids.length === 0 ? new Map<string, Row>() : await this.table.current(store, call.ctx, ids, full, false)
    await read?.()
    return this.planOn(call, ops, returning, rows, ahead, store.kind === 'pglite')
  }

  /**
   * `ahead`: the statements of a plan decided whole are made now (else null, made when sent);
   * `lockFree`: the store's transactions never overlap, and `execute` may skip its locked read.
   */
  private planOn (call: WriteCall, ops: readonly WriteOp[], returning: Returning, rows: ReadonlyMap<string, Row> | null, ahead: boolean, lockFree = false): WritePlan {
    const results: WriteResult[] = ops.map(op => ({ op, values: op.values, row: null, failure: null, change: null }))
    const distinct = new Set(ops.map(op => op.id)).size === ops.length
    // Named twice, an entity's second write would find the ETag its first gave: not guarded.
    const decided = results.map(r => !readsRow(r.op) ? this.prepare(r, undefined) : rows === null ? undefined : seenOn(this.prepare(r, rows.get(r.op.id)), distinct ? rows.get(r.op.id) : undefined))
    let runs: PlannedRun[] | null = null
    let gathered = false
    if (!decided.includes(undefined) && !(call.atomic && results.some(r => r.failure !== null))) {
      const made = runsOf(decided.filter(s => s != null), distinct, this.selfReferencing)
      gathered = made.gathered
      runs = made.runs.map(steps => ({ steps, statement: ahead ? this.table.statement(this.runWrite(call, steps, returningOf(steps, { returning, distinct }))) : null }))
    }
    // An entity read and then left alone (nothing to do, a failure) or created under its id is
    // no row a guarded write can hold: the transaction locks what it read.
    const unlocked = rows !== null && runs !== null && rows.size > 0 && results.every((r, i) => !readsRow(r.op) || decided[i]?.write.seen !== undefined)
    return { call, returning, results, decided, rows, distinct, runs, gathered, unlocked, lockFree }
  }

  /**
   * The results `execute` gives `plan` when its decisions hold and each of its statements
   * writes the rows it was made for (each answering its count); null when that cannot be told
   * ahead: an operation left to the transaction, or a statement that answers its rows. New
   * objects: the plan's own results are `execute`'s. A caller may act on them ahead (a job
   * writes its result before its transaction), and must compare them with what `execute` gives.
   */
  presume (plan: WritePlan): WriteResult[] | null {
    if (plan.runs === null || plan.runs.some(r => returningOf(r.steps, plan) !== 'count')) return null
    const made = new Map<WriteResult, Step>()
    for (const r of plan.runs) for (const s of r.steps) made.set(s.result, s)
    return plan.results.map((r) => {
      const s = made.get(r)
      return s === undefined ? { ...r } : { ...r, failure: null, ...writtenAsMade(s) }
    })
  }

  /**
   * Runs a plan (`plan`, `planRead`) in the transaction `tx`: its results, one per operation, in
   * order. A transaction run again may run it again: each run finds its outcomes afresh.
   */
  async execute (tx: Tx, plan: WritePlan): Promise<WriteResult[]> {
    const unlocked = plan.unlocked && plan.lockFree
    if (unlocked) {
      // Its statements write each row only at the ETag it was decided on, and lock it as they
      // do: no read first. When one finds a row changed since, its savepoint undoes them all,
      // and the operations are decided again on the rows read with a lock.
      try {
        const runs = plan.runs as readonly PlannedRun[]
        return await tx.savepoint(async (db) => {
          // A transaction run again writes them again: what an earlier run met is looked for again.
          for (const run of runs) for (const s of run.steps) Object.assign(s.result, { failure: null, row: null, change: null })
          const results = await this.executeRuns(db, plan, runs, plan.gathered ? decidedSteps(plan) : null)
          if (plan.call.atomic && results.some(r => r.failure !== null)) throw new Stopped()
          return results
        })
      } catch (err) {
        if (err instanceof Stopped) return plan.results
        if (!(err instanceof Overtaken)) throw err
      }
    }
    const { call, results, decided, rows } = plan
    const { ids, full } = rowsNamed(results.map(r => r.op))
    const current = ids.length === 0 ? new Map<string, Row>() : await this.table.current(tx, call.ctx, ids, full)
    // Decided on rows read before: each decision holds while its row is as it was read.
    const held = !unlocked && ids.every(id => rows !== null && (rows.get(id)?.etag ?? null) === (current.get(id)?.etag ?? null))
    const steps: Step[] = []
    results.forEach((result, i) => {
      let step = decided[i] as Step | null
      if (readsRow(result.op) && !held) {
        result.values = result.op.values
        result.failure = null
        step = this.prepare(result, current.get(result.op.id))
      } else if (step !== null) {
        // A conflict an earlier run met is looked for again.
        result.failure = null
      }
      result.row = null
      result.change = null
      if (step !== null) steps.push(step)
    })
    // Every operation is decided before any is applied, so each failure gets its own reason.
    if (call.atomic && results.some(r => r.failure !== null)) return results
    if (held && plan.runs !== null) return await this.executeRuns(tx, plan, plan.runs, plan.gathered ? decidedSteps(plan) : null)
    const made = runsOf(steps, plan.distinct, this.selfReferencing)
    return await this.executeRuns(tx, plan, made.runs.map(s => ({ steps: s, statement: null })), made.gathered ? steps : null)
  }

  /**
   * Applies the runs of `plan`'s decided steps in order; atomic, up to the first failure.
   * `gathered`: the steps in request order, when the runs gather each kind's out of it
   * (`runsOf`). Atomic, they are then written in a savepoint, and when one breaks a
   * constraint, the savepoint undoes them all and they run again in request order, so that the
   * failure the results name is the first, as it would have been.
   */
  private async executeRuns (tx: Tx, plan: WritePlan, runs: readonly PlannedRun[], gathered: readonly Step[] | null): Promise<WriteResult[]> {
    let ordered = runs
    if (gathered !== null && plan.call.atomic) {
      try {
        return await tx.savepoint(async (db) => {
          for (const run of runs) await this.batch(db, plan, run.steps, run.statement)
          return plan.results
        })
      } catch (err) {
        if (!(err instanceof UniqueViolation) && !(err instanceof ForeignKeyViolation)) throw err
        for (const run of runs) for (const s of run.steps) Object.assign(s.result, { failure: null, row: null, change: null })
        ordered = runsInOrder(gathered).map(steps => ({ steps, statement: null }))
      }
    }
    for (const run of ordered) {
      await this.apply(tx, plan, run)
      if (plan.call.atomic && run.steps.some(s => s.result.failure !== null)) break
    }
    return plan.results
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
      // Only what the patch names changes: the statement sets those columns alone.
      fields = Object.keys(op.values)
    } else if (op.action === 'set') {
      fields = Object.keys(op.values)
    } else if (op.action === 'change') {
      fields = Object.keys(op.values)
      // The fields as a write stores them: defaults and nulls filled, nested ones too.
      result.values = this.fillAll(op.values)
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
      result.values = this.fillAll(op.values)
    }
    return this.step(result, decision.step, fields, row)
  }

  /** The step writing `values` (default `result`'s): a `kind` setting `fields`, decided on `row` (undefined: not read). */
  private step (result: WriteResult, kind: Kind, fields: readonly string[] | undefined, row: Row | undefined, values: Row = result.values): Step {
    const { op } = result
    const unique = touchesUnique(kind, fields, values, row, this.def.storage.spec.unique, this.def.api.writable)
    return { result, kind, fields, write: { id: op.id, etag: op.etag ?? newEtag(), values }, unique }
  }

  /**
   * The step of an operation `blindGuard` allows, as `prepare` makes it for an existing row;
   * `mayCreate` (no `If-Match`): a replacement is an upsert, which also makes the entity that
   * is not there, as `prepare` would for a missing row.
   */
  private blindStep (result: WriteResult, mayCreate: boolean): Step {
    const { op } = result
    if (op.action === 'delete') return this.step(result, this.rules.softDelete ? 'mark-deleted' : 'delete', undefined, undefined, {})
    if (op.action === 'set') return this.step(result, 'update', Object.keys(op.values), undefined, op.values)
    if (op.action === 'change') {
      result.values = this.fillAll(op.values)
      return this.step(result, 'update', Object.keys(op.values), undefined)
    }
    if (op.action === 'patch') {
      // Only what the patch names changes, as `prepare` merges it: the statement sets those columns alone.
      result.values = this.fillNamed(op.values)
      return this.step(result, 'update', Object.keys(op.values), undefined)
    }
    result.values = this.fillAll(op.values)
    return this.step(result, mayCreate ? 'upsert' : 'update', undefined, undefined)
  }

  /** The writable fields of a stored row, as a merge patch's target. */
  private writableOf (row: Row): Row {
    const out: Row = {}
    for (const f of this.def.api.writable) out[f] = row[f]
    return out
  }

  /** The event a step's change is (e.g. `document.created`). */
  private eventOf (s: Step): string {
    return `${this.def.name}.${changeOf(s)}`
  }

  /**
   * The statement of a run of steps of one kind and event (`type`), with its outbox rows, or
   * the outbox's quiet check in their place while it expects no subscription to want the event
   * (the statement then writes nothing when one does, and is made again with them);
   * `committing` as `WriteOutbox.part` has it. `one`: what a write of one entity adds.
   */
  private statementOf (call: WriteCall, run: readonly Step[], type: string, committing: boolean, one: OneWrite | null = null, returning: Returning = 'row', replaced: string | null = null): TableWrite {
    const head = run[0] as Step
    const quiet = this.quietOf(type, call, replaced)
    const outbox = quiet === null ? this.outboxPart(type, call, committing, replaced) : null
    // Every property in one literal: spread into a larger literal, each write's statement got a
    // shape of its own in V8, and every later read of it missed its inline cache.
    return {
      kind: head.kind,
      scope: { ctx: call.ctx, by: call.by },
      rows: run.map(s => s.write),
      fields: head.fields,
      outbox,
      quiet,
      attached: head.result.op.attached ?? null,
      // A patch's fields are the client's choice: its texts are left to the driver, which
      // prepares those that repeat, up to its bound.
      named: head.result.op.action !== 'patch',
      guard: one?.guard ?? null,
      claim: one?.claim ?? null,
      current: one?.current ?? false,
      returning: one?.returning ?? returning
    }
  }

  /**
   * The statement of a run of a plan: it writes each row only at the ETag its step was decided
   * on when the steps were decided on rows read without a lock (`planRead`).
   */
  private runWrite (call: WriteCall, run: readonly Step[], answer: Returning): TableWrite {
    const one: OneWrite | null = guarded(run) ? { guard: SEEN, claim: null, current: false, returning: answer } : null
    return this.statementOf(call, run, this.eventOf(run[0] as Step), false, one, answer)
  }

  /** Writes a run of steps of `plan` in one statement: `statement` when it was made ahead. */
  private async batch (tx: Tx, plan: WritePlan, run: readonly Step[], statement: WriteStatement | null): Promise<void> {
    const answer = returningOf(run, plan)
    const { call } = plan
    const type = this.eventOf(run[0] as Step)
    let written = await this.table.send(tx, statement ?? this.table.statement(this.runWrite(call, run, answer)))
    if (written.wanted !== undefined) {
      // It carried the quiet check, and the outbox is told what it found; when a subscription
      // wants the event, it wrote nothing, and is made again with the outbox's part.
      this.outbox?.heard(type, call, written.wanted)
      if (written.wanted) written = await this.table.send(tx, this.table.statement(this.runWrite(call, run, answer)))
    }
    if (written.wanted === undefined) this.heardFrom(type, call, written)
    if (guarded(run) && (written.count ?? written.rows.length) < run.length) throw new Overtaken()
    if (written.events > 0) this.outbox?.written(written.events, false)
    this.record(run, answer, written)
  }

  /** Sets the results of a run's steps from what their statement answered (`answer`). */
  private record (run: readonly Step[], answer: Returning, written: WriteOutcome): void {
    if (answer === 'count') {
      // Each row is stored with the id and ETag it was given (returningOf).
      for (const s of run) Object.assign(s.result, writtenAsMade(s))
      return
    }
    const byId = new Map(written.rows.map(r => [r.id as string, r]))
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
  private async apply (tx: Tx, plan: WritePlan, { steps: run, statement }: PlannedRun): Promise<void> {
    const { call } = plan
    if (run.length > 1) {
      try {
        await tx.savepoint(async (db) => { await this.batch(db, plan, run, statement) })
        return
      } catch (err) {
        // An unreachable database is no constraint to find: no point in trying each step.
        if (!isStoreError(err) || err instanceof Unavailable) throw err
      }
    }
    for (const s of run) {
      try {
        // A run of one is sent as planned; a run broken up is made again step by step.
        const planned = run.length === 1 ? statement : null
        if (call.atomic) await this.batch(tx, plan, [s], planned)
        else await tx.savepoint(async (db) => { await this.batch(db, plan, [s], planned) })
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
