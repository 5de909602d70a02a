import { isDeepStrictEqual } from 'node:util'
import type { RowWrite } from '../../../store/table/index.js'
import type { StepKind } from './decide.js'
import type { WriteResult } from './operations.js'

/** What a step may be besides what `decide` makes of an operation: an upsert (`Writer.one`). */
export type Kind = StepKind | 'upsert'

/** An operation on its way to the database. */
export interface Step {
  result: WriteResult
  kind: Kind
  /** For an update: the fields it sets (undefined: the writable ones). */
  fields: readonly string[] | undefined
  write: RowWrite
  /**
   * It may take or give up a value of a unique field: a new row, a deletion or a restore (a
   * row leaves or enters the unique sets), or an update that changes such a field.
   */
  unique: boolean
}

/**
 * Whether a step of `kind` may take or give up a value of a field of `unique`: any but an
 * update does (a row enters or leaves the unique sets); an update does when it sets such a
 * field (`fields`, undefined for every one of `writable`) to another value than `row` has, or
 * when `row` was not read.
 */
export function touchesUnique (kind: Kind, fields: readonly string[] | undefined, values: Record<string, unknown>, row: Record<string, unknown> | undefined, unique: readonly string[], writable: readonly string[]): boolean {
  if (unique.length === 0) return false
  if (kind !== 'update') return true
  return unique.some(f => (fields ?? writable).includes(f) && (row === undefined || !isDeepStrictEqual(values[f] ?? null, row[f] ?? null)))
}

/** An action's name in the past tense, as its event names it: publish → published, archive → archived. */
export function pastTense (action: string): string {
  return action.endsWith('e') ? `${action}d` : `${action}ed`
}

/** What a step did to its entity, as an event names it. */
export function changeOf (s: Step): string {
  switch (s.kind) {
    // An upsert is named by its insertion; once written it is the insertion or the update it made (`Writer.attempt`).
    case 'upsert':
    case 'insert': return 'created'
    case 'delete':
    case 'mark-deleted': return 'deleted'
    case 'restore': return 'restored'
    case 'update': return s.result.op.action === 'transition' ? pastTense(s.result.op.transition as string) : 'updated'
  }
}

/** Steps one statement can write: of one kind and event, setting the same fields. */
function runKey (s: Step): string {
  return `${s.kind} ${changeOf(s)} ${String(s.fields)}`
}

/** Whether `a` and `b` can go in one statement: one kind and event, the same fields, the same attached write. */
function sameRun (a: Step, b: Step): boolean {
  return runKey(a) === runKey(b) && a.result.op.attached === b.result.op.attached
}

/** Consecutive steps that one statement can write, in request order. */
export function runsInOrder (steps: readonly Step[]): Step[][] {
  const runs: Step[][] = []
  for (const s of steps) {
    const last = runs.at(-1)
    const head = last?.[0]
    if (head !== undefined && sameRun(head, s)) (last as Step[]).push(s)
    else runs.push([s])
  }
  return runs
}

/**
 * Whether the steps may be written out of request order with the same outcome for each: no
 * entity is named twice, the table references none of its own rows, and every step that may
 * take or give up a unique value goes in the same statement, in request order (a delete may
 * free a name a later create takes; two creates of one name, the later one fails). No attached
 * write (a file) either: those go one by one.
 */
function reorderable (steps: readonly Step[], distinct: boolean, selfReferencing: boolean): boolean {
  if (!distinct || selfReferencing) return false
  let unique: string | null = null
  for (const s of steps) {
    if (s.result.op.attached !== undefined) return false
    if (!s.unique) continue
    const key = runKey(s)
    if (unique !== null && unique !== key) return false
    unique = key
  }
  return true
}

/** The runs of a plan, and whether they are out of request order (`gathered`). */
export interface Runs {
  runs: Step[][]
  gathered: boolean
}

/**
 * The statements a plan's steps are written by, one run of steps each. Every step of a kind in
 * one run when no order between them can change an outcome (`reorderable`), the runs in the
 * order their first steps came: a bulk sends as many statements as it has kinds of write,
 * however many operations of each. Otherwise consecutive steps of a kind, so that request order
 * is kept. Steps keep their request order within a run either way.
 */
export function runsOf (steps: readonly Step[], distinct: boolean, selfReferencing: boolean): Runs {
  const consecutive = runsInOrder(steps)
  if (consecutive.length < 2 || !reorderable(steps, distinct, selfReferencing)) return { runs: consecutive, gathered: false }
  const byKey = new Map<string, Step[]>()
  for (const s of steps) {
    const key = runKey(s)
    const run = byKey.get(key)
    if (run === undefined) byKey.set(key, [s])
    else run.push(s)
  }
  const runs = [...byKey.values()]
  return runs.length < consecutive.length ? { runs, gathered: true } : { runs: consecutive, gathered: false }
}
