import t from 'tap'
import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { DateOnly, DateTime, Decimal, Int32, Int64, Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { migrate } from '../../store/migrate.js'
import { ResourceTable, type Guard, type RowWrite, type TableWrite } from '../../store/table/index.js'
import { databases } from '../support/databases.js'

// A write of one row sends its values as parameters of their own; a write of several sends them
// as one JSON parameter (write-statement.ts). The two must store the very same values: every
// field kind, written by each, read back equal, on both engines.

const def = defineResource({
  name: 'sample',
  collection: 'samples',
  path: '/samples',
  idParam: 'sampleId',
  fields: {
    text: Nullable(Type.String()),
    choice: Nullable(UpperSnakeEnum(['FIRST', 'SECOND_ONE'])),
    at: Nullable(DateTime()),
    day: Nullable(DateOnly()),
    amount: Nullable(Decimal()),
    big: Nullable(Int64()),
    small: Nullable(Int32({ minimum: -2147483648, maximum: 2147483647 })),
    ratio: Nullable(Type.Number()),
    flag: Nullable(Type.Boolean()),
    tags: Nullable(Type.Array(Type.String())),
    doc: Nullable(Type.Object({}, { additionalProperties: true })),
    // Strings with a format: stored as JSON, not as text[].
    days: Nullable(Type.Array(DateOnly())),
    list: Nullable(Type.Array(Type.Object({ n: Type.Integer() })))
  },
  softDelete: true
})

const FIELDS = def.storage.spec.columns.map(c => c.field)

// Text PostgreSQL can hold: no U+0000, no lone surrogate (the validation plugin refuses both).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const text = fc.string({ unit: 'binary' }).map(s => s.replaceAll('\u0000', '').replace(LONE_SURROGATE, ''))
// JSON.stringify writes both as \u escapes.
const json: fc.Arbitrary<unknown> = fc.jsonValue().map(v => JSON.parse(JSON.stringify(v).replace(/\\u(0000|d[89a-f][0-9a-f]{2})/gi, '')) as unknown)
const values = fc.record({
  text: fc.option(text),
  choice: fc.option(fc.constantFrom('FIRST', 'SECOND_ONE')),
  at: fc.option(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map(d => d.toISOString())),
  day: fc.option(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map(d => d.toISOString().slice(0, 10))),
  amount: fc.option(fc.tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.nat({ max: 12 })).map(([n, scale]) => {
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0')
    return `${n < 0n ? '-' : ''}${scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`}`
  })),
  big: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String)),
  small: fc.option(fc.integer()),
  ratio: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  flag: fc.option(fc.boolean()),
  tags: fc.option(fc.array(text, { maxLength: 4 })),
  doc: fc.option(fc.dictionary(text, json, { maxKeys: 4 })),
  days: fc.option(fc.array(fc.constantFrom('2024-02-29', '0001-01-01', '9999-12-31'), { maxLength: 3 })),
  list: fc.option(fc.array(fc.record({ n: fc.integer() }), { maxLength: 3 }))
}) as fc.Arbitrary<Row>

type Row = Record<string, unknown>

/** The stored fields of `row`, without what the server sets. */
const fieldsOf = (row: Row | undefined): Row => Object.fromEntries(FIELDS.map(f => [f, row?.[f]]))

for (const db of databases) {
  t.test(`${db.label}: one row and several rows store the same values`, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await migrate(store, [def.storage.migration])
    const table = new ResourceTable(def.storage.spec)
    const scope = { ctx: 'prod', by: 'tester' }
    let n = 0
    const write = async (w: Omit<TableWrite, 'scope'>): Promise<Row[]> => (await table.write(store, { ...w, scope })).rows
    // A batch's rows come back in no set order (a large one is written in the key's order).
    const byId = (rows: Row[], id: string): Row | undefined => rows.find(r => r.id === id)

    await fc.assert(fc.asyncProperty(values, values, async (first, second) => {
      const alone = `alone-${++n}`
      const together = `together-${n}`
      const filler: RowWrite = { id: `filler-${n}`, etag: '"f"', values: second }
      const inserted = await write({ kind: 'insert', rows: [{ id: alone, etag: '"a"', values: first }] })
      const batch = await write({ kind: 'insert', rows: [{ id: together, etag: '"t"', values: first }, filler] })
      t.strictSame(fieldsOf(inserted[0]), fieldsOf(byId(batch, together)), 'inserted: as answered')
      t.strictSame(fieldsOf((await table.get(store, 'prod', alone)) ?? undefined), fieldsOf((await table.get(store, 'prod', together)) ?? undefined), 'inserted: as read back')

      // An update of every field, guarded by the ETag it was decided on, to the other values.
      const seen: Guard = { by: 'seen' }
      const updated = await write({ kind: 'update', guard: seen, rows: [{ id: alone, etag: '"a2"', seen: '"a"', values: second }] })
      const updatedBatch = await write({ kind: 'update', guard: seen, rows: [{ id: together, etag: '"t2"', seen: '"t"', values: second }, { ...filler, etag: '"f2"', seen: '"f"' }] })
      t.equal(updated.length, 1, 'updated alone')
      t.equal(updatedBatch.length, 2, 'updated together')
      t.strictSame(fieldsOf(updated[0]), fieldsOf(byId(updatedBatch, together)), 'updated: as answered')
      t.strictSame(fieldsOf(updated[0]), fieldsOf(byId(updatedBatch, filler.id)), 'updated: the same values as the filler written with them')
      t.strictSame(fieldsOf((await table.get(store, 'prod', alone)) ?? undefined), fieldsOf((await table.get(store, 'prod', together)) ?? undefined), 'updated: as read back')
      return true
    }), { numRuns: 40 })

    t.test('a guard that no longer holds leaves the one row alone, as it does a batch', async t => {
      await write({ kind: 'insert', rows: [{ id: 'guarded', etag: '"g1"', values: {} }] })
      const stale = await write({ kind: 'update', guard: { by: 'seen' }, rows: [{ id: 'guarded', etag: '"g2"', seen: '"old"', values: { text: 'x' } }] })
      t.strictSame(stale, [], 'seen: another ETag')
      const refused = await write({ kind: 'update', guard: { by: 'preconditions', allowed: ['"old"'], refused: null, live: true }, rows: [{ id: 'guarded', etag: '"g2"', values: { text: 'x' } }], fields: ['text'] })
      t.strictSame(refused, [], 'preconditions: another ETag')
      const done = await write({ kind: 'update', guard: { by: 'preconditions', allowed: ['"g1"'], refused: null, live: true }, rows: [{ id: 'guarded', etag: '"g2"', values: { text: 'x' } }], fields: ['text'] })
      t.strictSame(done.map(r => [r.id, r.etag, r.text]), [['guarded', '"g2"', 'x']], 'preconditions met: written')
      const gone = await write({ kind: 'delete', rows: [{ id: 'guarded', etag: '"g3"', values: {} }] })
      t.strictSame(gone.map(r => r.id), ['guarded'], 'deleted')
      t.equal(await table.get(store, 'prod', 'guarded'), null)
    })
  })
}
