import pg from 'pg'
import { ISOLATION_SQL, type Driver } from './driver.js'
import { fromDatabaseError, TransactionAborted, Unavailable } from './errors.js'
import { OID, parseDate, parseInt8 } from './parsers.js'
import type { PoolOptions, QueryOptions, QueryResult, Queryable, StoreLogger } from './types.js'

export interface PgDriverOptions {
  databaseUrl: string
  pool: Required<PoolOptions>
  /** Already checked to be a plain identifier: it goes into the startup `options`. */
  searchPath?: string
  logger: StoreLogger
}

const types = new pg.TypeOverrides()
types.setTypeParser(OID.int8, parseInt8)
types.setTypeParser(OID.date, parseDate)
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
  // Session settings at connection start: every pooled connection gets them.
  const options = ['-c TimeZone=UTC']
  if (opts.searchPath !== undefined) options.push(`-c search_path=${opts.searchPath}`)
  const pool = new pg.Pool({
    connectionString: opts.databaseUrl,
    max: opts.pool.max,
    connectionTimeoutMillis: opts.pool.connectionTimeoutMillis,
    idleTimeoutMillis: opts.pool.idleTimeoutMillis,
    options: options.join(' '),
    types
  })
  // Without a listener, a server closing an idle connection would crash the process.
  pool.on('error', (err) => {
    opts.logger.error({ err }, 'store: an idle database connection failed and was dropped')
  })

  async function checkout<T> (fn: (c: Checkout) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await pool.connect()
    } catch (err) {
      // Refused, unreachable, bad credentials, unknown database, pool timeout: the service cannot serve.
      throw new Unavailable('The database cannot be reached.', { cause: err })
    }
    const c = new Checkout(client)
    try {
      return await fn(c)
    } finally {
      c.release()
    }
  }

  return {
    kind: 'pg',
    query: async (sql, params, options) => await checkout(async (c) => await c.query(sql, params, options)),
    exec: async (sql) => { await checkout(async (c) => { await c.exec(sql) }) },
    async transaction (isolation, fn) {
      return await checkout(async (c) => {
        await c.exec(`BEGIN ISOLATION LEVEL ${ISOLATION_SQL[isolation]}`)
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
      })
    },
    async close () {
      await pool.end()
    }
  }
}

/** One client taken from the pool, watching its connection until it goes back. */
class Checkout implements Queryable {
  readonly client: pg.PoolClient
  /** Set once the connection failed; the client is then destroyed on release. */
  broken: unknown
  readonly #onError = (err: unknown): void => { this.broken ??= err }

  constructor (client: pg.PoolClient) {
    this.client = client
    // pg-pool listens only to idle clients; a checked-out client whose connection
    // drops between statements would emit an unhandled 'error' and crash the process.
    client.on('error', this.#onError)
  }

  async query<R> (sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    // Extended protocol even without parameters, as on PGlite: exactly one statement.
    const config: pg.QueryConfig & { queryMode: string } = { text: sql, values: params === undefined ? [] : [...params], queryMode: 'extended' }
    if (options?.name !== undefined) config.name = options.name
    const res = await this.#send(() => this.client.query<R & pg.QueryResultRow>(config))
    return { rows: res.rows, rowCount: res.rowCount ?? 0 }
  }

  async exec (sql: string): Promise<void> {
    await this.run(sql)
  }

  /** Simple protocol: a script of statements, no parameters. */
  async run (sql: string): Promise<pg.QueryResult> {
    return await this.#send(() => this.client.query(sql))
  }

  async #send<T> (send: () => Promise<T>): Promise<T> {
    try {
      return await send()
    } catch (err) {
      const mapped = fromDatabaseError(err)
      if (mapped instanceof Unavailable) this.broken ??= err
      if (mapped !== undefined) throw mapped
      // pg emits 'error' on the client before it fails the pending query, so a lost
      // connection is known here without reading any message text.
      if (this.broken !== undefined) throw new Unavailable('The database connection was lost.', { cause: err })
      throw err
    }
  }

  release (): void {
    this.client.off('error', this.#onError)
    this.client.release(this.broken === undefined ? undefined : true)
  }
}

function mapArray (value: unknown, parse: (text: string) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => mapArray(v, parse))
  return typeof value === 'string' ? parse(value) : value
}
