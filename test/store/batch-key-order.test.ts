import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { migrate } from '../../store/migrate.js'
import { ResourceTable, type RowWrite } from '../../store/table/index.js'
import { KEY_ORDER_MIN_ROWS } from '../../store/table/statements.js'
import type { Queryable } from '../../store/types.js'
import { databases } from '../support/databases.js'

// A write of many rows (a job's) sends them in the order of the table's key, whatever order it
// was given them in, so that its keys go into the index one beside the other (statements.ts,
// `record`); a smaller batch goes as given. Either way every row comes back with its own values,
// matched by id, and the rows the caller gave keep their order.

const def = defineResource({
  name: 'item',
  collection: 'items',
  path: '/items',
  idParam: 'itemId',
  fields: { title: Type.String() }
})

const N = KEY_ORDER_MIN_ROWS
const pad = (i: number): string => String(i).padStart(5, '0')

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await migrate(store, [def.storage.migration])
    const table = new ResourceTable(def.storage.spec)
    const scope = { ctx: 'prod', by: 'tester' }
    // The ids of the rows parameter ($2, the batch's JSON text) of the last statement sent.
    let sent: string[] = []
    const recording: Queryable = {
      query: async (sql, params, options) => {
        const rows = params?.[1]
        if (typeof rows === 'string' && rows.startsWith('[')) sent = (JSON.parse(rows) as Array<{ id: string }>).map(r => r.id)
        return await store.query(sql, params, options)
      },
      exec: async (sql) => { await store.exec(sql) }
    }

    const cases: Array<{ name: string, ids: string[], keyOrder: boolean }> = [
      { name: `${N} rows reversed`, ids: Array.from({ length: N }, (_, i) => `r-${pad(N - i)}`), keyOrder: true },
      // Upper case before lower, '-' before digits: the bytes' order, as the key's "C" collation.
      { name: `${N} rows shuffled`, ids: Array.from({ length: N }, (_, i) => `${'aZ-9'[i % 4] as string}${pad((i * 7919) % N)}`), keyOrder: true },
      { name: `${N - 1} rows reversed`, ids: Array.from({ length: N - 1 }, (_, i) => `s-${pad(N - i)}`), keyOrder: false },
      { name: '3 rows reversed', ids: ['t-c', 't-b', 't-a'], keyOrder: false }
    ]
    for (const c of cases) {
      const given = [...c.ids]
      const expected = c.keyOrder ? [...c.ids].sort() : given
      const rows: RowWrite[] = c.ids.map((id, i) => ({ id, etag: `"${i}"`, values: { title: `title of ${id}` } }))
      const inserted = await table.write(recording, { kind: 'insert', scope, rows })
      t.strictSame(sent, expected, `${c.name}: inserted ${c.keyOrder ? 'in the key\'s order' : 'as given'}`)
      const answered = new Map(inserted.rows.map(r => [r.id as string, r]))
      t.equal(answered.size, c.ids.length, `${c.name}: every row answered`)
      t.ok(c.ids.every((id, i) => answered.get(id)?.title === `title of ${id}` && answered.get(id)?.etag === `"${i}"`), `${c.name}: each row holds its own values and ETag`)
      t.strictSame(rows.map(r => r.id), given, `${c.name}: the rows given keep their order`)

      const updated = await table.write(recording, { kind: 'update', scope, rows: rows.map(r => ({ ...r, etag: `${r.etag}2`, values: { title: `new ${r.id}` } })) })
      t.strictSame(sent, expected, `${c.name}: updated ${c.keyOrder ? 'in the key\'s order' : 'as given'}`)
      t.ok(updated.rows.length === c.ids.length && updated.rows.every(r => r.title === `new ${r.id as string}`), `${c.name}: each row updated to its own values`)
      const stored = await store.query<{ id: string }>(`SELECT id FROM ${def.storage.table} WHERE id = ANY($1::text[]) ORDER BY id`, [c.ids])
      t.strictSame(stored.rows.map(r => r.id), [...c.ids].sort(), `${c.name}: the key's order is the bytes' order`)
    }
  })
}
