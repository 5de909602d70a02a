import type { Migration, Store, StoreLogger, Tx } from './types.js'

export interface MigrateOptions {
  /** Told about each migration applied. Default: silent. */
  logger?: StoreLogger
}

// Transaction-level advisory lock (released at COMMIT/ROLLBACK, so never leaked):
// a constant first key ("SVC") and the current schema's hash as the second, so
// service instances sharing one schema take turns while other schemas (one per
// test file on a shared server) never wait for each other. coalesce() because a
// strict function given NULL returns NULL without taking the lock.
export const LOCK_SQL = "SELECT pg_advisory_xact_lock(1398162176, hashtext(coalesce(current_schema(), '')))"

const CREATE_TABLE_SQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  id text PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in list order, each
 * in its own transaction together with its record: a failed migration leaves no trace
 * and stops the run. Safe to run again, and safe when several instances start at once
 * against one server: each migration is applied exactly once.
 * Returns the ids applied by this call.
 */
// A migration may rightly take long (an index over a big table), and so may the wait for the
// lock while another instance applies one: no statement timeout.
const UNTIMED = { statementTimeout: false } as const

export async function migrate (store: Store, migrations: readonly Migration[], opts: MigrateOptions = {}): Promise<string[]> {
  validate(migrations)
  // Read committed on purpose: the statement after the lock takes a fresh snapshot,
  // so it sees what the instance that held the lock before us committed.
  const recorded = await store.transaction(async (tx) => {
    await tx.query(LOCK_SQL)
    // Under the lock: two servers creating the table at once would collide in pg_type.
    await tx.exec(CREATE_TABLE_SQL)
    const { rows } = await tx.query<{ id: string }>('SELECT id FROM schema_migrations')
    return new Set(rows.map((r) => r.id))
  }, UNTIMED)
  const applied: string[] = []
  for (const m of migrations) {
    if (recorded.has(m.id)) continue
    const ran = await store.transaction(async (tx) => {
      await tx.query(LOCK_SQL)
      const { rowCount } = await tx.query('SELECT 1 FROM schema_migrations WHERE id = $1', [m.id])
      if (rowCount > 0) return false // another instance applied it while we waited
      await run(tx, m)
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [m.id])
      return true
    }, UNTIMED)
    if (ran) {
      applied.push(m.id)
      opts.logger?.info({ migration: m.id }, 'store: migration applied')
    }
  }
  return applied
}

async function run (tx: Tx, m: Migration): Promise<void> {
  if (typeof m.sql === 'string') await tx.exec(m.sql)
  else await m.sql(tx)
}

function validate (migrations: readonly Migration[]): void {
  if (!Array.isArray(migrations)) throw new TypeError(`migrate: migrations must be an array, got ${typeof migrations}`)
  const seen = new Set<string>()
  for (const m of migrations) {
    const id: unknown = m?.id
    if (typeof id !== 'string' || id.length === 0) throw new TypeError(`migrate: each migration needs a non-empty string id, got ${JSON.stringify(id)}`)
    if (seen.has(id)) throw new TypeError(`migrate: migration id ${JSON.stringify(id)} appears twice`)
    seen.add(id)
    if (typeof m.sql !== 'string' && typeof m.sql !== 'function') throw new TypeError(`migrate: migration ${JSON.stringify(id)} needs sql as a string or a function, got ${typeof m.sql}`)
  }
}
