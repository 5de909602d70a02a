import pg from 'pg'
import { connectionFailure, type ServerTarget } from './connection-errors.js'
import { ISOLATION_SQL, type Driver } from './driver.js'
import { fromDatabaseError, StatementTimeout, TransactionAborted, Unavailable } from './errors.js'
import { OID, parseDate, parseInt8, parseTimestamptz } from './parsers.js'
import { PgListener } from './pg-listener.js'
import { ArrayQuery, type RowShape } from './pg-query.js'
import { StatementNames } from './prepared.js'
import { sessionOptions } from './session-options.js'
import type { IsolationLevel, PoolOptions, QueryOptions, QueryResult, Queryable, StoreLogger } from './types.js'

export interface PgDriverOptions {
  databaseUrl: string
  pool: Required<PoolOptions>
  /** Already checked to be a plain identifier: it goes into the startup `options`. */
  searchPath?: string
  logger: StoreLogger
  /** The server the URL names, without its password: for the messages of failed connections. */
  target: ServerTarget
}

const types = new pg.TypeOverrides()
types.setTypeParser(OID.int8, parseInt8)
types.setTypeParser(OID.date, parseDate)
types.setTypeParser(OID.timestamptz, parseTimestamptz)
// Arrays of them too, as PGlite applies element parsers to arrays: split as text[], then map.
// (pg-types' TypeId enum lists no array oids, hence the cast.)
const parseTextArray = pg.types.getTypeParser(OID.textArray as typeof pg.types.builtins.TEXT, 'text') as (text: string) => unknown
types.setTypeParser(OID.int8Array, (text: string) => mapArray(parseTextArray(text), parseInt8))
types.setTypeParser(OID.dateArray, (text: string) => parseTextArray(text))

/**
 * A PostgreSQL server through a `pg` Pool. One checked-out client per statement outside
 * transactions and per transaction. A client is given back to the pool only when its
 * connection is sound; one that failed is destroyed.
 */
export function createPgDriver (opts: PgDriverOptions): Driver {
  const timeout = opts.pool.statementTimeoutMillis
  const pgbouncer = opts.pool.pgbouncer
  // Session settings at connection start: every pooled connection gets them. Through PgBouncer
  // a transaction may run on any server connection, and it refuses start-up parameters: each
  // transaction sets them itself instead (beginSql), and the SQL outside transactions does not
  // depend on the time zone.
  const options = ['-c TimeZone=UTC']
  if (timeout > 0) options.push(`-c statement_timeout=${timeout}`)
  if (opts.searchPath !== undefined) options.push(`-c search_path=${opts.searchPath}`)
  // Through PgBouncer the URL stays as given: it takes no start-up settings, the URL's either.
  const connection = pgbouncer ? { connectionString: opts.databaseUrl } : sessionOptions(opts.databaseUrl, options)
  const pool = new pg.Pool({
    ...connection,
    max: opts.pool.max,
    connectionTimeoutMillis: opts.pool.connectionTimeoutMillis,
    idleTimeoutMillis: opts.pool.idleTimeoutMillis,
    types
  })
  // LISTEN needs a session of its own; behind PgBouncer's transaction mode there is none to
  // keep, so nothing listens there and the callers' polls do the work alone (docs/operations.md).
  const listener = pgbouncer
    ? null
    : new PgListener({
      // Idle for hours on end: TCP keepalive notices a connection cut off without a word (a
      // firewall or NAT that forgot it), rather than the system's default of hours later.
      client: { ...connection, connectionTimeoutMillis: opts.pool.connectionTimeoutMillis, keepAlive: true, keepAliveInitialDelayMillis: 10_000 },
      logger: opts.logger
    })
  // Without a listener, a server closing an idle connection would crash the process.
  pool.on('error', (err) => {
    opts.logger.error({ err }, 'store: an idle database connection failed and was dropped')
  })
  // Statements that repeat without a name of their own (collection queries) are prepared too;
  // none through PgBouncer, whose next transaction may run on a connection that lacks them.
  const names = pgbouncer ? null : opts.pool.preparedStatements > 0 ? new StatementNames(opts.pool.preparedStatements) : null
  const named = !pgbouncer
  // The server cancels a statement at `timeout`; the store waits a little longer for that
  // answer, and only a server that does not answer at all meets this one. At most the longest
  // a timer waits (2^31 - 1 ms, about 24.8 days; createStore refuses a longer `timeout`):
  // setTimeout would take a longer delay as 1 ms, and fail every statement at once.
  const clientTimeout = timeout === 0 ? 0 : Math.min(2_147_483_647, timeout + Math.max(1000, Math.ceil(timeout / 10)))
  // One round trip: BEGIN and the transaction's settings in one simple-protocol script.
  const beginSql = (isolation: IsolationLevel, timed: boolean): string => {
    const sql = [`BEGIN ISOLATION LEVEL ${ISOLATION_SQL[isolation]}`]
    // An untimed transaction (a migration) lifts the connection's limit, or a role's default.
    if (!timed || pgbouncer) sql.push(`SET LOCAL statement_timeout = ${timed ? timeout : 0}`)
    if (pgbouncer) sql.push("SET LOCAL TimeZone = 'UTC'")
    return sql.join('; ')
  }

  // pg's callback API throughout, as pool.query uses it: awaiting pool.connect() and
  // client.query() measured about 50 µs more CPU per 20-row page under load, most of it
  // garbage collection (bench/README.md, bench/pg-modes.js).
  function take (timed = true): Promise<Checkout> {
    return new Promise((resolve, reject) => {
      pool.connect((err, client) => {
        // Refused, unreachable, bad credentials, unknown database, TLS, pool timeout: the service
        // cannot serve, and the message says which and what to check.
        if (err !== undefined || client === undefined) reject(connectionFailure(err, opts.target, opts.pool.connectionTimeoutMillis))
        else resolve(new Checkout(client, names, named, timed ? clientTimeout : 0))
      })
    })
  }

  async function checkout<T> (fn: (c: Checkout) => Promise<T>, timed = true): Promise<T> {
    const c = await take(timed)
    try {
      return await fn(c)
    } finally {
      c.release()
    }
  }

  return {
    kind: 'pg',
    // The hot path of every read: checkout() without its closure and async frames.
    query<R> (sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
      return take().then((c) => c.query<R>(sql, params, options).finally(() => { c.release() }))
    },
    exec: async (sql) => { await checkout(async (c) => { await c.exec(sql) }) },
    async transaction (isolation, fn, timed) {
      return await checkout(async (c) => {
        await c.exec(beginSql(isolation, timed))
        let result
        try {
          result = await fn(c)
        } catch (err) {
          try {
            await c.exec('ROLLBACK')
          } catch (rollbackErr) {
            // The connection's state is unknown: drop it rather than give it back.
            c.broken ??= rollbackErr
          }
          throw err
        }
        const commit = await c.run('COMMIT')
        // A failed statement left the transaction aborted: the server answers COMMIT with ROLLBACK.
        if (commit.command === 'ROLLBACK') throw new TransactionAborted({ sqlState: '25P02' })
        return result
      }, timed)
    },
    async listen (channel, onNotify) {
      if (listener === null) return async () => {}
      return await listener.listen(channel, onNotify)
    },
    async close () {
      await Promise.all([pool.end(), listener?.close()])
    }
  }
}

/** One client taken from the pool, watching its connection until it goes back. */
class Checkout implements Queryable {
  readonly client: pg.PoolClient
  readonly names: StatementNames | null
  /** Whether statements may be named (prepared) at all. */
  readonly named: boolean
  /** Set once the connection failed; the client is then destroyed on release. */
  broken: unknown
  readonly #onError = (err: unknown): void => { this.broken ??= err }
  /** Milliseconds a statement may wait for its answer; 0 for ever. */
  readonly timeout: number

  constructor (client: pg.PoolClient, names: StatementNames | null, named: boolean, timeout: number) {
    this.client = client
    this.names = names
    this.named = named
    this.timeout = timeout
    // pg-pool listens only to idle clients; a checked-out client whose connection
    // drops between statements would emit an unhandled 'error' and crash the process.
    client.on('error', this.#onError)
  }

  /**
   * One statement: extended protocol even without parameters, as on PGlite (exactly one
   * statement); rows as arrays, made into objects by rowsOf (pg's own are dictionary-mode).
   * Named by the caller (a fixed text) or else by `names` once the text repeats (prepared.ts).
   */
  query<R> (sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    const name = this.named ? options?.name ?? this.names?.nameOf(sql) : undefined
    const query = new ArrayQuery(sql, params === undefined ? [] : [...params], name, types)
    return this.#send<pg.QueryArrayResult>(query).then((res) => ({ rows: rowsOf<R>(res, query.shape), rowCount: res.rowCount ?? 0 }))
  }

  async exec (sql: string): Promise<void> {
    await this.run(sql)
  }

  /** Simple protocol: a script of statements, no parameters. */
  async run (sql: string): Promise<pg.QueryResult> {
    return await this.#send<pg.QueryResult>(sql)
  }

  /** One statement through pg's callback API (see take()); a failure as failure() maps it. */
  #send<T> (statement: string | ArrayQuery): Promise<T> {
    return new Promise((resolve, reject) => {
      let answered = false
      // Node runs expired timers before it reads sockets. After the process was held up (a long
      // GC, a busy machine), an answer may be waiting unread when this timer fires: the give-up
      // waits for the loop's next read of the sockets, so that answer is taken and the
      // connection kept.
      const timer = this.timeout > 0
        ? setTimeout(() => { setImmediate(() => { if (!answered) reject(this.#timedOut()) }) }, this.timeout)
        : undefined
      const done = (failed: Error | null | undefined, res: T): void => {
        answered = true
        clearTimeout(timer)
        if (failed !== null && failed !== undefined) reject(this.failure(failed))
        else resolve(res)
      }
      try {
        // A query object takes the callback as its own (pg's submittables).
        this.client.query(statement as unknown as pg.QueryConfig, done as (err: Error, res: pg.QueryResult) => void)
      } catch (thrownNow) {
        // Refused before it was sent (a parameter pg cannot serialize). pg may still call back
        // once the connection is ready again; the promise is settled by then.
        reject(this.failure(thrownNow))
      }
    })
  }

  /** What to throw for a failed statement. */
  private failure (err: unknown): unknown {
    const mapped = fromDatabaseError(err)
    // A statement the server cancelled leaves a sound connection.
    if (mapped instanceof Unavailable && !(mapped instanceof StatementTimeout)) this.broken ??= err
    if (mapped !== undefined) return mapped
    // pg emits 'error' on the client before it fails the pending query, so a lost
    // connection is known here without reading any message text.
    if (this.broken !== undefined) return new Unavailable('The database connection was lost.', { cause: err })
    return err
  }

  /**
   * No answer in time: the connection is closed now (pg destroys a socket with a statement
   * outstanding), since its answer, if it ever comes, would be read as the next statement's.
   */
  #timedOut (): StatementTimeout {
    const err = new StatementTimeout(this.timeout)
    this.broken ??= err
    this.release()
    return err
  }

  #released = false

  /** Gives the client back (or destroys a broken one); once only, whoever calls it again. */
  release (): void {
    if (this.#released) return
    this.#released = true
    this.client.off('error', this.#onError)
    this.client.release(this.broken === undefined ? undefined : true)
  }
}

/** The rows of an array-mode result as objects, made by the maker of their column list. */
function rowsOf<R> (res: pg.QueryArrayResult, shape: RowShape | undefined): R[] {
  const rows = new Array<R>(res.rows.length)
  if (shape === undefined) return rows
  for (let i = 0; i < res.rows.length; i++) rows[i] = shape.make(res.rows[i] as unknown[]) as R
  return rows
}

function mapArray (value: unknown, parse: (text: string) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => mapArray(v, parse))
  return typeof value === 'string' ? parse(value) : value
}
