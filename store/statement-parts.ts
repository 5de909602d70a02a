import type { Queryable } from './types.js'

/*
 * Statements built from parts: a write with its claim and its outbox rows, as data-modifying
 * CTEs. A part brings its values and the SQL that reads them from the `$n` placeholders it is
 * given, so a statement's text is made once per shape and a request only gathers values.
 */

/**
 * A claim as part of a write: `k AS (…)`, a CTE with one row when the claim is now this
 * request's and none when it answers for another. `sql(first, when)` is its text, reading its
 * values at `$first`, `$first + 1`…; `when` a condition the claim is taken under (the write's
 * guard), or null. `key` names the text: parts of one key make the same `sql`.
 */
export interface ClaimPart {
  key: string
  values: readonly unknown[]
  sql: (first: number, when: string | null) => string
}

/** What a write with a claim part answers when the claim answers for another request: nothing was written. */
export const HELD: unique symbol = Symbol('held')

/**
 * Something a write claims in its own statement, so that it happens once: an idempotency key, a
 * webhook delivery's id. `R` is what the request that holds it left (its record).
 */
export interface WriteClaim<R> {
  /** The claim as the write's CTE `k`. */
  part: ClaimPart
  /** Takes it in a statement of its own (a request with nothing to write): null when taken, else the holder's record. */
  take: (db: Queryable) => Promise<R | null>
  /** The holder's record while it is held, else null. */
  holder: (db: Queryable) => Promise<R | null>
}

/**
 * The outbox rows of a write as part of it: `o AS (INSERT … RETURNING 1)`, one row per written
 * row (read from the CTE `source`) and subscription that wants its event. `snapshot` is the SQL
 * of the written row's columns as text (`ResourceTable.snapshot` reads it back), `ctx` the
 * placeholder of the execution context; `created`, for an upsert's rows, the SQL of whether a
 * row was inserted rather than replaced, which decides its event. `key`, `values`, `sql` as a
 * claim's.
 */
export interface OutboxPart {
  key: string
  values: readonly unknown[]
  sql: (first: number, written: { source: string, snapshot: string, ctx: string, created?: string }) => string
}

/**
 * In place of an outbox part, for a write whose event no subscription is expected to want: the
 * condition `sql(first, ctx)` holds while none of the execution context `ctx` wants it, and the
 * write (and its claim) applies only under it. A write that finds one wrote nothing, and is
 * made again with its outbox part. It spares the statement the outbox's insert, which costs the
 * database more than the check even when it writes no row. `key`, `values` as a claim's.
 */
export interface QuietPart {
  key: string
  values: readonly unknown[]
  sql: (first: number, ctx: string) => string
}

/** One quiet check of two event types (an upsert's, which either creates or replaces): it holds while neither is wanted. */
export function bothQuiet (a: QuietPart, b: QuietPart): QuietPart {
  return {
    key: `${a.key}&${b.key}`,
    values: [...a.values, ...b.values],
    sql: (first, ctx) => `(${a.sql(first, ctx)} AND ${b.sql(first + a.values.length, ctx)})`
  }
}

/**
 * A write of another table that goes with the entity's, in its statement (a file's bytes beside
 * the entity's description of it): `f AS (…)`, made for each row the write wrote, read from the
 * CTE `source`, so that both commit or neither, and neither when the write does not apply.
 * `ctx` is the placeholder of the execution context. `key`, `values`, `sql` as a claim's.
 */
export interface AttachedPart {
  key: string
  values: readonly unknown[]
  sql: (first: number, written: { source: string, ctx: string }) => string
}

const names = new Map<string, string>()

/**
 * The name of a statement text built from parts, the same for the process's life: the server
 * connection prepares it once. Texts come from a table's structure, never from request data,
 * so there are few; ':' keeps these apart from the names callers give their own texts.
 */
export function statementName (text: string): string {
  let name = names.get(text)
  if (name === undefined) {
    name = `svc:write:${names.size + 1}`
    names.set(text, name)
  }
  return name
}
