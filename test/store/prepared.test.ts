import t from 'tap'
import { databases, postgres } from '../support/databases.js'
import { UniqueViolation } from '../../store/index.js'

for (const db of databases) {
  t.test(`${db.label}: a named statement is prepared once and reused`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await store.exec('CREATE TABLE kv (k text PRIMARY KEY, v integer NOT NULL)')
    const insert = 'INSERT INTO kv (k, v) VALUES ($1, $2) RETURNING v'
    for (let i = 0; i < 5; i++) {
      const { rows } = await store.query<{ v: number }>(insert, [`k${i}`, i], { name: 'kv_insert' })
      t.strictSame(rows, [{ v: i }])
    }
    await store.transaction(async (tx) => {
      const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM kv WHERE v >= $1', [0], { name: 'kv_count' })
      t.equal(rows[0]?.n, 5, 'inside a transaction too')
    })
    const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM kv WHERE v >= $1', [3], { name: 'kv_count' })
    t.equal(rows[0]?.n, 2, 'the same name with new values')
    if (store.kind === 'pg') {
      const prepared = await store.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE name = $1', ['kv_count'], { name: 'kv_probe' })
      t.strictSame(prepared.rows, [{ name: 'kv_count' }], 'the server holds it as a prepared statement')
    }
  })
}

const autoNamed = "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'svc:auto:%' ORDER BY statement"
// Named, so the probe is never one of the texts the store prepares itself.
const probe = { name: 'test_probe' }

t.test('PostgreSQL server: a repeated statement without a name is prepared from its second run', { skip: postgres.skip }, async t => {
  // One connection, so every statement and the probe see the same session.
  const store = await postgres.create(t, { pool: { max: 1 } })
  await store.exec('CREATE TABLE kv (k text PRIMARY KEY, v integer NOT NULL)')
  await store.query('INSERT INTO kv (k, v) VALUES ($1, $2), ($3, $4)', ['a', 1, 'b', 2])
  const select = 'SELECT v FROM kv WHERE k = $1'
  t.strictSame((await store.query(select, ['a'])).rows, [{ v: 1 }])
  t.strictSame((await store.query(autoNamed, [], probe)).rows, [], 'a text run once is not prepared')
  t.strictSame((await store.query(select, ['b'])).rows, [{ v: 2 }], 'second run: prepared, right rows')
  t.strictSame((await store.query(select, ['zz'])).rows, [], 'third run: the prepared statement with new values')
  const prepared = (await store.query<{ name: string, statement: string }>(autoNamed, [], probe)).rows
  t.strictSame(prepared.map(r => r.statement), [select], 'the server holds the repeated text, and only it')
  t.match(prepared[0]?.name, /^svc:auto:\d+$/)
  await store.transaction(async (tx) => {
    t.strictSame((await tx.query(select, ['a'])).rows, [{ v: 1 }], 'inside a transaction, on its connection')
  })
})

t.test('PostgreSQL server: a prepared text that fails fails alike every time, and the connection goes on', { skip: postgres.skip }, async t => {
  const store = await postgres.create(t, { pool: { max: 1 } })
  await store.exec('CREATE TABLE kv (k text PRIMARY KEY, v integer NOT NULL)')
  const insert = 'INSERT INTO kv (k, v) VALUES ($1, $2)'
  await store.query(insert, ['a', 1])
  for (let i = 0; i < 3; i++) {
    await t.rejects(store.query(insert, ['a', 2]), UniqueViolation, `duplicate key, run ${i + 1}`)
  }
  // Refused when parsed: never prepared, so each run is parsed and refused again.
  const broken = 'SELECT v FROM kv WHERE no_such_column = $1'
  const first = await store.query(broken, [1]).catch((err: unknown) => err)
  t.type(first, Error)
  for (let i = 0; i < 2; i++) {
    const again = await store.query(broken, [1]).catch((err: unknown) => err)
    t.equal((again as Error).message, (first as Error).message, `the same refusal, run ${i + 2}`)
  }
  t.strictSame((await store.query('SELECT v FROM kv WHERE k = $1', ['a'])).rows, [{ v: 1 }], 'the connection still serves')
})

t.test('PostgreSQL server: pool.preparedStatements bounds the prepared texts; 0 prepares none', { skip: postgres.skip }, async t => {
  for (const [max, expected] of [[0, 0], [2, 2]] as const) {
    const store = await postgres.create(t, { pool: { max: 1, preparedStatements: max } })
    for (const n of [1, 2, 3, 4]) {
      for (let run = 0; run < 3; run++) {
        t.strictSame((await store.query(`SELECT $1::int + ${n} AS s`, [run])).rows, [{ s: run + n }])
      }
    }
    const { rows } = await store.query<{ statement: string }>(autoNamed, [], probe)
    t.equal(rows.length, expected, `preparedStatements ${max}: ${expected} prepared`)
  }
})
