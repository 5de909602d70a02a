import pg from 'pg'
import type { Queryable, Store, Tx } from '../../store/index.js'

/**
 * The statements an instance sends by itself, whatever the request: job and delivery claims,
 * purges' locks, LISTEN, and the read of the caller's address's refusal count that the auth
 * plugin makes, with shared counts on a server, before it trusts a connection's first token.
 */
export const BACKGROUND = /lease_owner = \$1|pg_try_advisory|^(UN)?LISTEN |WHERE ctid = ANY|FROM "auth_refusals"/

/**
 * Counts the SQL statements this process sends to its databases, for tests that bound them
 * (an idle instance, one request):
 *
 *   const sql = countStatements(store)   // store: optional, needed for PGlite
 *   t.teardown(() => { sql.restore() })
 *   sql.reset()
 *   … the work measured …
 *   t.ok(sql.count() <= 2, sql.texts().join('\n'))
 *
 * A PostgreSQL server: every `pg.Client#query` call of the process counts, whichever client
 * makes it (the store's pools, its LISTEN connection, any other), from construction until
 * `restore()`: `pg.Client.prototype.query` is patched meanwhile. A PGlite store (given as
 * `store`) has no client: the store object's own methods are wrapped instead, counting
 * `query`, `exec` and `ready` one each, a transaction's BEGIN and its COMMIT or ROLLBACK (its
 * `SET TRANSACTION` too, at an isolation other than read committed) and every statement of
 * its function, a savepoint's SAVEPOINT and its RELEASE or ROLLBACK TO, and `listen`'s LISTEN
 * and its unsubscribe's UNLISTEN (on a server, the last unsubscribe sends none: the listening
 * connection closes). A store on a server is not wrapped (its statements reach the patched
 * client already), so one counter serves a test over either engine.
 *
 * A call counts when it is made, once: a script of several statements sent at once (`exec`)
 * is one round trip, as a simple-protocol query is. A transaction run again after a
 * serialization failure counts each run. Counters may overlap: each counts from its own
 * start, and restores in any order.
 */
export interface StatementCounter {
  /** Statements since the counter started or was last reset. */
  count: () => number
  /** Their SQL texts, in the order they were sent. */
  texts: () => string[]
  /** Starts counting again from zero. */
  reset: () => void
  /** Stops counting; the patches are removed once no counter needs them. */
  restore: () => void
}

/**
 * The statements of each transaction among `texts` (a counter's, in order): from its `BEGIN`
 * to its `COMMIT` or `ROLLBACK`, and whether it committed. A statement sent while one runs is
 * counted in it (on PGlite, one the store runs once the transaction has ended, too).
 */
export function transactionsOf (texts: readonly string[]): Array<{ statements: string[], committed: boolean }> {
  const found: Array<{ statements: string[], committed: boolean }> = []
  let open: string[] | null = null
  for (const text of texts) {
    if (/^BEGIN\b/.test(text)) open = []
    else if (open !== null && (text === 'COMMIT' || text === 'ROLLBACK')) {
      found.push({ statements: open, committed: text === 'COMMIT' })
      open = null
    } else open?.push(text)
  }
  return found
}

type Recorder = (text: string) => void

/** The counters of each wrapped PGlite store, and its methods before the wrap. */
const wrapped = new WeakMap<Store, { counters: Set<Recorder>, originals: Partial<Store> }>()
/** The counters of the patched pg.Client, and its query before the patch. */
const clientCounters = new Set<Recorder>()
let originalQuery: typeof pg.Client.prototype.query | null = null

export function countStatements (store?: Store): StatementCounter {
  let texts: string[] = []
  const record: Recorder = (text) => { texts.push(text) }
  patchClient(record)
  if (store?.kind === 'pglite') wrapStore(store, record)
  let restored = false
  return {
    count: () => texts.length,
    texts: () => [...texts],
    reset: () => { texts = [] },
    restore () {
      if (restored) return
      restored = true
      unpatchClient(record)
      if (store?.kind === 'pglite') unwrapStore(store, record)
    }
  }
}

function patchClient (record: Recorder): void {
  clientCounters.add(record)
  if (originalQuery !== null) return
  const original = pg.Client.prototype.query
  originalQuery = original
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined
    const text = typeof first === 'string' ? first : first?.text ?? String(first)
    for (const r of clientCounters) r(text)
    return (original as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof pg.Client.prototype.query
}

function unpatchClient (record: Recorder): void {
  clientCounters.delete(record)
  if (clientCounters.size > 0 || originalQuery === null) return
  pg.Client.prototype.query = originalQuery
  originalQuery = null
}

function wrapStore (store: Store, record: Recorder): void {
  const known = wrapped.get(store)
  if (known !== undefined) {
    known.counters.add(record)
    return
  }
  const counters = new Set<Recorder>([record])
  const add: Recorder = (text) => { for (const r of counters) r(text) }
  const { query, exec, transaction, ready, listen } = store
  wrapped.set(store, { counters, originals: { query, exec, transaction, ready, listen } })
  const s = store as { -readonly [K in keyof Store]: Store[K] }
  s.query = async (sql, params, options) => { add(sql); return await query(sql, params, options) }
  s.exec = async (sql) => { add(sql); await exec(sql) }
  s.ready = async () => { add('SELECT 1'); await ready() }
  s.transaction = async (fn, opts) => await transaction(async (tx) => {
    add('BEGIN')
    if (opts?.isolation !== undefined && opts.isolation !== 'read committed') add(`SET TRANSACTION ISOLATION LEVEL ${opts.isolation}`)
    try {
      const result = await fn(countedTx(tx, add))
      add('COMMIT')
      return result
    } catch (err) {
      add('ROLLBACK')
      throw err
    }
  }, opts)
  s.listen = async (channel, onNotify) => {
    add(`LISTEN ${channel}`)
    const unlisten = await listen(channel, onNotify)
    return async () => { add(`UNLISTEN ${channel}`); await unlisten() }
  }
}

function unwrapStore (store: Store, record: Recorder): void {
  const known = wrapped.get(store)
  if (known === undefined) return
  known.counters.delete(record)
  if (known.counters.size > 0) return
  Object.assign(store, known.originals)
  wrapped.delete(store)
}

/** A transaction handle whose statements are counted. */
function countedTx (tx: Tx, add: Recorder): Tx {
  const counted: Queryable = {
    query: async (sql, params, options) => { add(sql); return await tx.query(sql, params, options) },
    exec: async (sql) => { add(sql); await tx.exec(sql) }
  }
  return {
    ...counted,
    savepoint: async (fn) => {
      add('SAVEPOINT')
      try {
        const result = await tx.savepoint(async (inner) => await fn(countedTx(inner, add)))
        add('RELEASE SAVEPOINT')
        return result
      } catch (err) {
        add('ROLLBACK TO SAVEPOINT')
        throw err
      }
    }
  }
}
