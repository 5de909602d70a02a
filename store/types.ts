/** Which engine answers: embedded PGlite (one connection) or a PostgreSQL server through a `pg` Pool. */
export type StoreKind = 'pglite' | 'pg'

/** The isolation levels a transaction may ask for; PostgreSQL runs `read uncommitted` as `read committed`. */
export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable'

export interface QueryResult<R> {
  rows: R[]
  /** Rows changed by INSERT/UPDATE/DELETE, or rows returned by SELECT; 0 for DDL. */
  rowCount: number
}

/** What can run SQL: the store itself, or a transaction. */
/** Per-statement options. */
export interface QueryOptions {
  /**
   * A name for a FIXED SQL text: on a PostgreSQL server each connection then parses and plans
   * it once and reuses the plan (a prepared statement). One name, one text, for the process's
   * life; never name SQL built from request data (the store prepares repeated texts itself,
   * up to `PoolOptions.preparedStatements`). PGlite ignores it.
   */
  name?: string
}

export interface Queryable {
  /**
   * Runs one statement with `$1…` parameters (never spliced into the SQL).
   * Both engines parse `int8` as a number (an exact decimal string beyond ±2^53),
   * `date` as `'YYYY-MM-DD'`, `numeric` as a string, `timestamptz` as a Date and
   * json/jsonb as values; pass JSON parameters as `JSON.stringify(v)` with `$n::jsonb`.
   * `options.name` makes a fixed SQL text a prepared statement on a server connection.
   */
  query: <R extends object = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions) => Promise<QueryResult<R>>
  /** Runs a script of one or more statements without parameters (migrations, DDL). */
  exec: (sql: string) => Promise<void>
}

/**
 * A transaction. Its statements run one after another on one connection; do not
 * issue them concurrently, and do not use the store itself inside it (on PGlite that
 * waits for this very transaction to end).
 */
export interface Tx extends Queryable {
  /**
   * Runs `fn` as a nested unit (SAVEPOINT): if it throws, only its statements are
   * rolled back and the transaction stays usable; the error is rethrown.
   */
  savepoint: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>
}

export interface TransactionOptions {
  /** Default `'read committed'`. */
  isolation?: IsolationLevel
  /**
   * How many times to run `fn` again after a SerializationFailure (40001, 40P01);
   * default 0. `fn` must then be safe to repeat: no side effects outside the database.
   */
  retries?: number
  /**
   * Whether the pool's `statementTimeoutMillis` applies to this transaction's statements;
   * default true. False for work that may rightly take long, such as a migration.
   */
  statementTimeout?: boolean
}

export interface Store extends Queryable {
  readonly kind: StoreKind
  /**
   * Where the data lives, for logs and messages: `PGlite in /srv/data`, `PGlite in memory`, or
   * `PostgreSQL database "app" on db.internal:5432 as user "svc"` (never a password).
   */
  readonly location: string
  /** BEGIN, `fn`, COMMIT; ROLLBACK when `fn` throws (its error is rethrown unchanged). */
  transaction: <T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions) => Promise<T>
  /** Resolves once the database answers a query; rejects with `Unavailable` otherwise. For health checks. */
  ready: () => Promise<void>
  /**
   * Calls `onNotify` whenever a notification arrives on `channel` (PostgreSQL LISTEN/NOTIFY,
   * `pg_notify(channel, …)`, case-sensitive), whichever connection or instance sent it, once its
   * transaction committed; the payload is not passed. Resolves to the function that stops it.
   * A wake-up, not a message queue: notifications may come together as one, and on a server
   * those sent while the listening connection is down are lost; `onNotify` is then called once
   * when it is back. Keep a slow poll beside it. `channel` comes from code, never from input
   * (it is quoted as an identifier); `onNotify` must not throw.
   *
   * PGlite listens on its one connection. A server gets a connection of its own outside the
   * pool, opened at the first `listen`, connected again with backoff after a failure (logged),
   * closed by `close()`. With `pool.pgbouncer` nothing listens (a transaction-mode pooler
   * keeps no session): it resolves to a no-op, and the callers' polls do the work alone.
   */
  listen: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>
  /** Refuses new work, waits for queries and transactions in flight, then closes the connections. */
  close: () => Promise<void>
}

/** Any pino-like logger (a Fastify logger fits). */
export interface StoreLogger {
  info: (obj: object, msg?: string) => void
  warn: (obj: object, msg?: string) => void
  error: (obj: object, msg?: string) => void
}

export interface PoolOptions {
  /** Most connections open at once. Default 10. */
  max?: number
  /** How long a query waits for a free connection before failing with `Unavailable`. Default 5000 ms. */
  connectionTimeoutMillis?: number
  /** How long an idle connection stays open. Default 10000 ms. */
  idleTimeoutMillis?: number
  /**
   * How long a statement may run. The server cancels it then (its `statement_timeout`, set for
   * every statement), so work nobody waits for any more stops using the database; the statement
   * fails with `StatementTimeout` (an `Unavailable`). Should the server not answer at all
   * (overloaded, frozen, cut off), the store stops waiting a little later and closes the
   * connection: errors a client can retry instead of requests that hang, and a shutdown is not
   * held up by them. Migrations run without it. 0 waits forever. Default 30000 ms.
   */
  statementTimeoutMillis?: number
  /**
   * The server is reached through PgBouncer in transaction-pooling mode (or another pooler that
   * hands each transaction any server connection): no named prepared statements (neither the
   * store's nor `QueryOptions.name`), no start-up parameters; each transaction sets its own
   * `statement_timeout` and `TimeZone` (`SET LOCAL`). A statement outside a transaction is then
   * bounded on the server only by the role's or database's own `statement_timeout` (docs/operations.md).
   * `searchPath` cannot be used. Default false.
   */
  pgbouncer?: boolean
  /**
   * How many distinct SQL texts without a name of their own (`QueryOptions.name`) the store
   * prepares on each connection, each from the second time it runs (collection queries: one
   * text per shape of filter and ordering). A prepared text skips parsing and analysis on
   * every later run; each costs each connection about 35 KB of server memory. Plans follow
   * the server's `plan_cache_mode`. 0 prepares none. Default 100.
   */
  preparedStatements?: number
}

export interface StoreOptions {
  /** `postgres://…`: use a PostgreSQL server through a connection pool. When set, `dataDir` is ignored. */
  databaseUrl?: string | undefined
  /** PGlite data directory, created if missing; `'memory'` keeps the data in memory only. Default `'./data'`. */
  dataDir?: string
  /** Pool settings, for a server only. */
  pool?: PoolOptions
  /**
   * PGlite's buffer cache (PostgreSQL's `shared_buffers`), for embedded storage only: `'16MB'`,
   * `'128MB'`… PGlite sets the whole cache up at every start, so a larger one starts slower;
   * pages outside it are read from the operating system's file cache. Default `'16MB'`.
   */
  sharedBuffers?: string
  /**
   * For embedded storage only: how often the store looks for tables to vacuum and analyze, and
   * does it, as a server's autovacuum would (PGlite has none), then makes a checkpoint if one is
   * due, as a server's checkpointer would: in milliseconds, 0 never. Default 60000.
   */
  vacuumMillis?: number
  /**
   * For embedded storage only: PostgreSQL's `default_statistics_target`, how much of each table
   * an `ANALYZE` samples (300 rows per unit) and how many common values and histogram bounds it
   * keeps per column. Requests wait while PGlite analyzes a table, so the sample is kept small:
   * at PostgreSQL's own 100, the store's analysis of 100,000 documents held every request for
   * most of a second. An integer from 1 to 10000. Default 10.
   */
  statisticsTarget?: number
  /** Schema every session uses for unqualified names (`search_path`); the schema is not created. */
  searchPath?: string
  /** Receives connection errors, retries and applied migrations. Default: silent. */
  logger?: StoreLogger
}

/** A schema change, applied once, in list order. */
export interface Migration {
  /** Unique and stable: recorded in `schema_migrations`. */
  id: string
  /** A SQL script, or a function that runs statements on the migration's transaction. */
  sql: string | ((tx: Tx) => Promise<void>)
}
