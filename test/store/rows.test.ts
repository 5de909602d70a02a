import t from 'tap'
import { databases } from '../support/databases.js'

// Rows are plain objects keyed by column name in select order, whatever the engine; on a
// server they are built from array-mode rows (store/pg.ts), so the shape rules are pinned here.
for (const db of databases) {
  t.test(`${db.label}: rows as objects`, { skip: db.skip }, async t => {
    const store = await db.create(t)

    t.test('many columns keep their order, names and values', async t => {
      const names = Array.from({ length: 30 }, (_, i) => `c${i}`)
      const odd = ['a"b', 'x y', 'é', 'constructor', 'toString', '0']
      const all = [...names, ...odd]
      const sql = `SELECT ${all.map((n, i) => `${i}::int AS "${n.replaceAll('"', '""')}"`).join(', ')} FROM generate_series(1, 3)`
      const { rows, rowCount } = await store.query<Record<string, unknown>>(sql)
      t.equal(rowCount, 3)
      t.equal(rows.length, 3)
      const expected = Object.fromEntries(all.map((n, i) => [n, i]))
      for (const row of rows) {
        t.same(row, expected)
        t.equal(Object.getPrototypeOf(row), Object.prototype, 'a plain object')
      }
      // Integer-like keys come first in any JavaScript object; the others keep select order.
      t.same(Object.keys(rows[0] as object), ['0', ...names, ...odd.slice(0, -1)])
    })

    t.test('a column named twice keeps its first place and its last value', async t => {
      const { rows } = await store.query('SELECT 1 AS a, 2 AS b, 3 AS a')
      t.same(rows, [{ a: 3, b: 2 }])
      t.same(Object.keys(rows[0] as object), ['a', 'b'])
    })

    t.test('no rows, no columns', async t => {
      t.same((await store.query('SELECT 1 AS a WHERE false')).rows, [])
      await store.exec('CREATE TABLE rows_t (k text)')
      const insert = await store.query('INSERT INTO rows_t VALUES ($1), ($2)', ['x', 'y'])
      t.same(insert, { rows: [], rowCount: 2 })
    })
  })
}

const server = databases.find(db => db.kind === 'pg')
t.test('PostgreSQL server: row shapes pg itself would give', { skip: server?.skip ?? 'no server entry' }, async t => {
  const store = await (server as NonNullable<typeof server>).create(t)

  t.test('a column named __proto__ is an own property, the prototype stays', async t => {
    const { rows } = await store.query<Record<string, unknown>>('SELECT 1 AS "__proto__", 2 AS b')
    const row = rows[0] as Record<string, unknown>
    t.ok(Object.hasOwn(row, '__proto__'))
    t.equal(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, 1)
    t.equal(row.b, 2)
    t.equal(Object.getPrototypeOf(row), Object.prototype)
  })

  t.test('beyond the cached column lists, rows are still made', async t => {
    for (let i = 0; i < 300; i++) {
      const { rows } = await store.query(`SELECT $1::int AS "k${i}"`, [i])
      t.same(rows, [{ [`k${i}`]: i }], `list ${i}`)
    }
  })
})
