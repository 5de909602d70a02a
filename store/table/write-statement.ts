import type { AttachedPart, ClaimPart, OutboxPart, QuietPart } from '../statement-parts.js'
import type { Column } from './columns.js'

/**
 * What a write statement does to the rows it names. `upsert` inserts each row, or where its id
 * exists replaces the stored one's writable columns (under its guard's preconditions, which name
 * no ETag it must have), and answers which of the two it did (`svc:created`).
 */
export type WriteKind = 'insert' | 'update' | 'upsert' | 'delete' | 'mark-deleted' | 'restore'

/**
 * What a write statement answers for each row it wrote: the row as stored (as it was, for a
 * delete), or its `id` and `etag` alone, for a write whose response carries no body (a 204),
 * so that the database formats and sends no column the caller would drop; or, `'count'`, no
 * row at all, only how many it wrote, for a caller that knows which rows that count means and
 * each one's id and ETag (an insert writes every row or fails; a write of rows locked and
 * decided on, each named once, writes every one).
 */
export type Returning = 'row' | 'etag' | 'count'

/** The parts of a table a write statement is made of (ResourceTable). */
export interface WriteTable {
  /** The table, quoted. */
  T: string
  /** Every column a row is read with, in order. */
  all: readonly Column[]
  /** The fields' columns (not the server's). */
  columns: readonly Column[]
}

/**
 * Which existing rows a write applies to, when the decision to write was made without a lock:
 * - `seen`: the rows carry `seen`, the ETag their write was decided on, and only rows still at
 *   it are written; with `all`, none is unless every one is: the statement first locks them,
 *   in the order of their ids (as a locked read does, so that two statements writing the same
 *   rows cannot deadlock), and writes only when it locked every row it names at its ETag;
 * - `preconditions`: the write was decided without reading the row, for any row that meets
 *   them: its ETag one of `allowed` (null: any), none of `refused` (null: no such condition),
 *   and not deleted when `live`.
 */
export type Guard =
  | { by: 'seen', all?: boolean }
  | { by: 'preconditions', allowed: readonly string[] | null, refused: readonly string[] | null, live: boolean }

/** One write statement: which rows, of which kind, and what else it carries. */
export interface WriteShape {
  kind: WriteKind
  /** An update's columns. */
  set: readonly Column[]
  /** Null: the rows' decisions hold whatever they are now (locked, or new rows). */
  guard: Guard | null
  claim: ClaimPart | null
  outbox: OutboxPart | null
  /** In place of `outbox`: the write applies only while no subscription wants its event. */
  quiet: QuietPart | null
  /** A write of another table made for the rows written (a file's bytes). */
  attached: AttachedPart | null
  /**
   * Also answer the ETag and deletion time the (one) row had (`svc:etag`, `svc:deleted`; null
   * when it did not exist), when the write did not apply: what it is decided on then. A write
   * sent alone (`writesAlone`) has them read after it, only when it wrote nothing
   * (`foundStatement`); any other statement answers them itself, as it found the row.
   */
  current: boolean
  returning: Returning
}

/**
 * True when a statement of `shape` is the write alone, which answers its rows and nothing
 * else (`writeStatement`): no claim, no outbox, no attached write, and `current` only for a
 * write guarded by the ETags the client sent (`If-Match`). Such a write nearly always applies,
 * and the database runs a bare write at a good part less CPU than the same write inside a CTE
 * that also reads the row; what one that did not apply found is read after it
 * (`foundStatement`). A write without them (a PUT that may create) keeps one statement
 * whatever it finds.
 */
export function writesAlone (shape: WriteShape): boolean {
  if (shape.claim !== null || shape.outbox !== null || shape.attached !== null || allSeen(shape.guard)) return false
  return !shape.current || (shape.guard?.by === 'preconditions' && shape.guard.allowed !== null)
}

/**
 * What a write alone of one row with `current` found, read once it wrote nothing (`$1` the
 * execution context, `$2` the id, then the quiet check's values): one row of the row's
 * `svc:etag` and `svc:deleted` (null when there is none) and, with a quiet check,
 * `svc:wanted`. Read after the write, so a change committed in between shows here: the caller
 * decides on it as on any row it read, and a write it then makes is guarded by that ETag.
 */
export function foundStatement (t: WriteTable, texts: Map<string, string>, shape: WriteShape, ctx: string, id: string): { text: string, values: unknown[] } {
  const key = `found|${shape.quiet?.key ?? '-'}`
  let text = texts.get(key)
  if (text === undefined) {
    const deleted = t.all.some(c => c.field === 'deletedDateTime') ? 't."deletedDateTime"' : 'NULL::timestamptz'
    const found = ['t.etag AS "svc:etag"', `${deleted} AS "svc:deleted"`]
    if (shape.quiet !== null) found.push(`NOT ${shape.quiet.sql(3, '$1')} AS "svc:wanted"`)
    text = `SELECT ${found.join(', ')} FROM (VALUES (1)) AS one LEFT JOIN ${t.T} AS t ON t.ctx = $1 AND t.id = $2::text`
    texts.set(key, text)
  }
  return { text, values: [ctx, id, ...(shape.quiet?.values ?? [])] }
}

/**
 * The rows a write statement is given: many as the JSON text of an array of records (one `$2`
 * parameter, read by `jsonb_to_recordset`), or one row as its values, each a parameter of its
 * own (`id`, `etag`, `seen` for a `seen` guard, then the columns; a JSON column's value as its
 * JSON text). One row is what every item write sends: the database then parses no JSON, and
 * each value is converted by its column type's input function alike.
 */
export type WriteRows = string | readonly unknown[]

/** A column of the relation `x` the rows are read as, and for one row the parameter it is in. */
interface RecordColumn {
  ident: string
  sqlType: string
  slot: number
}

function recordColumns (columns: readonly Column[], seen: boolean, slots: Slots): RecordColumn[] {
  const head = ['id', 'etag', ...(seen ? ['seen'] : [])]
  // One row: `id` is `$2`, the other values follow every other parameter.
  return [...head.map(ident => ({ ident, sqlType: 'text' })), ...columns]
    .map((c, i) => ({ ident: c.ident, sqlType: c.sqlType, slot: i === 0 ? 2 : slots.row + i - 1 }))
}

/** The rows as the relation `x` with `columns`: the records of `$2`, or the one row's parameters. */
function rowsAs (columns: readonly RecordColumn[], one: boolean): string {
  if (one) return `(VALUES (${columns.map(c => `$${c.slot}::${c.sqlType}`).join(', ')})) AS x(${columns.map(c => c.ident).join(', ')})`
  return `jsonb_to_recordset($2::jsonb) AS x(${columns.map(c => `${c.ident} ${c.sqlType}`).join(', ')})`
}

/** Where each group of a statement's parameters starts (1-based), in the order the values go. */
interface Slots {
  by: number
  allowed: number
  refused: number
  claim: number
  outbox: number
  quiet: number
  attached: number
  /** One row: where its values after `id` start (0 for many rows). */
  row: number
  count: number
}

/**
 * `$1` the execution context, `$2` the rows as JSON (or the one row's `id`), then who writes (a
 * delete names none), the guard's tags, the claim's values, the outbox's or the quiet check's,
 * the attached write's, and last the one row's other values.
 */
function slotsOf (shape: WriteShape, one: readonly unknown[] | null): Slots {
  let n = 3
  const by = shape.kind === 'delete' ? 0 : n++
  const pre = shape.guard?.by === 'preconditions' ? shape.guard : null
  const allowed = pre?.allowed == null ? 0 : n++
  const refused = pre?.refused == null ? 0 : n++
  const claim = n
  n += shape.claim?.values.length ?? 0
  const outbox = n
  n += shape.outbox?.values.length ?? 0
  const quiet = n
  n += shape.quiet?.values.length ?? 0
  const attached = n
  n += shape.attached?.values.length ?? 0
  const row = one === null ? 0 : n
  if (one !== null) n += one.length - 1
  return { by, allowed, refused, claim, outbox, quiet, attached, row, count: n - 1 }
}

/** Whether `guard` writes every row or none (`Guard`). */
function allSeen (guard: Guard | null): boolean {
  return guard?.by === 'seen' && guard.all === true
}

/** What makes two statements of a table one text: everything but the values. */
function keyOf (shape: WriteShape, one: boolean): string {
  const g = shape.guard
  const guard = g === null ? '-' : g.by === 'seen' ? (g.all === true ? 'seen-all' : 'seen') : `pre${g.allowed === null ? '' : 'a'}${g.refused === null ? '' : 'r'}${g.live ? 'l' : ''}`
  return [shape.kind, shape.set.map(c => c.field).join(','), guard, shape.claim?.key ?? '-', shape.outbox?.key ?? '-', shape.quiet?.key ?? '-', shape.attached?.key ?? '-', shape.current ? 'cur' : '-', shape.returning, one ? '1' : 'n'].join('|')
}

/**
 * One statement, one round trip, one implicit transaction: the write as the CTE `w`, after the
 * claim `k` it depends on and before the outbox rows `o` and the attached write `f` that depend
 * on it. When it carries any of them, or `current` outside `writesAlone` (a PUT that may create), it answers one row more
 * than it wrote, or one row with nulls when it wrote none:
 * `svc:claimed` (the claim was taken, or there was none), `svc:events` (outbox rows written),
 * with `current` the row's `svc:etag` and `svc:deleted` before the write, and with a quiet
 * check `svc:wanted` (a subscription wants the event: nothing was written); with `returning:
 * 'count'`, that one row alone, its `svc:count` the rows written. Otherwise it is the write
 * alone, which answers its rows (`writesAlone`), or none with `'count'` (the driver's row
 * count says how many it wrote); an upsert's rows also say whether each was inserted
 * (`svc:created`). Its text is made once per shape (`texts`, the table's own), so a request
 * only gathers values.
 */
export function writeStatement (t: WriteTable, texts: Map<string, string>, shape: WriteShape, ctx: string, by: string | null, rows: WriteRows): { text: string, values: unknown[] } {
  const one = typeof rows === 'string' ? null : rows
  const slots = slotsOf(shape, one)
  const values = new Array<unknown>(slots.count)
  values[0] = ctx
  if (one === null) values[1] = rows
  else {
    values[1] = one[0]
    for (let i = 1; i < one.length; i++) values[slots.row + i - 2] = one[i]
  }
  if (slots.by > 0) values[slots.by - 1] = by
  const guard = shape.guard
  if (guard?.by === 'preconditions') {
    if (guard.allowed !== null) values[slots.allowed - 1] = guard.allowed
    if (guard.refused !== null) values[slots.refused - 1] = guard.refused
  }
  shape.claim?.values.forEach((v, i) => { values[slots.claim - 1 + i] = v })
  shape.outbox?.values.forEach((v, i) => { values[slots.outbox - 1 + i] = v })
  shape.quiet?.values.forEach((v, i) => { values[slots.quiet - 1 + i] = v })
  shape.attached?.values.forEach((v, i) => { values[slots.attached - 1 + i] = v })
  const key = keyOf(shape, one !== null)
  let text = texts.get(key)
  if (text === undefined) {
    text = statementText(t, shape, slots, one !== null)
    texts.set(key, text)
  }
  return { text, values }
}

function statementText (t: WriteTable, shape: WriteShape, slots: Slots, one: boolean): string {
  const $ctx = '$1'
  const $by = `$${slots.by}::text`
  const upsert = shape.kind === 'upsert'
  const answered = shape.returning === 'row' ? t.all : shape.returning === 'etag' ? t.all.filter(c => c.field === 'id' || c.field === 'etag') : []
  // The outbox's snapshot is made of the whole row, whatever the statement answers; a count
  // answers none, but its CTE's rows are counted (and an attached write joins them by id).
  const returned = shape.outbox !== null ? t.all : answered.length > 0 || writesAlone(shape) ? answered : t.all.filter(c => c.field === 'id')
  // An upsert's rows say which were inserted: a row it replaced carries the lock its conflict took.
  const answers = [...returned.map(c => `t.${c.ident}`), ...(upsert ? ['(t.xmax = 0) AS "svc:created"'] : [])]
  const returning = answers.length === 0 ? '' : `\n        RETURNING ${answers.join(', ')}`
  const guard = shape.guard
  const seen = guard?.by === 'seen'
  if (upsert && (seen || (guard?.by === 'preconditions' && guard.allowed !== null) || shape.returning === 'count')) {
    // An absent row is created whatever ETag a guard names; the caller tells insertions from replacements by the rows.
    throw new TypeError('write-statement: an upsert takes no ETag a row must have, and answers its rows')
  }
  const record = recordColumns(shape.kind === 'insert' || upsert ? t.columns : shape.kind === 'update' ? shape.set : [], seen, slots)
  const only = (...idents: string[]): RecordColumn[] => record.filter(c => idents.includes(c.ident))
  const guarded: string[] = []
  if (guard?.by === 'seen') guarded.push('t.etag = x.seen')
  else if (guard?.by === 'preconditions') {
    if (guard.allowed !== null) guarded.push(`t.etag = ANY($${slots.allowed}::text[])`)
    if (guard.refused !== null) guarded.push(`t.etag <> ALL($${slots.refused}::text[])`)
    if (guard.live) guarded.push('t."deletedDateTime" IS NULL')
  }
  const ctes: string[] = []
  const conditions: string[] = []
  // A statement of CTEs reads the check once (`q`), however many of its parts it guards; the
  // write alone has it once in its WHERE.
  const alone = writesAlone(shape)
  let quiet = shape.quiet === null ? null : shape.quiet.sql(slots.quiet, $ctx)
  if (quiet !== null && !alone) {
    ctes.push(`q AS (SELECT ${quiet} AS quiet)`)
    quiet = '(SELECT quiet FROM q)'
  }
  if (quiet !== null) conditions.push(quiet)
  // Every row locked at its ETag, in the order of the ids, or none written.
  let held: string | null = null
  if (allSeen(guard)) {
    ctes.push(`g AS (SELECT t.id FROM ${t.T} AS t JOIN ${rowsAs(only('id', 'seen'), one)}
        ON ${[`t.ctx = ${$ctx}`, 't.id = x.id', ...guarded].join(' AND ')} ORDER BY t.id FOR UPDATE OF t)`)
    held = `(SELECT count(*) FROM g) = ${one ? '1' : 'jsonb_array_length($2::jsonb)'}`
    conditions.push(held)
  }
  const deleted = `${t.all.some(c => c.field === 'deletedDateTime') ? 't."deletedDateTime"' : 'NULL::timestamptz'} AS deleted`
  // The row locked before the claim, under no condition but being there, is what the write
  // found: that lock's CTE answers `current` itself, with no read of its own.
  const lockFinds = shape.current && !upsert && held === null && shape.claim !== null && shape.guard !== null && guarded.length === 0
  if (shape.current && !lockFinds) {
    ctes.push(`cur AS (SELECT t.etag, ${deleted}
      FROM ${t.T} AS t JOIN ${rowsAs(only('id'), one)} ON t.ctx = ${$ctx} AND t.id = x.id)`)
  }
  if (shape.claim !== null) {
    let when: string | null = null
    if (upsert) {
      // The row, where there is one, locked as the upsert will find it: the key is claimed for
      // the insertion, or for a replacement its guard allows, and never for one it refuses.
      if (guarded.length > 0) {
        ctes.push(`g AS (SELECT ${guarded.join(' AND ')} AS allowed FROM ${t.T} AS t JOIN ${rowsAs(only('id'), one)}
        ON t.ctx = ${$ctx} AND t.id = x.id FOR UPDATE OF t)`)
        when = 'NOT EXISTS (SELECT 1 FROM g WHERE NOT g.allowed)'
      }
    } else if (held !== null) {
      when = held
    } else if (shape.guard !== null) {
      // The row is locked as the write was decided on before the key is claimed: a change made
      // meanwhile, or a row that is not there, leaves both the key and the row alone.
      ctes.push(`g AS (SELECT ${lockFinds ? `t.etag, ${deleted}` : '1'} FROM ${t.T} AS t JOIN ${rowsAs(only('id', 'seen'), one)}
        ON ${[`t.ctx = ${$ctx}`, 't.id = x.id', ...guarded].join(' AND ')} FOR UPDATE OF t)`)
      when = 'EXISTS (SELECT 1 FROM g)'
    }
    // Nor is the key claimed for a write that a subscription stops.
    if (quiet !== null) when = when === null ? quiet : `${when} AND ${quiet}`
    ctes.push(shape.claim.sql(slots.claim, when))
    conditions.push('EXISTS (SELECT 1 FROM k)')
  }
  const x = rowsAs(record, one)
  const match = [`t.ctx = ${$ctx}`, 't.id = x.id', ...guarded, ...conditions].join(' AND ')
  // now() is when the transaction began: a write that waited for the row's lock would stamp a
  // time before the change it replaces, and If-Unmodified-Since would miss that change. The
  // stamp never goes back.
  const now = 'greatest(now(), t."modifiedDateTime")'
  const stamp = `etag = x.etag, "modifiedDateTime" = ${now}, "modifiedBy" = ${$by}`
  const server = ['id', 'etag', '"createdDateTime"', '"createdBy"', '"modifiedDateTime"', '"modifiedBy"']
  const insert = `INSERT INTO ${t.T} AS t (ctx, ${server.join(', ')}, ${t.columns.map(c => c.ident).join(', ')})
        SELECT ${$ctx}, x.id, x.etag, now(), ${$by}, now(), ${$by}, ${t.columns.map(c => `x.${c.ident}`).join(', ')}
        FROM ${x}${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`
  let write: string
  switch (shape.kind) {
    case 'insert':
      write = `${insert}${returning}`
      break
    case 'upsert': {
      // A replacement keeps the creation stamps and the read-only fields, as an update's does.
      const replace = ['etag = excluded.etag', `"modifiedDateTime" = ${now}`, `"modifiedBy" = ${$by}`, ...shape.set.map(c => `${c.ident} = excluded.${c.ident}`)]
      write = `${insert}
        ON CONFLICT (ctx, id) DO UPDATE SET ${replace.join(', ')}${guarded.length > 0 ? ` WHERE ${guarded.join(' AND ')}` : ''}${returning}`
      break
    }
    case 'update':
      write = `UPDATE ${t.T} AS t SET ${[stamp, ...shape.set.map(c => `${c.ident} = x.${c.ident}`)].join(', ')}
        FROM ${x} WHERE ${match}${returning}`
      break
    case 'mark-deleted':
      write = `UPDATE ${t.T} AS t SET etag = x.etag, "deletedDateTime" = ${now}, "deletedBy" = ${$by}
        FROM ${x} WHERE ${match}${returning}`
      break
    case 'restore':
      write = `UPDATE ${t.T} AS t SET ${stamp}, "deletedDateTime" = NULL, "deletedBy" = NULL
        FROM ${x} WHERE ${match}${returning}`
      break
    case 'delete':
      write = `DELETE FROM ${t.T} AS t USING ${x} WHERE ${match}${returning}`
      break
  }
  // The write alone: no CTE around it, which would cost the database a scan of its result.
  if (alone) return write
  ctes.push(`w AS (${write})`)
  if (shape.outbox !== null) {
    const snapshot = `ARRAY[${t.all.map(c => `w.${c.ident}::text`).join(', ')}]`
    ctes.push(shape.outbox.sql(slots.outbox, upsert ? { source: 'w', snapshot, ctx: $ctx, created: 'w."svc:created"' } : { source: 'w', snapshot, ctx: $ctx }))
  }
  // Run to its end whether or not the answer reads it, as every data-modifying CTE is.
  if (shape.attached !== null) ctes.push(shape.attached.sql(slots.attached, { source: 'w', ctx: $ctx }))
  const found = [
    `${shape.claim === null ? 'true' : 'EXISTS (SELECT 1 FROM k)'} AS "svc:claimed"`,
    `${shape.outbox === null ? '0' : '(SELECT count(*) FROM o)::integer'} AS "svc:events"`,
    ...(shape.returning === 'count' ? ['(SELECT count(*) FROM w)::integer AS "svc:count"'] : []),
    ...(shape.current ? [`(SELECT etag FROM ${lockFinds ? 'g' : 'cur'}) AS "svc:etag"`, `(SELECT deleted FROM ${lockFinds ? 'g' : 'cur'}) AS "svc:deleted"`] : []),
    ...(quiet === null ? [] : [`NOT ${quiet} AS "svc:wanted"`])
  ]
  if (answered.length === 0) return `WITH ${ctes.join(',\n')}\nSELECT ${found.join(', ')}`
  const columns = [...answered.map(c => `w.${c.ident}`), ...(upsert ? ['w."svc:created"'] : [])].join(', ')
  return `WITH ${ctes.join(',\n')}\nSELECT ${columns}, c.* FROM (SELECT ${found.join(', ')}) AS c LEFT JOIN w ON true`
}
