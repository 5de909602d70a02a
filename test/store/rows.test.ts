import t from 'tap'
import fc from 'fast-check'
import { parseTimestamptz } from '../../store/parsers.js'
import { databases } from '../support/databases.js'

// What PostgreSQL writes for the instant `ms` in a zone `offsetSeconds` east of UTC (DateStyle
// ISO): local time, the fraction without trailing zeros, the offset as +HH, +HH:MM or +HH:MM:SS.
function postgresText (ms: number, offsetSeconds: number, fractionDigits: string): string {
  const local = new Date(ms + offsetSeconds * 1000).toISOString()
  const fraction = (local.slice(20, 23) + fractionDigits).replace(/0+$/, '')
  const abs = Math.abs(offsetSeconds)
  const [h, m, s] = [Math.floor(abs / 3600), Math.floor(abs / 60) % 60, abs % 60].map(n => String(n).padStart(2, '0'))
  const offset = `${offsetSeconds < 0 ? '-' : '+'}${h}${m === '00' && s === '00' ? '' : `:${m}`}${s === '00' ? '' : `:${s}`}`
  return `${local.slice(0, 10)} ${local.slice(11, 19)}${fraction === '' ? '' : `.${fraction}`}${offset}`
}

t.test('a timestamptz reads as the instant in UTC to the millisecond, whatever the offset it is written with', async t => {
  // Local times within years 1000 to 9999, which postgresText writes as PostgreSQL does.
  const instant = fc.integer({ min: Date.UTC(1000, 0, 2), max: Date.UTC(9999, 11, 30) })
  const offset = fc.oneof(fc.constant(0), fc.integer({ min: -15 * 3600, max: 15 * 3600 }), fc.integer({ min: -15, max: 15 }).map(h => h * 3600))
  // Microseconds beyond the millisecond are cut, as a Date would cut them.
  const micros = fc.stringMatching(/^\d{0,3}$/)
  fc.assert(fc.property(instant, offset, micros, (ms, off, extra) => {
    return parseTimestamptz(postgresText(ms, off, extra)) === new Date(ms).toISOString()
  }))
  const cases: Array<[string, string]> = [
    ['2024-05-01 12:00:00+00', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01 12:00:00.1+00', '2024-05-01T12:00:00.100Z'],
    ['2024-05-01 12:00:00.123456+00', '2024-05-01T12:00:00.123Z'],
    ['2024-05-01 00:30:00+05:30', '2024-04-30T19:00:00.000Z'],
    ['1900-01-01 00:00:00+00:09:21', '1899-12-31T23:50:39.000Z'],
    ['0099-03-01 00:00:00-01', '0099-03-01T01:00:00.000Z'],
    ['12024-05-01 12:00:00+00', '+012024-05-01T12:00:00.000Z'],
    ['infinity', 'infinity'],
    ['-infinity', '-infinity'],
    ['2024-05-01 12:00:00+00 BC', '2024-05-01 12:00:00+00 BC']
  ]
  for (const [text, iso] of cases) t.equal(parseTimestamptz(text), iso, text)
})

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
        t.strictSame(row, expected)
        t.equal(Object.getPrototypeOf(row), Object.prototype, 'a plain object')
      }
      // Integer-like keys come first in any JavaScript object; the others keep select order.
      t.strictSame(Object.keys(rows[0] as object), ['0', ...names, ...odd.slice(0, -1)])
    })

    t.test('a column named twice keeps its first place and its last value', async t => {
      const { rows } = await store.query('SELECT 1 AS a, 2 AS b, 3 AS a')
      t.strictSame(rows, [{ a: 3, b: 2 }])
      t.strictSame(Object.keys(rows[0] as object), ['a', 'b'])
    })

    t.test('timestamptz values come as the convention\'s date-time in UTC, whatever the session\'s time zone', async t => {
      const sql = `SELECT '2024-05-01T12:00:00.12Z'::timestamptz AS a, '2024-05-01T12:00:00Z'::timestamptz(3) AS b,
        '0099-03-01T00:00:00.5Z'::timestamptz AS c, 'infinity'::timestamptz AS d, NULL::timestamptz AS e`
      const expected = { a: '2024-05-01T12:00:00.120Z', b: '2024-05-01T12:00:00.000Z', c: '0099-03-01T00:00:00.500Z', d: 'infinity', e: null }
      t.strictSame((await store.query(sql)).rows, [expected], 'UTC, as every session is')
      for (const zone of ['Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam']) {
        const rows = await store.transaction(async tx => {
          await tx.exec(`SET LOCAL TimeZone = '${zone}'`)
          return (await tx.query(sql)).rows
        })
        t.strictSame(rows, [expected], zone)
      }
    })

    t.test('no rows, no columns', async t => {
      t.strictSame((await store.query('SELECT 1 AS a WHERE false')).rows, [])
      await store.exec('CREATE TABLE rows_t (k text)')
      const insert = await store.query('INSERT INTO rows_t VALUES ($1), ($2)', ['x', 'y'])
      t.strictSame(insert, { rows: [], rowCount: 2 })
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
      t.strictSame(rows, [{ [`k${i}`]: i }], `list ${i}`)
    }
  })
})
