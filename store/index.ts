import { buildStore } from './base.js'
import { createPgDriver } from './pg.js'
import { createPgliteDriver } from './pglite.js'
import type { PoolOptions, Store, StoreLogger, StoreOptions } from './types.js'

const defaults = {
  dataDir: './data',
  pool: { max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 10_000, statementTimeoutMillis: 30_000, preparedStatements: 100 }
} as const

function noop (): void {}
const silent: StoreLogger = { info: noop, warn: noop, error: noop }

// Goes into the connection's startup `options` unquoted, so only a plain identifier.
const SEARCH_PATH = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * Opens the store: a PostgreSQL server when `databaseUrl` is set (reference service,
 * `DATABASE_URL`), else embedded PGlite in `dataDir` (`DATA_DIR`; `'memory'` keeps it
 * in memory). Returns at once; PGlite starts in the background, and `ready()` tells
 * when the database answers. Every session runs with `TimeZone=UTC`.
 * Throws a TypeError naming the option for an invalid one.
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
    return buildStore(createPgDriver({ databaseUrl, pool: poolOptions(opts.pool), searchPath, logger }), logger)
  }
  const dataDir = opts.dataDir ?? defaults.dataDir
  if (typeof dataDir !== 'string' || dataDir.length === 0) {
    throw new TypeError(`createStore: dataDir must be a directory path or 'memory', got ${JSON.stringify(dataDir)}`)
  }
  return buildStore(createPgliteDriver({ dataDir, searchPath }), logger)
}

function poolOptions (pool: PoolOptions = {}): Required<PoolOptions> {
  const out = { ...defaults.pool, ...pool }
  for (const key of ['max', 'connectionTimeoutMillis', 'idleTimeoutMillis'] as const) {
    const value: unknown = out[key]
    if (!Number.isInteger(value) || (value as number) < 1) {
      throw new TypeError(`createStore: pool.${key} must be a positive integer, got ${String(value)}`)
    }
  }
  for (const key of ['statementTimeoutMillis', 'preparedStatements'] as const) {
    const value: unknown = out[key]
    if (!Number.isInteger(value) || (value as number) < 0) {
      throw new TypeError(`createStore: pool.${key} must be a non-negative integer, got ${String(value)}`)
    }
  }
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
export {
  StoreError,
  ConstraintViolation,
  UniqueViolation,
  ForeignKeyViolation,
  CheckViolation,
  NotNullViolation,
  SerializationFailure,
  TransactionAborted,
  Unavailable,
  StatementTimeout,
  SchemaMismatch,
  MigrationFailed,
  isStoreError,
  type SchemaDifference,
  type StoreErrorInit,
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
