import { resolve } from 'node:path'
import { buildStore } from './base.js'
import { describeTarget, serverTarget } from './connection-errors.js'
import { lockDataDir } from './data-dir-lock.js'
import type { Driver } from './driver.js'
import type { PoolOptions, Store, StoreKind, StoreLogger, StoreOptions } from './types.js'

const defaults = {
  dataDir: './data',
  pool: { max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 10_000, statementTimeoutMillis: 30_000, preparedStatements: 100, pgbouncer: false }
} as const

function noop (): void {}
const silent: StoreLogger = { info: noop, warn: noop, error: noop }

// Goes into the connection's startup `options` unquoted, so only a plain identifier.
const SEARCH_PATH = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/
/**
 * The longest delay a Node timer waits, in ms (2^31 - 1, about 24.8 days): setTimeout takes a
 * longer one as 1 ms. Also PostgreSQL's largest statement_timeout. (The plugins' MAX_TIMER_MILLIS;
 * store/ imports nothing from plugins/.)
 */
const TIMER_MAX = 2_147_483_647
const TIMER_RULE = `a positive integer of milliseconds up to ${TIMER_MAX} (about 24.8 days, the longest a timer waits)`
// A PostgreSQL memory size, as `shared_buffers` takes it.
const MEMORY_SIZE = /^[1-9][0-9]{0,8}(kB|MB|GB)$/

/**
 * Opens the store: a PostgreSQL server when `databaseUrl` is set (reference service,
 * `DATABASE_URL`), else embedded PGlite in `dataDir` (`DATA_DIR`; `'memory'` keeps it
 * in memory). Returns at once; the driver (`pg` or PGlite, each loaded only when used) starts
 * in the background, and `ready()` tells when the database answers. Every statement runs with
 * `TimeZone=UTC` and the pool's statement timeout. Throws a TypeError naming the option for an
 * invalid one, and `DataDirInUse` when another process holds `dataDir`.
 */
export function createStore (opts: StoreOptions = {}): Store {
  const logger = opts.logger ?? silent
  const { databaseUrl, searchPath } = opts
  if (searchPath !== undefined && (typeof searchPath !== 'string' || !SEARCH_PATH.test(searchPath))) {
    throw new TypeError(`createStore: searchPath must be a plain identifier (letters, digits, _), got ${JSON.stringify(searchPath)}`)
  }
  if (databaseUrl !== undefined) {
    if (typeof databaseUrl !== 'string' || !/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new TypeError(`createStore: databaseUrl must be a postgres:// or postgresql:// URL, got ${JSON.stringify(redact(databaseUrl))}`)
    }
    const pool = poolOptions(opts.pool)
    // A session of its own is what PgBouncer's transaction mode does not give.
    if (pool.pgbouncer && searchPath !== undefined) throw new TypeError('createStore: searchPath cannot be used with pool.pgbouncer (each transaction may run on another server connection); set the search_path of the database or role instead')
    const target = serverTarget(databaseUrl)
    const driver = lazyDriver('pg', async () => (await import('./pg.js')).createPgDriver({ databaseUrl, pool, searchPath, logger, target }))
    return buildStore(driver, logger, storeLocation(opts))
  }
  const dataDir = opts.dataDir ?? defaults.dataDir
  if (typeof dataDir !== 'string' || dataDir.length === 0) {
    throw new TypeError(`createStore: dataDir must be a directory path or 'memory', got ${JSON.stringify(dataDir)}`)
  }
  // The PGlite driver's own default applies when it is not set.
  const { sharedBuffers } = opts
  if (sharedBuffers !== undefined && (typeof sharedBuffers !== 'string' || !MEMORY_SIZE.test(sharedBuffers))) {
    throw new TypeError(`createStore: sharedBuffers must be a size such as '16MB' (a whole number, then kB, MB or GB), got ${JSON.stringify(sharedBuffers)}`)
  }
  const { vacuumMillis } = opts
  if (vacuumMillis !== undefined && (!Number.isInteger(vacuumMillis) || vacuumMillis < 0 || vacuumMillis > TIMER_MAX)) {
    throw new TypeError(`createStore: vacuumMillis must be 0 (never) or ${TIMER_RULE}, got ${String(vacuumMillis)}`)
  }
  const { statisticsTarget } = opts
  if (statisticsTarget !== undefined && (!Number.isInteger(statisticsTarget) || statisticsTarget < 1 || statisticsTarget > 10000)) {
    throw new TypeError(`createStore: statisticsTarget must be an integer from 1 to 10000, got ${typeof statisticsTarget === 'string' ? JSON.stringify(statisticsTarget) : String(statisticsTarget)}`)
  }
  if (dataDir === 'memory') {
    return buildStore(lazyDriver('pglite', async () => (await import('./pglite.js')).createPgliteDriver({ dataDir, searchPath, sharedBuffers, vacuumMillis, statisticsTarget, logger })), logger, storeLocation(opts))
  }
  const dir = resolve(dataDir)
  // Taken before anything opens the directory, and given back when the store closes.
  const lock = lockDataDir(dir)
  const driver = lazyDriver('pglite', async () => (await import('./pglite.js')).createPgliteDriver({ dataDir: dir, searchPath, sharedBuffers, vacuumMillis, statisticsTarget, lock, logger }), lock.release)
  return buildStore(driver, logger, storeLocation({ dataDir: dir }))
}

/**
 * Where a store opened with `opts` keeps its data, as `store.location` says it, without
 * opening it: for a start-up message.
 */
export function storeLocation (opts: Pick<StoreOptions, 'databaseUrl' | 'dataDir'> = {}): string {
  if (typeof opts.databaseUrl === 'string') return `PostgreSQL ${describeTarget(serverTarget(opts.databaseUrl))}`
  const dataDir = opts.dataDir ?? defaults.dataDir
  return dataDir === 'memory' ? 'PGlite in memory' : `PGlite in ${resolve(dataDir)}`
}

/**
 * A driver whose engine module is imported on first need, so that an application using the
 * other engine, or none, never loads it. Once loaded, calls go straight through.
 */
function lazyDriver (kind: StoreKind, load: () => Promise<Driver>, onLoadFailure?: () => void): Driver {
  let driver: Driver | undefined
  const loading = load().then((d) => { driver = d; return d })
  loading.catch(() => { onLoadFailure?.() })
  return {
    kind,
    query: (sql, params, options) => driver !== undefined ? driver.query(sql, params, options) : loading.then((d) => d.query(sql, params, options)),
    exec: (sql) => driver !== undefined ? driver.exec(sql) : loading.then((d) => d.exec(sql)),
    transaction: (isolation, fn, timed) => driver !== undefined ? driver.transaction(isolation, fn, timed) : loading.then((d) => d.transaction(isolation, fn, timed)),
    listen: async (channel, onNotify) => await (await loading).listen(channel, onNotify),
    async close () {
      let d: Driver
      try {
        d = await loading
      } catch {
        return
      }
      await d.close()
    }
  }
}

function poolOptions (pool: PoolOptions = {}): Required<PoolOptions> {
  const out = { ...defaults.pool, ...pool }
  // The timeouts are timers' delays (pg's, and the store's own wait for a statement's answer).
  const rules = [
    ['max', 1, Infinity, 'a positive integer'],
    ['connectionTimeoutMillis', 1, TIMER_MAX, TIMER_RULE],
    ['idleTimeoutMillis', 1, TIMER_MAX, TIMER_RULE],
    ['statementTimeoutMillis', 0, TIMER_MAX, `0 (no limit) or ${TIMER_RULE}`],
    ['preparedStatements', 0, Infinity, 'a non-negative integer']
  ] as const
  for (const [key, least, most, rule] of rules) {
    const value: unknown = out[key]
    if (!Number.isInteger(value) || (value as number) < least || (value as number) > most) {
      throw new TypeError(`createStore: pool.${key} must be ${rule}, got ${String(value)}`)
    }
  }
  if (typeof out.pgbouncer !== 'boolean') throw new TypeError(`createStore: pool.pgbouncer must be a boolean, got ${String(out.pgbouncer)}`)
  return out
}

/** A URL for an error message: the password never appears. */
function redact (value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@') : value
}

export { migrate, type MigrateOptions } from './migrate.js'
export { evolveTables, compareTables, previewTables, migrationText, type EvolveOptions, type SchemaChange, type SchemaComparison } from './evolve.js'
export {
  readMigrationFiles, applyMigrationFiles, appliedMigrations, writeMigrationFile, migrationSlug, MIGRATION_FILE,
  type MigrationFile, type ReadOptions
} from './migration-files.js'
export { quoteIdent } from './quote.js'
// A collection over an application's own table, answered as the query plugin's model asks.
export { readChildPage, readPage, type ReadPageOptions, type RowSource } from './read-page.js'
export { defaultColumn, defaultColumns, type FieldColumns } from './field-columns.js'
export type { StatementParts } from './sql-query.js'
export { LOCK_FILE } from './data-dir-lock.js'
export {
  StoreError,
  DataDirInUse,
  ConstraintViolation,
  UniqueViolation,
  ForeignKeyViolation,
  CheckViolation,
  NotNullViolation,
  SerializationFailure,
  TransactionAborted,
  Unavailable,
  StatementTimeout,
  ConnectionTimeout,
  SchemaMismatch,
  MigrationFailed,
  isStoreError,
  type SchemaDifference,
  type StoreErrorInit,
  type DataDirInUseInit,
  type ConstraintInit
} from './errors.js'
export type {
  IsolationLevel,
  Migration,
  PoolOptions,
  QueryResult,
  Queryable,
  Store,
  StoreKind,
  StoreLogger,
  StoreOptions,
  TransactionOptions,
  Tx
} from './types.js'
export { RefusalCounts } from './refusal-counts.js'
export { Purge, type RetentionRule, type ChildRows, type PurgeResult } from './purge.js'
