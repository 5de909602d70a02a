import type { Queryable } from './types.js'

/**
 * What the checkpointer does on a PostgreSQL server, done by the embedded store for itself.
 * PGlite runs PostgreSQL as one backend with no background processes, and that backend never
 * starts a checkpoint on its own while it runs. Without one, no WAL file is ever removed or
 * reused: the WAL grows by every byte written for as long as the process lives (in memory, or
 * in `DATA_DIR`), and a start after a crash replays all of it.
 *
 * A checkpoint is due as the server's own rule has it: once the WAL written since the last
 * one passes `max_wal_size / (1 + checkpoint_completion_target)`. The embedded store starts
 * PGlite with a small `max_wal_size` (store/pglite.ts), so that is a few tens of megabytes.
 * It writes the buffer cache's changed pages out (16 MB at most, by default), and requests
 * wait for it as for any statement.
 */
const DUE = `SELECT pg_current_wal_insert_lsn() - redo_lsn
    >= pg_size_bytes(current_setting('max_wal_size')) / (1 + current_setting('checkpoint_completion_target')::float8) AS due
  FROM pg_control_checkpoint()`

/** Makes a checkpoint when one is due; the milliseconds it took, or null when none was. */
export async function checkpointIfDue (db: Queryable, clock: () => number = Date.now): Promise<number | null> {
  const { rows } = await db.query<{ due: boolean }>(DUE)
  if (rows[0]?.due !== true) return null
  const started = clock()
  await db.query('CHECKPOINT')
  return clock() - started
}
