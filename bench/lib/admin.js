import pg from 'pg'
import { startPostgres } from '../../scripts/postgres.js'

/** Runs `sql` statements, in order, on a short-lived connection to `url` (databases made and dropped by a benchmark). */
export async function admin (url, ...sql) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const s of sql) await client.query(s)
  } finally {
    await client.end()
  }
}

/**
 * A fresh database `name` for one benchmark: on the PostgreSQL server at `serverUrl`, else on a
 * throwaway server started here. Returns its `url` and `close()`, which drops it (or stops the
 * throwaway server).
 */
export async function benchDatabase (name, serverUrl) {
  const pgServer = serverUrl === undefined ? await startPostgres() : null
  const server = serverUrl ?? pgServer.url
  await admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `CREATE DATABASE ${name}`)
  const u = new URL(server)
  u.pathname = `/${name}`
  return {
    url: u.toString(),
    async close () {
      if (pgServer !== null) pgServer.stop()
      else await admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
}
