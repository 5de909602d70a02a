import t from 'tap'
import { databases } from '../support/databases.js'

for (const db of databases) {
  t.test(`${db.label}: a named statement is prepared once and reused`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await store.exec('CREATE TABLE kv (k text PRIMARY KEY, v integer NOT NULL)')
    const insert = 'INSERT INTO kv (k, v) VALUES ($1, $2) RETURNING v'
    for (let i = 0; i < 5; i++) {
      const { rows } = await store.query<{ v: number }>(insert, [`k${i}`, i], { name: 'kv_insert' })
      t.same(rows, [{ v: i }])
    }
    await store.transaction(async (tx) => {
      const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM kv WHERE v >= $1', [0], { name: 'kv_count' })
      t.equal(rows[0]?.n, 5, 'inside a transaction too')
    })
    const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM kv WHERE v >= $1', [3], { name: 'kv_count' })
    t.equal(rows[0]?.n, 2, 'the same name with new values')
    if (store.kind === 'pg') {
      const prepared = await store.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE name = $1', ['kv_count'], { name: 'kv_probe' })
      t.same(prepared.rows, [{ name: 'kv_count' }], 'the server holds it as a prepared statement')
    }
  })
}
