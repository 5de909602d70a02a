import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { PGlite, type Results, type Transaction } from '@electric-sql/pglite'
import { dropTemplate, readTemplate, saveTemplate, templateFile } from './pglite-template.js'
import { ISOLATION_SQL, type Driver } from './driver.js'
import { fromDatabaseError, Unavailable } from './errors.js'
import { OID, parseDate, parseInt8 } from './parsers.js'
import { quoteIdent } from './quote.js'
import type { QueryResult, Queryable } from './types.js'

export interface PgliteDriverOptions {
  /** A directory (created if missing), or `'memory'`. */
  dataDir: string
  searchPath?: string
  /**
   * In memory, start from a cached snapshot of an empty cluster, made on the first start, in
   * this folder (`true`: the OS temp folder), several times faster than initdb. Default true.
   */
  template?: boolean | string
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
  const template = memory && opts.template !== false ? templatePath(typeof opts.template === 'string' ? opts.template : undefined) : undefined
  const snapshot = template === undefined ? undefined : readTemplate(template)
  // One options object: PGlite 0.5 drops the options of `new PGlite(undefined, options)`.
  const make = (loadDataDir: Blob | undefined): PGlite => new PGlite({
    dataDir,
    ...(loadDataDir === undefined ? {} : { loadDataDir }),
    parsers: { [OID.int8]: parseInt8, [OID.date]: parseDate }
  })
  let db = make(snapshot)
  const setup = ["SET TimeZone = 'UTC'"]
  if (opts.searchPath !== undefined) setup.push(`SET search_path TO ${quoteIdent(opts.searchPath)}`)

  async function open (): Promise<void> {
    try {
      await started
    } catch (err) {
      throw new Unavailable('The embedded database failed to start.', { cause: err })
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

  const started = (async () => {
    let fresh = snapshot === undefined
    try {
      await db.waitReady
    } catch (err) {
      // A snapshot this PGlite refuses is dropped, and the cluster made afresh.
      if (template === undefined || snapshot === undefined) throw err
      dropTemplate(template)
      db = make(undefined)
      outside = session(db)
      fresh = true
      await db.waitReady
    }
    if (template !== undefined && fresh) await saveTemplate(db, template)
    await db.exec(setup.join('; '))
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
      // Tells the caller's own error apart from one of BEGIN, COMMIT or ROLLBACK.
      let thrown: { err: unknown } | undefined
      try {
        return await db.transaction(async (ptx) => {
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
      }
    },
    async close () {
      try {
        await started
      } catch {
        return
      }
      await db.close()
    }
  }
}

/** A database error as a typed store error; anything else (a parameter PGlite cannot serialize) as it is. */
/** The snapshot's file, or undefined when PGlite's install cannot be located (no cache then). */
function templatePath (dir: string | undefined): string | undefined {
  try {
    return templateFile(dir)
  } catch {
    return undefined
  }
}

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
