import type { Store } from '../../store/types.js'

/**
 * For tests that force an interleaving on a PostgreSQL server with a row lock held from a
 * second connection: how many sessions wait for it, directly or queued behind one that does.
 */
export async function waitingFor (store: Store, pid: number): Promise<number> {
  const { rows } = await store.query<{ n: number }>(`WITH first AS (SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))
    SELECT (SELECT count(*) FROM first)::int + (SELECT count(*) FROM pg_stat_activity
      WHERE pg_blocking_pids(pid) && ARRAY(SELECT pid FROM first) AND pid NOT IN (SELECT pid FROM first))::int AS n`, [pid])
  return (rows[0] as { n: number }).n
}

/** Resolves once `done()` is true, looking every 10 ms. */
export async function until (done: () => Promise<boolean>): Promise<void> {
  while (!await done()) await new Promise((resolve) => setTimeout(resolve, 10))
}
