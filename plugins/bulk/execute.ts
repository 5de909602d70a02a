import type { Static } from '@sinclair/typebox'
import type { BulkResponse, BulkActionValue } from '../../schemas/bulk.js'
import type { Tx } from '../../store/types.js'
import { claimedInWrite, type IdempotencyClaim, type IdempotencyRecord } from '../idempotency/index.js'
import type { JobRun } from '../jobs/index.js'
import type { ResourceDefinition, ServedResource, WriteAction, WriteCall, WriteOp, WritePlan, WriteResult } from '../resource/index.js'
import type { RawOperation } from './envelope.js'
import { outcomeOf, rolledBack, type Operation, type Outcome } from './outcome.js'
import { prepare, type Validators } from './prepare.js'

export type BulkResponseBody = Static<typeof BulkResponse>

/** One bulk endpoint: the resource it writes to, its definition as clients reach it (item paths under the prefix), its checks. */
export interface Endpoint {
  served: ServedResource
  def: ResourceDefinition
  maxOperations: number
  /** Most operations of a request accepted as a job; null without the jobs plugin. */
  maxAsyncOperations: number | null
  validators: Validators
}

/** The write path's action for a bulk action (conventions: Bulk request body; Method rules 8, 10). */
const WRITE_ACTIONS: Readonly<Record<BulkActionValue, WriteAction>> = { CREATE: 'create', UPDATE: 'update', CREATE_UPDATE: 'put', DELETE: 'delete' }

/** Ends a transaction without keeping anything. */
export class Rollback extends Error {}

const isFailed = (op: Operation): boolean => op.outcome?.status === 'FAILED'

/** The operations of a request, each checked on its own (a bad one fails alone). */
export function prepared (e: Endpoint, operations: readonly RawOperation[]): Operation[] {
  return operations.map((raw, i) => prepare(e.def, e.validators, raw, i))
}

/**
 * How a plan is made (`planOf`): `'ahead'` decides before the transaction opens what needs no
 * row read, and makes its statements (`Writer.plan`); `'read'` decides those on existing
 * entities too, on their rows read first without a lock (`Writer.planRead`), for a transaction
 * that would otherwise hold its connection while it decides them; `'alone'` decides as
 * `'ahead'` does, for a plan tried first as one statement (`applyAlone`), and, on a server, as
 * `'read'` does when every operation is an `UPDATE`, or every one a `DELETE`: decided, they make
 * one run, which one statement can write too.
 */
export type Planning = 'ahead' | 'read' | 'alone'

/**
 * The writes of `ops` (checked, not yet decided) through the resource's write path, planned as
 * `how` says; `read`: awaited between a `'read'` plan's read and its decisions.
 */
export async function planOf (e: Endpoint, call: WriteCall, ops: readonly Operation[], how: Planning, opts: { read?: () => Promise<void> } = {}): Promise<WritePlan> {
  const writes: WriteOp[] = ops.map(op => ({ action: WRITE_ACTIONS[op.action], id: op.id as string, values: op.values, ifMatch: op.ifMatch, ifNoneMatch: null }))
  const { writer, store } = e.served
  // A bulk answers no entity: the statements return each row's id and ETag alone.
  if (how === 'read') return await writer.planRead(store, call, writes, 'etag', opts)
  if (how === 'ahead') return writer.plan(call, writes, 'etag')
  // On the embedded store a statement is a call in this thread, and the transaction's round
  // trips cost less than the read ahead would.
  const action = ops[0]?.action
  const oneKind = store.kind === 'pg' && (action === 'UPDATE' || action === 'DELETE') && ops.every(op => op.action === action)
  return oneKind ? await writer.planRead(store, call, writes, 'etag', { ahead: false }) : writer.planAlone(call, writes, 'etag')
}

/**
 * Runs `plan` (made of `ops` by `planOf(…, 'alone')`) as one statement with no transaction,
 * with the claim of the request's key in it, when it can go so (`Writer.alone`: the operations
 * all new entities), and sets the outcomes; false when it cannot, or was refused, and nothing
 * was written: the caller runs the plan in a transaction. A key used before is a 409 naming
 * the request that used it (`reused`).
 */
export async function applyAlone (e: Endpoint, plan: WritePlan, ops: readonly Operation[], claim: IdempotencyClaim | null, reused: (first: IdempotencyRecord) => string): Promise<boolean> {
  const { writer, store, keys } = e.served
  // Without a claim nothing is held; with one, a key held answers for its request (`reused`).
  const results = claim === null
    ? await writer.alone(store, plan, null) as WriteResult[] | null
    : (await claimedInWrite(store, keys, claim, async (held) => await writer.alone(store, plan, held), reused) as { value: WriteResult[] | null }).value
  if (results === null) return false
  ops.forEach((op, i) => { op.outcome = outcomeOf(e.def, op, results[i] as WriteResult, e.served.registry) })
  return true
}

/**
 * Runs the writes `plan` made of `ops` (`planOf`) in the transaction `tx` and sets their
 * outcomes (afresh: a transaction run again runs them again). Returns whether the
 * transaction keeps its work: ATOMIC only when every operation succeeded, ISOLATED when one
 * did.
 */
export async function applyInTx (e: Endpoint, tx: Tx, plan: WritePlan, ops: readonly Operation[]): Promise<boolean> {
  const results = await e.served.writer.execute(tx, plan)
  ops.forEach((op, i) => { op.outcome = outcomeOf(e.def, op, results[i] as NonNullable<typeof results[number]>, e.served.registry) })
  return plan.call.atomic ? !ops.some(isFailed) : ops.some(op => op.outcome?.status === 'SUCCEEDED')
}

/** ATOMIC: the operations not applied because others failed. */
export function settleAtomic (ops: readonly Operation[]): void {
  const failures = ops.filter(isFailed)
  if (failures.length === 0) return
  for (const op of ops) if (!isFailed(op)) op.outcome = rolledBack(failures)
}

/** ATOMIC with an operation refused by its checks: nothing to try. */
export function hopeless (ops: readonly Operation[], atomic: boolean): boolean {
  const pending = ops.filter(op => op.outcome === null)
  return pending.length === 0 || (atomic && pending.length < ops.length)
}

/**
 * The 200 body: one result per operation, in request order (conventions: "Bulk response body");
 * each operation's outcome, or the one `outcomes` gives it.
 */
export function responseOf (def: ResourceDefinition, ops: readonly Operation[], outcomes: ReadonlyArray<Outcome | null> = ops.map(op => op.outcome)): BulkResponseBody {
  let ok = 0
  const operations = ops.map((op, i) => {
    const result = outcomes[i] as Outcome
    if (result.status === 'SUCCEEDED') ok++
    // A CREATE that did not happen has no entity to name.
    const id = op.action === 'CREATE' && result.status === 'FAILED' ? null : op.id
    return { operationId: op.operationId, action: op.action, entityId: id, entityRef: id === null ? null : def.ref(id), result }
  })
  return { status: ok === ops.length ? 'SUCCEEDED' : ok === 0 ? 'FAILED' : 'PARTIAL', operations }
}

/**
 * The body `ops` will have when the transaction of `plan` applies it as decided ahead
 * (`Writer.presume`); null when that cannot be told before it runs.
 */
function presumedResponse (e: Endpoint, plan: WritePlan, ops: readonly Operation[]): BulkResponseBody | null {
  const results = e.served.writer.presume(plan)
  if (results === null) return null
  return responseOf(e.def, ops, ops.map((op, i) => outcomeOf(e.def, op, results[i] as WriteResult, e.served.registry)))
}

/**
 * Whether the operations of an ATOMIC transaction that kept its work, each SUCCEEDED, did as
 * `body` says: a success differs only by its detail (an entity deleted already, meanwhile).
 */
function answers (body: BulkResponseBody, ops: readonly Operation[]): boolean {
  return ops.every((op, i) => body.operations[i]?.result.detail === op.outcome?.detail)
}

/** What an asynchronous bulk job keeps as its input. */
export interface BulkJobInput {
  transactionMode?: 'ATOMIC' | 'ISOLATED'
  operations: RawOperation[]
}

/** What an ISOLATED job records of an operation it applied: the entity's id (a CREATE makes one) and the outcome. */
interface Step {
  id: string | null
  outcome: Outcome | null
}

/**
 * Operations of an ISOLATED job applied in one transaction: each with its outcome recorded
 * beside its work. Fewer on the embedded store, whose one connection serves the requests
 * between two of them (docs/operations.md).
 */
const CHUNK = { pg: 100, pglite: 25 } as const

/**
 * A bulk request accepted for asynchronous processing, run as a job (reference contract:
 * "Asynchronous bulk"). ATOMIC: every operation in one transaction, which also ends the job
 * with its outcome, or, when it rolls back, a transaction of its own ends it: a job taken up
 * again after a crash has applied nothing, and one that applied its work has ended. ISOLATED:
 * the operations in chunks, each chunk's outcomes recorded in the chunk's transaction, so a job
 * taken up again goes on after the last chunk that committed.
 */
export async function runBulkJob (e: Endpoint, run: JobRun): Promise<{ result: BulkResponseBody, completedCount: number }> {
  const input = run.job.input as BulkJobInput
  const atomic = input.transactionMode === 'ATOMIC'
  const call: WriteCall = { ctx: run.job.ctx, by: run.job.subject === '' ? null : run.job.subject, atomic, requestId: run.job.requestId }
  const ops = prepared(e, input.operations)
  const done = await run.steps()
  if (atomic) {
    // The outcome a run of an earlier release recorded as step 0, before it ended the job.
    const recorded = done.get(0)
    if (recorded !== undefined) return { result: recorded as BulkResponseBody, completedCount: ops.length }
    // The outcome of the transaction that kept the work; null when it was rolled back.
    let kept: BulkResponseBody | null = null
    if (!hopeless(ops, true)) {
      const pending = ops.filter(op => op.outcome === null)
      // One transaction for every operation: decided before it opens, all of them, and the
      // result they will give written ahead, so that the transaction only marks the job ended.
      // The rows read, requests that came meanwhile go first, then the decisions.
      const plan = await planOf(e, call, pending, 'read', { read: run.turn })
      const presumed = presumedResponse(e, plan, ops)
      if (presumed !== null) await run.stage(presumed)
      try {
        await run.transaction(async (tx) => {
          kept = null
          if (!await applyInTx(e, tx, plan, pending)) throw new Rollback()
          kept = presumed !== null && answers(presumed, ops) ? presumed : responseOf(e.def, ops)
          await run.finish(tx, kept, ops.length)
        })
      } catch (err) {
        if (!(err instanceof Rollback)) throw err
      }
    }
    if (kept !== null) return { result: kept, completedCount: ops.length }
    settleAtomic(ops)
    const result = responseOf(e.def, ops)
    await run.transaction(async (tx) => { await run.finish(tx, result, ops.length) })
    return { result, completedCount: ops.length }
  }
  for (const op of ops) {
    const step = done.get(op.index) as Step | undefined
    if (step === undefined) continue
    // A CREATE's id was made by the run that applied it.
    op.id = step.id
    op.outcome = step.outcome
  }
  let completed = done.size
  const left = ops.filter(op => !done.has(op.index))
  const size = CHUNK[e.served.store.kind]
  for (let i = 0; i < left.length; i += size) {
    const chunk = left.slice(i, i + size)
    const pending = chunk.filter(op => op.outcome === null)
    const plan = await planOf(e, call, pending, 'ahead')
    await run.transaction(async (tx) => {
      if (pending.length > 0) await applyInTx(e, tx, plan, pending)
      await run.record(tx, chunk.map(op => ({ step: op.index, outcome: { id: op.id, outcome: op.outcome } satisfies Step })), completed + chunk.length)
    })
    completed += chunk.length
  }
  return { result: responseOf(e.def, ops), completedCount: ops.length }
}
