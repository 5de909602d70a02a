import { checkpointIfDue } from './embedded-checkpoint.js'
import type { Queryable, StoreLogger } from './types.js'

/**
 * What autovacuum does on a PostgreSQL server, done by the embedded store for itself. PGlite
 * runs PostgreSQL as one backend with no background processes: nothing ever vacuums or
 * analyzes its tables. Without it, every row a write replaces or deletes stays on disk (a table
 * rewritten ten times grows about tenfold, in memory or in `DATA_DIR`), the
 * planner never learns the tables' statistics, and no row is ever frozen against transaction
 * ID wraparound.
 *
 * A pass decides as autovacuum does, from the server's own settings and statistics: a table
 * is vacuumed once its dead rows, or its rows inserted since its last vacuum, pass their
 * threshold (a base plus a share of the table), or once its oldest transaction or multixact
 * ID is older than the freeze age; analyzed once its rows changed since its last analysis pass
 * theirs. One statement reads them all, then one statement per table and kind of work; PGlite
 * runs one statement at a time, so requests wait while a table is vacuumed or analyzed, and run
 * between two statements.
 */

/**
 * The tables a pass read as needing work, one statement; `$1`: the schema (null: every one, the
 * catalogs' too, whose rows must be frozen against wraparound as any other's).
 */
const NEEDS = `WITH settings AS (
    SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS vt,
      current_setting('autovacuum_vacuum_scale_factor')::float8 AS vs,
      coalesce(current_setting('autovacuum_vacuum_max_threshold', true)::float8, 'Infinity') AS vmax,
      current_setting('autovacuum_vacuum_insert_threshold')::float8 AS it,
      current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "is",
      current_setting('autovacuum_analyze_threshold')::float8 AS at,
      current_setting('autovacuum_analyze_scale_factor')::float8 AS "as",
      current_setting('autovacuum_freeze_max_age')::float8 AS xmax,
      current_setting('autovacuum_multixact_freeze_max_age')::float8 AS mmax
  ), tables AS (
    SELECT format('%I.%I', s.schemaname, s.relname) AS name, greatest(c.reltuples, 0) AS n,
      s.n_dead_tup AS dead, s.n_ins_since_vacuum AS inserted, s.n_mod_since_analyze AS changed,
      age(c.relfrozenxid) AS xid_age, mxid_age(c.relminmxid) AS mxid_age
    FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE c.relkind IN ('r', 'm') AND s.schemaname <> 'pg_toast'
      AND ($1::text IS NULL OR s.schemaname = $1::text)
  )
  SELECT name,
    dead > least(vt + vs * n, vmax) OR inserted > it + "is" * n OR xid_age > xmax OR mxid_age > mmax AS vacuum,
    changed > at + "as" * n AS analyze
  FROM tables, settings
  WHERE dead > least(vt + vs * n, vmax) OR inserted > it + "is" * n OR xid_age > xmax OR mxid_age > mmax OR changed > at + "as" * n
  ORDER BY name`

export interface VacuumedTable {
  /** Schema-qualified, quoted as SQL names it. */
  table: string
  vacuumed: boolean
  analyzed: boolean
  /** Its statements' time, together. */
  millis: number
}

/**
 * One pass: vacuums and analyzes each table of `schema` (null: of every schema) that needs it,
 * letting the event loop turn before each statement. A table that needs both gets two
 * statements, `VACUUM` then `ANALYZE`, not `VACUUM (ANALYZE)`: requests wait for the longer of
 * the two rather than for both.
 */
export async function vacuumPass (db: Queryable, schema: string | null = null, clock: () => number = Date.now): Promise<VacuumedTable[]> {
  const { rows } = await db.query<{ name: string, vacuum: boolean, analyze: boolean }>(NEEDS, [schema])
  const done: VacuumedTable[] = []
  const run = async (sql: string): Promise<number> => {
    await new Promise<void>((resolve) => { setImmediate(resolve) })
    const started = clock()
    await db.query(sql)
    return clock() - started
  }
  for (const r of rows) {
    const millis = (r.vacuum ? await run(`VACUUM ${r.name}`) : 0) + (r.analyze ? await run(`ANALYZE ${r.name}`) : 0)
    done.push({ table: r.name, vacuumed: r.vacuum, analyzed: r.analyze, millis })
  }
  return done
}

export interface VacuumSchedule {
  /** No pass after this; resolves once the one running, if any, has ended. */
  stop: () => Promise<void>
}

/** A pass whose statements took this long is logged: requests waited for it. */
const LOG_MILLIS = 100

export interface VacuumScheduleOptions {
  /** Between the start (or the end of a pass) and the next pass; 0 never. */
  intervalMillis: number
  /** The schema to vacuum; null every schema. */
  schema: string | null
  log: StoreLogger
  /** Times the statements, for the log. */
  clock?: () => number
}

/**
 * Runs `vacuumPass`, then a checkpoint if one is due (embedded-checkpoint.ts), `intervalMillis`
 * after the end of the last pass; a pass that fails is logged and the next one tries again.
 */
export function scheduleVacuum (db: Queryable, opts: VacuumScheduleOptions): VacuumSchedule {
  const { intervalMillis, schema, log, clock = Date.now } = opts
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  const pass = async (): Promise<void> => {
    const tables = await vacuumPass(db, schema, clock)
    const checkpoint = await checkpointIfDue(db, clock)
    const millis = tables.reduce((sum, d) => sum + d.millis, 0) + (checkpoint ?? 0)
    if (millis >= LOG_MILLIS) log.info({ tables, checkpointMillis: checkpoint, millis }, 'store: vacuumed the embedded database')
  }
  const tick = (): void => {
    timer = undefined
    running = pass().catch((err: unknown) => {
      if (!stopped) log.warn({ err }, 'store: vacuuming the embedded database failed; trying again later')
    }).finally(schedule)
  }
  const schedule = (): void => {
    if (stopped || intervalMillis === 0) return
    timer = setTimeout(tick, intervalMillis)
    // Never what keeps the process alive.
    timer.unref()
  }
  schedule()
  return {
    async stop () {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      await running
    }
  }
}
