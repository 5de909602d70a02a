import pg from 'pg'

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
