/**
 * Typed store errors. They are built from the SQLSTATE and the error fields
 * (constraint, table, column), never from message text, which is localised and
 * carries values. Their own message and enumerable fields hold no SQL and no
 * values; the driver's error stays reachable as `cause`, for logs only.
 * The resource layer maps them to problems: constraint violations to 409
 * (convention, Method rules 7), Unavailable to 503.
 */

export interface StoreErrorInit {
  /** The five-character SQLSTATE, when the database raised the error. */
  sqlState?: string
  cause?: unknown
}

export interface ConstraintInit extends StoreErrorInit {
  constraint?: string
  table?: string
  column?: string
}

export class StoreError extends Error {
  /** Stable code, e.g. `STORE_UNIQUE_VIOLATION`. */
  readonly code: string
  readonly sqlState: string | undefined
  /** True when running the same work again may succeed. */
  readonly retryable: boolean

  constructor (message: string, code = 'STORE_QUERY_FAILED', init: StoreErrorInit = {}, retryable = false) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'StoreError'
    this.code = code
    this.sqlState = init.sqlState
    this.retryable = retryable
  }
}

/** Any integrity constraint violation (SQLSTATE class 23): the change would leave invalid data. */
export class ConstraintViolation extends StoreError {
  readonly constraint: string | undefined
  readonly table: string | undefined
  readonly column: string | undefined

  constructor (message: string, code = 'STORE_CONSTRAINT_VIOLATION', init: ConstraintInit = {}) {
    super(message, code, init)
    this.name = 'ConstraintViolation'
    this.constraint = init.constraint
    this.table = init.table
    this.column = init.column
  }
}

/** 23505: a unique or primary key constraint; `constraint` names which one. */
export class UniqueViolation extends ConstraintViolation {
  constructor (init: ConstraintInit = {}) {
    super(`Unique constraint ${name(init.constraint)} on table ${name(init.table)} would be violated.`, 'STORE_UNIQUE_VIOLATION', init)
    this.name = 'UniqueViolation'
  }
}

/**
 * 23503. PostgreSQL and PGlite report both directions ("referenced row missing" on
 * insert/update of the referencing row, "still referenced" on delete/update of the
 * referenced row) with the same SQLSTATE and the same fields: `table` is always the
 * referencing table. Only the localised message differs, so the direction is left to
 * the caller, who knows which statement it ran.
 */
export class ForeignKeyViolation extends ConstraintViolation {
  constructor (init: ConstraintInit = {}) {
    super(`Foreign key constraint ${name(init.constraint)} on table ${name(init.table)} would be violated.`, 'STORE_FOREIGN_KEY_VIOLATION', init)
    this.name = 'ForeignKeyViolation'
  }
}

/** 23514. */
export class CheckViolation extends ConstraintViolation {
  constructor (init: ConstraintInit = {}) {
    super(`Check constraint ${name(init.constraint)} on table ${name(init.table)} would be violated.`, 'STORE_CHECK_VIOLATION', init)
    this.name = 'CheckViolation'
  }
}

/** 23502: `column` names the column that must not be null. */
export class NotNullViolation extends ConstraintViolation {
  constructor (init: ConstraintInit = {}) {
    super(`Column ${name(init.column)} of table ${name(init.table)} must not be null.`, 'STORE_NOT_NULL_VIOLATION', init)
    this.name = 'NotNullViolation'
  }
}

/** 40001 serialization failure or 40P01 deadlock: the transaction was rolled back and may be run again. */
export class SerializationFailure extends StoreError {
  constructor (init: StoreErrorInit = {}) {
    super(init.sqlState === '40P01'
      ? 'The transaction was chosen as a deadlock victim and rolled back; run it again.'
      : 'The transaction could not be serialized with concurrent transactions and was rolled back; run it again.',
    'STORE_SERIALIZATION_FAILURE', init, true)
    this.name = 'SerializationFailure'
  }
}

/** 25P02: a statement failed earlier in the transaction, so COMMIT rolled it back. */
export class TransactionAborted extends StoreError {
  constructor (init: StoreErrorInit = {}) {
    super('A statement failed inside the transaction, so it was rolled back; use savepoint() to let a statement fail alone.', 'STORE_TRANSACTION_ABORTED', init)
    this.name = 'TransactionAborted'
  }
}

/**
 * The database cannot be reached or dropped the connection, or the store is closed.
 * Retryable later (503), but not blindly: a write whose COMMIT was cut off may or may
 * not have been applied, which is why `transaction({ retries })` never retries it.
 */
export class Unavailable extends StoreError {
  constructor (reason = 'The database is unavailable.', init: StoreErrorInit = {}) {
    super(reason, 'STORE_UNAVAILABLE', init, true)
    this.name = 'Unavailable'
  }
}

/**
 * The server did not answer a statement within the pool's `statementTimeoutMillis`: an
 * Unavailable whose connection was closed. As any Unavailable, the statement may have run.
 */
export class StatementTimeout extends Unavailable {
  /** `ms` null: the server cancelled the statement itself (its statement_timeout, SQLSTATE 57014). */
  constructor (ms: number | null, init: StoreErrorInit = {}) {
    super(ms === null ? 'The database cancelled a statement that ran longer than the statement timeout.' : `The database did not answer within ${ms} ms.`, init)
    this.name = 'StatementTimeout'
  }
}

/**
 * No connection to the server within the pool's `connectionTimeoutMillis` (a server that does
 * not answer, or every connection of the pool busy that long): an Unavailable, nothing sent.
 */
export class ConnectionTimeout extends Unavailable {
  constructor (reason: string, init: StoreErrorInit = {}) {
    super(reason, init)
    this.name = 'ConnectionTimeout'
  }
}

export interface DataDirInUseInit {
  dataDir: string
  lockFile: string
  /** The process holding the directory, when its lock file names one. */
  pid?: number | undefined
  /** The holder's host, when it is not this one. */
  host?: string | undefined
}

/**
 * The embedded database's data directory is held by another process (or another store of
 * this one): PGlite is one backend per directory, so a second opener would lose writes.
 */
export class DataDirInUse extends StoreError {
  readonly dataDir: string
  readonly pid: number | undefined
  readonly lockFile: string

  constructor (init: DataDirInUseInit) {
    const holder = init.pid === undefined
      ? 'another process'
      : init.pid === process.pid && init.host === undefined
        ? `this process (pid ${init.pid}), by another store`
        : `process ${init.pid}${init.host === undefined ? '' : ` on host ${init.host}`}`
    // A process on another host cannot be checked from here: whether it is gone is for a person to say.
    const gone = init.host === undefined ? '' : ` (if it is gone, delete ${init.lockFile})`
    super(`The data directory ${init.dataDir} is in use by ${holder}: stop it, or use another data directory${gone}.`, 'STORE_DATA_DIR_IN_USE')
    this.name = 'DataDirInUse'
    this.dataDir = init.dataDir
    this.pid = init.pid
    this.lockFile = init.lockFile
  }
}

/** One way a table differs from its resource definition that the boot does not resolve alone. */
export interface SchemaDifference {
  table: string
  /** The column concerned; null for the table as a whole (its primary key). */
  column: string | null
  /** What differs, in words: `type integer in the table, bigint in the definition: …`. */
  difference: string
  /** Statements that would bring the table to the definition, to review first; `--` lines are comments. */
  sql: string[]
}

/**
 * The tables differ from the resource definitions in ways that lose data or may fail, so the
 * service does not start (nothing was changed). Unlike the other store errors, its message holds
 * SQL: it is meant for whoever starts the service, at boot, never for a client. The statements
 * name tables, columns, and values written in the definitions, never stored data.
 */
export class SchemaMismatch extends StoreError {
  readonly differences: readonly SchemaDifference[]

  constructor (differences: readonly SchemaDifference[]) {
    const lines = differences.map(d => {
      const where = d.column === null ? `table "${d.table}"` : `table "${d.table}", column "${d.column}"`
      return `- ${where}: ${d.difference}\n${d.sql.map(s => `    ${s}`).join('\n')}`
    })
    super([
      `The tables differ from the resource definitions in ${differences.length === 1 ? 'a way' : 'ways'} the service does not change by itself, so it did not start and changed nothing:`,
      ...lines,
      'Put the SQL that fits in a migration file (`svc-conventions migrate new <name>` writes one with it, docs/migrations.md), or change the definitions back.'
    ].join('\n'), 'STORE_SCHEMA_MISMATCH')
    this.name = 'SchemaMismatch'
    this.differences = differences
  }
}

/** A migration failed and was rolled back; the ones after it did not run. Its message carries the database's. */
export class MigrationFailed extends StoreError {
  readonly migration: string

  constructor (migration: string, cause: unknown) {
    super(`Migration ${migration} failed and was rolled back: ${reasonOf(cause)}`, 'STORE_MIGRATION_FAILED', { sqlState: (cause as StoreError | undefined)?.sqlState, cause })
    this.name = 'MigrationFailed'
    this.migration = migration
  }
}

/** The database's own words for a failed statement (a store error's cause), else the error's message. */
function reasonOf (err: unknown): string {
  const inner = err instanceof StoreError && err.cause instanceof Error ? err.cause : err
  if (!(inner instanceof Error)) return String(inner)
  const position = (inner as { position?: unknown }).position
  return typeof position === 'string' && position !== '' ? `${inner.message} (at character ${position})` : inner.message
}

export function isStoreError (err: unknown): err is StoreError {
  return err instanceof StoreError
}

function name (identifier: string | undefined): string {
  return identifier === undefined ? '(unknown)' : `"${identifier}"`
}

interface DatabaseErrorLike {
  code: string
  severity: string
  constraint?: string
  table?: string
  column?: string
}

/**
 * An error the database sent (pg's and PGlite's DatabaseError): a SQLSTATE plus a
 * severity. Socket errors carry a `code` too (`EPIPE` is five letters), but no severity.
 */
export function isDatabaseError (err: unknown): err is DatabaseErrorLike {
  if (typeof err !== 'object' || err === null) return false
  const e = err as Record<string, unknown>
  return typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string'
}

// SQLSTATEs that mean the session is gone or the server cannot serve it now
// (PostgreSQL, Appendix A): connection exceptions, insufficient resources,
// admin/crash shutdown, cannot connect now, session timeouts.
const UNAVAILABLE_CLASSES = new Set(['08', '53'])
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '57P05', '25P03'])

/**
 * Maps an error the database raised to a typed store error; returns undefined for
 * anything else (driver, socket or programming errors), which the caller classifies.
 */
export function fromDatabaseError (err: unknown): StoreError | undefined {
  if (!isDatabaseError(err)) return undefined
  const sqlState = err.code
  const init: ConstraintInit = { sqlState, cause: err, constraint: err.constraint, table: err.table, column: err.column }
  switch (sqlState) {
    case '23505': return new UniqueViolation(init)
    case '23503': return new ForeignKeyViolation(init)
    case '23514': return new CheckViolation(init)
    case '23502': return new NotNullViolation(init)
    case '40001':
    case '40P01': return new SerializationFailure({ sqlState, cause: err })
    case '25P02': return new TransactionAborted({ sqlState, cause: err })
    // The server's own statement_timeout (or a cancel request): the statement ran too long.
    case '57014': return new StatementTimeout(null, { sqlState, cause: err })
  }
  const cls = sqlState.slice(0, 2)
  if (cls === '23') return new ConstraintViolation(`Constraint ${name(init.constraint)} on table ${name(init.table)} would be violated.`, undefined, init)
  if (UNAVAILABLE_CLASSES.has(cls) || UNAVAILABLE_CODES.has(sqlState)) return new Unavailable(undefined, { sqlState, cause: err })
  return new StoreError(`The database refused the statement (SQLSTATE ${sqlState}).`, undefined, { sqlState, cause: err })
}
