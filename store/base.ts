import { setTimeout as sleep } from 'node:timers/promises'
import { ISOLATION_SQL, type Driver } from './driver.js'
import { SerializationFailure, Unavailable } from './errors.js'
import { quoteIdent } from './quote.js'
import type { IsolationLevel, Queryable, Store, StoreLogger, TransactionOptions, Tx } from './types.js'

// Full-jitter backoff between attempts, capped: colliding transactions spread out
// instead of colliding again in step.
const RETRY_BASE_MS = 5
const RETRY_CAP_MS = 100

/**
 * The behaviour both engines share: the closed gate and the drain on close, the
 * transaction options, retries after serialization failures, savepoints, and the
 * guard that refuses a transaction handle once its function has returned.
 */
export function buildStore (driver: Driver, logger: StoreLogger, location: string = driver.kind): Store {
  // Work in flight is counted, not kept: a long-lived collection holding every pending
  // statement's promise kept each request waiting on the database reachable from old space,
  // so the young-generation collections copied and promoted all of it (bench/README.md).
  let inflight = 0
  let drained: (() => void) | null = null
  let closing: Promise<void> | undefined

  const settled = (): void => {
    inflight--
    if (inflight === 0 && drained !== null) drained()
  }

  function track<T> (work: () => Promise<T>): Promise<T> {
    if (closing !== undefined) return Promise.reject(new Unavailable('The store is closed.'))
    inflight++
    let p: Promise<T>
    try {
      p = work()
    } catch (err) {
      settled()
      throw err
    }
    p.then(settled, settled)
    return p
  }

  async function attempt<T> (isolation: IsolationLevel, timed: boolean, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return await driver.transaction(isolation, async (session) => {
      const handle = transactionHandle(session)
      try {
        return await fn(handle.tx)
      } finally {
        handle.end()
      }
    }, timed)
  }

  return {
    kind: driver.kind,
    location,
    query: (sql, params, options) => track(() => driver.query(sql, params, options)),
    exec: (sql) => track(() => driver.exec(sql)),
    async transaction<T> (fn: (tx: Tx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
      const isolation = opts.isolation ?? 'read committed'
      const retries = opts.retries ?? 0
      const timed = opts.statementTimeout ?? true
      if (typeof isolation !== 'string' || !Object.hasOwn(ISOLATION_SQL, isolation)) {
        throw new TypeError(`store.transaction: isolation must be one of ${Object.keys(ISOLATION_SQL).join(', ')}, got ${JSON.stringify(isolation)}`)
      }
      if (!Number.isInteger(retries) || retries < 0) {
        throw new TypeError(`store.transaction: retries must be a non-negative integer, got ${String(retries)}`)
      }
      if (typeof timed !== 'boolean') throw new TypeError(`store.transaction: statementTimeout must be a boolean, got ${String(timed)}`)
      const run = async (n: number): Promise<T> => {
        try {
          return await attempt(isolation, timed, fn)
        } catch (err) {
          if (!(err instanceof SerializationFailure) || n >= retries) throw err
          logger.warn({ attempt: n + 1, retries, sqlState: err.sqlState }, 'store: transaction not serializable, running it again')
          await sleep(Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** n))
          return await run(n + 1)
        }
      }
      return await track(async () => await run(0))
    },
    async listen (channel, onNotify) {
      // A name that is no identifier is refused here (a TypeError), before anything is sent.
      quoteIdent(channel)
      if (typeof onNotify !== 'function') throw new TypeError(`store.listen: onNotify must be a function, got ${String(onNotify)}`)
      const unlisten = await track(() => driver.listen(channel, onNotify))
      // Once the store closes, its connections end and nothing listens any more.
      return async () => { if (closing === undefined) await unlisten() }
    },
    async ready () {
      try {
        await track(() => driver.query('SELECT 1'))
      } catch (err) {
        throw err instanceof Unavailable ? err : new Unavailable(undefined, { cause: err })
      }
    },
    close () {
      closing ??= (async () => {
        if (inflight > 0) await new Promise<void>((resolve) => { drained = resolve })
        await driver.close()
      })()
      return closing
    }
  } satisfies Store
}

/** The `tx` given to a transaction's function, valid until that function settles. */
function transactionHandle (session: Queryable): { tx: Tx, end: () => void } {
  let ended = false
  let savepoints = 0
  const guard = (): void => {
    if (ended) throw new Error('store: this transaction has ended; run its statements inside its function')
  }
  const tx: Tx = {
    async query (sql, params, options) {
      guard()
      return await session.query(sql, params, options)
    },
    async exec (sql) {
      guard()
      await session.exec(sql)
    },
    async savepoint (fn) {
      guard()
      // Names come from a counter, never from input; nested savepoints get their own.
      const name = `svc_sp_${++savepoints}`
      await session.exec(`SAVEPOINT ${name}`)
      let result
      try {
        result = await fn(tx)
      } catch (err) {
        // Undo only this unit; the transaction goes on (PostgreSQL, ROLLBACK TO SAVEPOINT).
        await session.exec(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`)
        throw err
      }
      await session.exec(`RELEASE SAVEPOINT ${name}`)
      return result
    }
  }
  return { tx, end: () => { ended = true } }
}
