import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createStore, quoteIdent, type PoolOptions, type Store, type StoreKind } from '../../store/index.js'

/**
 * Store factories to run one behaviour suite over every engine:
 *
 *   for (const db of databases) {
 *     t.test(db.label, { skip: db.skip }, async (t) => {
 *       const store = await db.create(t)   // one per test file: PGlite takes ~2 s to start
 *       …
 *     })
 *   }
 *
 * PGlite in memory always; a PostgreSQL server when TEST_DATABASE_URL is set (CI sets
 * it), otherwise that entry carries a skip reason tap prints. On a server, each
 * create() gets a fresh schema of its own (the pool's search_path), dropped on teardown,
 * so test files running in parallel never see each other's tables.
 */

/** What create() needs of a tap test: somewhere to register the cleanup. */
export interface Teardown {
  teardown: (fn: () => unknown) => void
}

export interface CreateOptions {
  pool?: PoolOptions
}

export interface TestDatabase {
  kind: StoreKind
  label: string
  /** tap's `skip` option: a reason, or false. */
  skip: string | false
  /** A fresh, isolated, ready store; closed (and its schema dropped) on teardown. */
  create: (t: Teardown, opts?: CreateOptions) => Promise<Store>
  /**
   * Another store on the same data as `store` (same schema, its own pool), like a
   * second service instance. Server only: PGlite is one connection in one process.
   */
  sibling?: (t: Teardown, store: Store, opts?: CreateOptions) => Promise<Store>
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL

const SKIP_SERVER = 'PostgreSQL server not tested: set TEST_DATABASE_URL=postgres://user@host:port/db to run these (CI does)'

export const pglite: TestDatabase = {
  kind: 'pglite',
  label: 'PGlite (memory)',
  skip: false,
  async create (t) {
    const store = createStore({ dataDir: 'memory' })
    t.teardown(() => store.close())
    await store.ready()
    return store
  }
}

const schemas = new WeakMap<Store, string>()

export const postgres: TestDatabase = {
  kind: 'pg',
  label: 'PostgreSQL server',
  skip: TEST_DATABASE_URL === undefined ? SKIP_SERVER : false,
  async create (t, opts = {}) {
    const url = serverUrl()
    const schema = `t_${process.pid}_${randomBytes(6).toString('hex')}`
    await admin(url, `CREATE SCHEMA ${quoteIdent(schema)}`)
    const store = createStore({ databaseUrl: url, searchPath: schema, pool: opts.pool })
    schemas.set(store, schema)
    t.teardown(async () => {
      await store.close()
      await admin(url, `DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`)
    })
    await store.ready()
    return store
  },
  async sibling (t, store, opts = {}) {
    const schema = schemas.get(store)
    if (schema === undefined) throw new Error('databases.postgres.sibling: pass a store made by postgres.create()')
    const other = createStore({ databaseUrl: serverUrl(), searchPath: schema, pool: opts.pool })
    t.teardown(() => other.close())
    await other.ready()
    return other
  }
}

export const databases: readonly TestDatabase[] = [pglite, postgres]

function serverUrl (): string {
  if (TEST_DATABASE_URL === undefined) throw new Error(SKIP_SERVER)
  return TEST_DATABASE_URL
}

/** Runs one statement on a short-lived connection of its own (schema setup and cleanup). */
export async function admin (url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}
