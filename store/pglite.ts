import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite, type MemoryFS, type Results, type Transaction } from '@electric-sql/pglite'
import { LOCK_FILE, type DataDirLock } from './data-dir-lock.js'
import { dropTemplate, readTemplate, saveTemplate, templateFile, type Snapshot } from './pglite-template.js'
import { ISOLATION_SQL, type Driver } from './driver.js'
import { scheduleVacuum, type VacuumSchedule } from './embedded-vacuum.js'
import { fromDatabaseError, Unavailable } from './errors.js'
import { OID, parseDate, parseInt8, parseTimestamptz } from './parsers.js'
import { quoteIdent } from './quote.js'
import type { QueryResult, Queryable, StoreLogger } from './types.js'

export interface PgliteDriverOptions {
  /** A directory (created if missing), or `'memory'`. */
  dataDir: string
  searchPath?: string
  /**
   * A new cluster (in memory, or in a data directory holding nothing yet) starts from a cached
   * snapshot of an empty one, several times faster than initdb. The snapshot is made by the
   * first in-memory start, in this folder (`true`: `node_modules/.cache/svc-conventions`).
   * Default true.
   */
  template?: boolean | string
  /** The data directory's lock, released when the driver closes (or fails to start). */
  lock?: DataDirLock
  /** PostgreSQL's `shared_buffers`, set up at every start: the larger, the slower the start. Default `'16MB'`. */
  sharedBuffers?: string | undefined
  /** How often the tables are vacuumed and analyzed where they need it (embedded-vacuum.ts), and a checkpoint made if due (embedded-checkpoint.ts); 0 never. Default a minute. */
  vacuumMillis?: number | undefined
  /** PostgreSQL's `default_statistics_target`: the sample an `ANALYZE` reads, which requests wait for. Default 10. */
  statisticsTarget?: number | undefined
  /** Told of long vacuum passes and failed ones, and of transactions that held the database long (`HELD_MILLIS`). */
  logger?: StoreLogger
  /** Times transactions, in milliseconds (tests). Default `performance.now`. */
  clock?: () => number
}

/**
 * A transaction that held PGlite's one connection this long is logged: every other request
 * waited for it (docs/operations.md, "What it serializes").
 */
export const HELD_MILLIS = 250

/**
 * The file-system errors PGlite reports by their Emscripten number alone (its `ErrnoError`
 * has no message): an operator reads what to fix, not a bare "failed to start".
 */
const FILE_SYSTEM_ERRORS = new Map<number, string>([
  [51, 'no space left on the device (ENOSPC)'],
  [19, 'the disk quota is used up (EDQUOT)'],
  [69, 'the file system is read-only (EROFS)'],
  [2, 'permission denied (EACCES)'],
  [63, 'operation not permitted (EPERM)'],
  [29, 'an input/output error (EIO)']
])

/** Why the embedded database did not start, as the start's error says it: the file system's reason when PGlite gives one. */
export function startFailure (err: unknown, dataDir: string | undefined): string {
  const errno = (err as { name?: unknown, errno?: unknown } | null)?.name === 'ErrnoError' ? (err as { errno: unknown }).errno : undefined
  const reason = typeof errno === 'number' ? FILE_SYSTEM_ERRORS.get(errno) : undefined
  if (reason === undefined) return 'The embedded database failed to start.'
  return `The embedded database failed to start: ${reason}${dataDir === undefined ? '' : ` in ${dataDir}`}.`
}

/**
 * Embedded PostgreSQL: one connection in this process. PGlite already serializes it
 * soundly, and this driver relies on that rather than adding a lock of its own:
 * `db.transaction` holds PGlite's transaction mutex from BEGIN to COMMIT, and
 * `db.query`/`db.exec` take that same mutex, so a statement issued outside a running
 * transaction waits for it to end and never runs inside it; statements inside take
 * the query mutex one at a time. Hence transactions must stay short, and isolation
 * levels cost nothing here: transactions never overlap.
 */
export function createPgliteDriver (opts: PgliteDriverOptions): Driver {
  const memory = opts.dataDir === 'memory'
  const dataDir = memory ? undefined : resolve(opts.dataDir)
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true })
  const fresh = dataDir === undefined || isEmpty(dataDir)
  const template = fresh && opts.template !== false ? templatePath(typeof opts.template === 'string' ? opts.template : undefined) : undefined
  const snapshot = template === undefined ? undefined : readTemplate(template)
  // One options object: PGlite 0.5 drops the options of `new PGlite(undefined, options)`.
  // Server settings at start cost no statement; the buffer cache is PGlite's longest step of a start.
  // wal_init_zero: by default each new 16 MB WAL segment is first written full of zeros, and
  // every request waited for that (docs/operations.md). The zeros reserve the disk space ahead;
  // PGlite runs without fsync (-F) anyway.
  // max_wal_size and min_wal_size: the WAL between two of the store's own checkpoints, and the
  // files kept for reuse (embedded-checkpoint.ts): tens of megabytes, not a server's gigabyte.
  // default_statistics_target: the store's own ANALYZE (embedded-vacuum.ts) runs in this thread,
  // and its time grows with the sample, 300 rows per unit of the target.
  const startParams = [...PGlite.defaultStartParams, '-c', 'TimeZone=UTC', '-c', `shared_buffers=${opts.sharedBuffers ?? '16MB'}`,
    '-c', 'wal_init_zero=off', '-c', 'max_wal_size=64MB', '-c', 'min_wal_size=32MB',
    '-c', `default_statistics_target=${opts.statisticsTarget ?? 10}`]
  const make = (fs: MemoryFS | undefined): PGlite => new PGlite({
    dataDir,
    startParams,
    ...(fs === undefined ? {} : { fs }),
    parsers: { [OID.int8]: parseInt8, [OID.date]: parseDate, [OID.timestamptz]: parseTimestamptz }
  })
  // A data directory gets the snapshot's files before PGlite opens it; in memory, the snapshot
  // is PGlite's file system.
  if (snapshot !== undefined && dataDir !== undefined) writeSnapshot(snapshot, dataDir)
  let db = make(snapshot !== undefined && memory ? snapshot.memoryFs() : undefined)

  async function open (): Promise<void> {
    try {
      await started
    } catch (err) {
      throw new Unavailable(startFailure(err, dataDir), { cause: err })
    }
  }

  const session = (q: Pick<Transaction, 'query' | 'exec'>): Queryable => ({
    async query<R> (sql: string, params?: readonly unknown[]) {
      try {
        return toResult(await q.query<R>(sql, params as unknown[] | undefined))
      } catch (err) {
        throw mapped(err)
      }
    },
    async exec (sql) {
      try {
        await q.exec(sql)
      } catch (err) {
        throw mapped(err)
      }
    }
  })
  let outside = session(db)
  let vacuum: VacuumSchedule | undefined
  const clock = opts.clock ?? (() => performance.now())
  const held = (millis: number): void => {
    if (millis < HELD_MILLIS || opts.logger === undefined) return
    opts.logger.warn({ millis: Math.round(millis) }, 'store: a transaction held the embedded database this long; any request made meanwhile waited for it (on a PostgreSQL server they would run side by side)')
  }

  const started = (async () => {
    let initdb = snapshot === undefined
    try {
      await db.waitReady
    } catch (err) {
      // A snapshot this PGlite refuses is dropped, and the cluster made afresh (in a data
      // directory, from nothing again: it held nothing before).
      if (template === undefined || snapshot === undefined) throw err
      dropTemplate(template)
      if (dataDir !== undefined) emptyDir(dataDir)
      db = make(undefined)
      outside = session(db)
      initdb = true
      await db.waitReady
    }
    // Snapshots come from memory only: one dumped from a data directory would carry its lock file.
    if (template !== undefined && initdb && memory) await saveTemplate(db, template)
    if (opts.searchPath !== undefined) await db.exec(`SET search_path TO ${quoteIdent(opts.searchPath)}`)
    const silent = (): void => {}
    vacuum = scheduleVacuum(outside, { intervalMillis: opts.vacuumMillis ?? 60_000, schema: null, log: opts.logger ?? { info: silent, warn: silent, error: silent } })
  })()
  // Observed by every operation through open(); never an unhandled rejection.
  started.catch(() => {})

  return {
    kind: 'pglite',
    async query (sql, params) {
      await open()
      return await outside.query(sql, params)
    },
    async exec (sql) {
      await open()
      await outside.exec(sql)
    },
    async transaction (isolation, fn) {
      await open()
      // PGlite runs in this thread, and a chain of transactions (a job's slices) settles as
      // promises only: without a turn of the event loop before each, the server would read no
      // request until the chain ended. Requests' own statements then get their turn between.
      await new Promise<void>((resolve) => { setImmediate(resolve) })
      // Tells the caller's own error apart from one of BEGIN, COMMIT or ROLLBACK.
      let thrown: { err: unknown } | undefined
      // From BEGIN (the connection taken) to the end of COMMIT or ROLLBACK.
      let began: number | undefined
      try {
        return await db.transaction(async (ptx) => {
          began = clock()
          const tx = session(ptx)
          // PGlite sends a bare BEGIN; SET TRANSACTION must then be the first statement.
          if (isolation !== 'read committed') await tx.exec(`SET TRANSACTION ISOLATION LEVEL ${ISOLATION_SQL[isolation]}`)
          try {
            return await fn(tx)
          } catch (err) {
            thrown = { err }
            throw err
          }
        })
      } catch (err) {
        if (thrown !== undefined && thrown.err === err) throw err
        // COMMIT of an aborted transaction rejects with 25P02 → TransactionAborted.
        throw mapped(err)
      } finally {
        if (began !== undefined) held(clock() - began)
      }
    },
    async listen (channel, onNotify) {
      await open()
      // PGlite sends LISTEN on its one connection and calls back after the statement whose
      // transaction committed the NOTIFY; a quoted name keeps its case (its toPostgresName).
      const name = quoteIdent(channel)
      const callback = (): void => { onNotify() }
      try {
        await db.listen(name, callback)
      } catch (err) {
        throw mapped(err)
      }
      return async () => {
        try {
          await db.unlisten(name, callback)
        } catch (err) {
          throw mapped(err)
        }
      }
    },
    async close () {
      try {
        try {
          await started
        } catch {
          return // never started: nothing to close
        }
        await vacuum?.stop()
        await db.close()
      } finally {
        opts.lock?.release()
      }
    }
  }
}

/** True when the data directory holds no cluster nor anything else (its lock file aside). */
function isEmpty (dir: string): boolean {
  return readdirSync(dir).every((name) => name === LOCK_FILE)
}

/**
 * Writes the snapshot's cluster into the (empty) data directory; PGlite then starts on it as on
 * any cluster of its own. Should a write fail, what was written is removed and PGlite runs
 * initdb there instead, which reports the folder's fault if it has one.
 */
function writeSnapshot (snapshot: Snapshot, dir: string): void {
  try {
    snapshot.writeTo(dir)
  } catch {
    emptyDir(dir)
  }
}

/** Removes what a failed start wrote into a data directory that was empty, keeping the lock. */
function emptyDir (dir: string): void {
  for (const name of readdirSync(dir)) if (name !== LOCK_FILE) rmSync(join(dir, name), { recursive: true, force: true })
}

/** The snapshot's file, or undefined when PGlite's install cannot be located (no cache then). */
function templatePath (dir: string | undefined): string | undefined {
  try {
    return templateFile(dir)
  } catch {
    return undefined
  }
}

/** A database error as a typed store error; anything else (a parameter PGlite cannot serialize) as it is. */
function mapped (err: unknown): unknown {
  return fromDatabaseError(err) ?? err
}

function toResult<R> (r: Results<R>): QueryResult<R> {
  // PGlite counts affected rows only for INSERT/UPDATE/DELETE; pg also counts SELECT rows.
  // PGlite 0.5 always sets affectedRows; its type says it may be missing.
  /* c8 ignore next */
  const affected = r.affectedRows ?? 0
  return { rows: r.rows, rowCount: Math.max(affected, r.rows.length) }
}
