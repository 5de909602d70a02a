import t from 'tap'
import fc from 'fast-check'
import { quoteIdent } from '../../store/index.js'
import { databases } from '../support/databases.js'

/** Strings PostgreSQL accepts as one identifier: non-empty, no NUL, at most 63 UTF-8 bytes. */
const identifier = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes('\u0000') && Buffer.byteLength(s) <= 63)

t.test('quotes and doubles inner quotes', async (t) => {
  const cases: Array<[string, string]> = [
    ['authors', '"authors"'],
    ['Authors', '"Authors"'],
    ['select', '"select"'],
    ['a b', '"a b"'],
    ['a"b', '"a""b"'],
    ['"', '""""'],
    ['x"; DROP TABLE t; --', '"x""; DROP TABLE t; --"'],
    ["it's", '"it\'s"'],
    ['été', '"été"'],
    ['a'.repeat(63), `"${'a'.repeat(63)}"`],
    ['é'.repeat(31), `"${'é'.repeat(31)}"`]
  ]
  for (const [name, quoted] of cases) t.equal(quoteIdent(name), quoted, name)
})

t.test('refuses what is not one identifier', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    ['', /non-empty string, got ""/],
    [undefined, /non-empty string/],
    [42, /non-empty string, got 42/],
    ['a\u0000b', /NUL/],
    ['a'.repeat(64), /at most 63 bytes/],
    ['é'.repeat(32), /at most 63 bytes/],
    ['a\ud800', /well-formed/],
    ['\udc00x', /well-formed/]
  ]
  for (const [name, message] of cases) {
    t.throws(() => quoteIdent(name as string), { name: 'TypeError', message }, JSON.stringify(name))
  }
})

t.test('property: the quoted form unquotes to the name, with no lone quote inside', async () => {
  fc.assert(fc.property(identifier, (name) => {
    const q = quoteIdent(name)
    const inner = q.slice(1, -1)
    return q.startsWith('"') && q.endsWith('"') &&
      !inner.replaceAll('""', '').includes('"') &&
      inner.replaceAll('""', '"') === name
  }))
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)

    t.test('property: the database reads back exactly the name', async () => {
      await fc.assert(fc.asyncProperty(identifier, async (name) => {
        // to_jsonb: column names come back as JSON keys, even "__proto__".
        const { rows } = await store.query<{ j: Record<string, number> }>(`SELECT to_jsonb(q) AS j FROM (SELECT 1 AS ${quoteIdent(name)}) q`)
        const keys = Object.keys(rows[0]?.j ?? {})
        return keys.length === 1 && keys[0] === name
      }), { numRuns: 100 })
    })

    t.test('a hostile name stays one identifier', async (t) => {
      const hostile = 'q_x"; DROP TABLE q_keep; --'
      await store.exec('CREATE TABLE q_keep (id int)')
      await store.exec(`CREATE TABLE ${quoteIdent(hostile)} (id int)`)
      const { rows } = await store.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'q\\_%' ORDER BY 1")
      t.strictSame(rows.map((r) => r.name), ['q_keep', hostile])
    })
  })
}
