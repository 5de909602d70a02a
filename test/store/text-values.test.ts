import t from 'tap'
import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { DateOnly, DateTime, Decimal, Int64, Nullable } from '../../schemas/types.js'
import { migrate } from '../../store/migrate.js'
import { quoteIdent } from '../../store/quote.js'
import { ResourceTable } from '../../store/table/index.js'
import { databases } from '../support/databases.js'

// An outbox row keeps the entity as written, its columns as text (write-statement.ts), and the
// body is made from it later (ResourceTable.snapshot). Two readings of one row: the snapshot
// must give exactly what the driver gives for the row itself, on both engines, whatever the
// values (quotes, commas, braces, backslashes and the word NULL in arrays; extreme numbers).

const def = defineResource({
  name: 'sample',
  collection: 'samples',
  path: '/samples',
  idParam: 'sampleId',
  fields: {
    text: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    count: Nullable(Type.Integer()),
    ratio: Nullable(Type.Number()),
    flag: Nullable(Type.Boolean()),
    amount: Nullable(Decimal()),
    big: Nullable(Int64()),
    day: Nullable(DateOnly()),
    at: Nullable(DateTime()),
    data: Nullable(Type.Object({ a: Type.Optional(Type.Array(Type.Unknown())) }, { additionalProperties: true }))
  },
  softDelete: true
})

// Text PostgreSQL stores: no NUL character, no lone surrogate.
const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\\', '{', '}', "'", 'é', '😀', 'N', 'U', 'L') })
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { nil: null })
const row = fc.record({
  text: maybe(text),
  tags: fc.array(fc.oneof(text, fc.constantFrom('NULL', 'null', '', ' ')), { maxLength: 5 }),
  count: maybe(fc.integer()),
  ratio: maybe(fc.double({ noNaN: true, noDefaultInfinity: true })),
  flag: maybe(fc.boolean()),
  amount: maybe(fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat({ max: 9999 })).map(([i, f]) => `${i}.${f}`)),
  big: maybe(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String)),
  day: maybe(fc.date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map(d => d.toISOString().slice(0, 10))),
  at: maybe(fc.date({ min: new Date('1000-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map(d => d.toISOString())),
  data: maybe(fc.record({ a: fc.array(fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 3 }) }))
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)
    await migrate(store, [def.storage.migration])
    const table = new ResourceTable(def.storage.spec)
    const T = quoteIdent(def.storage.table)
    const columns = ['id', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', ...Object.keys(def.fields), 'deletedDateTime', 'deletedBy']
    let n = 0
    await fc.assert(fc.asyncProperty(row, async (values) => {
      const id = `s-${++n}`
      await table.write(store, { kind: 'insert', scope: { ctx: 'prod', by: n % 2 === 0 ? null : 'someone' }, rows: [{ id, etag: '"e"', values }] })
      const read = await table.get(store, 'prod', id)
      const { rows } = await store.query<{ texts: Array<string | null> }>(`SELECT ARRAY[${columns.map(c => `${quoteIdent(c)}::text`).join(', ')}] AS texts FROM ${T} WHERE id = $1`, [id])
      const kept = table.snapshot((rows[0] as { texts: Array<string | null> }).texts)
      if (JSON.stringify(kept) !== JSON.stringify(read)) throw new Error(`snapshot ${JSON.stringify(kept)}\nread ${JSON.stringify(read)}`)
    }), { numRuns: 150 })
  })
}
