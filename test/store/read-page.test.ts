import t from 'tap'
import { Type } from '@sinclair/typebox'
import { createFieldMap } from '../../model/fields.js'
import type { CollectionQuery, Filter, OrderingTerm, Page, Paging } from '../../model/query.js'
import { readChildPage, readPage, type RowSource } from '../../store/read-page.js'
import { compileSql, selectStatement } from '../../store/sql-query.js'
import { columnOf, ResourceTable, tableDdl, type TableSpec } from '../../store/table/index.js'
import type { Store } from '../../store/types.js'
import { databases } from '../support/databases.js'

/*
 * readPage, the one helper every stored collection pages through, on both engines: keyset and
 * offset paging, the neighbours, and the total count in the page's own statement, past the
 * end too; a child collection's page, which also says whether its parent exists when it is
 * empty; and a resource table's soft-delete rule, applied in its page.
 */

const fields = createFieldMap([
  { path: 'id', type: 'string', sortable: true },
  { path: 'n', type: 'int32', nullable: true, sortable: true },
  { path: 'name', type: 'string', nullable: true }
])
// Columns named otherwise than the paths: the caller's column map says where each path is.
const columns = new Map([['id', 't.id'], ['n', 't.num'], ['name', 't.label']])
const source = { select: 't.id, t.num AS n, t.label AS name', from: 'things t', where: 't.ctx = $1', params: ['a'] }
const ordering: OrderingTerm[] = [{ field: 'n', direction: 'asc' }, { field: 'id', direction: 'asc' }]
const cmp = (field: string, op: 'gt' | 'le', value: number): Filter => ({ kind: 'cmp', field, op, values: [value], ci: false })
const offset = (at: number, limit: number, totalCount = true): Paging => ({ kind: 'offset', limit, offset: at, totalCount })

/** A store that counts the statements it runs. */
function counted (store: Store): RowSource & { statements: number } {
  const db = {
    statements: 0,
    query: async <R extends object>(sql: string, params: unknown[]) => {
      db.statements++
      return await store.query<R>(sql, params)
    }
  }
  return db
}

const summary = (page: Page<Record<string, unknown>>): unknown => ({
  ids: page.items.map(item => item.id),
  hasNext: page.hasNext,
  hasPrevious: page.hasPrevious,
  ...('totalCount' in page ? { totalCount: page.totalCount } : {})
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await store.exec(`CREATE TABLE things (ctx text NOT NULL, id text NOT NULL, num integer, label text, PRIMARY KEY (ctx, id));
      INSERT INTO things VALUES ('a', 'i1', 1, 'one'), ('a', 'i2', 2, 'two'), ('a', 'i3', 3, 'three'), ('a', 'i4', 4, 'four'),
        ('a', 'i5', 5, 'five'), ('a', 'i6', 6, 'six'), ('a', 'i7', NULL, NULL), ('b', 'i8', 8, 'eight'), ('b', 'i9', 9, 'nine')`)

    t.test('offset paging: one statement, with the total count when asked, past the end too', async t => {
      const cases: Array<[string, Filter | null, Paging, unknown]> = [
        ['the first page', null, offset(0, 3), { ids: ['i1', 'i2', 'i3'], hasNext: true, hasPrevious: false, totalCount: 7 }],
        ['the last page, one row of nulls but its id', null, offset(6, 3), { ids: ['i7'], hasNext: false, hasPrevious: true, totalCount: 7 }],
        ['exactly at the end', null, offset(7, 3), { ids: [], hasNext: false, hasPrevious: true, totalCount: 7 }],
        ['far past the end', null, offset(100, 3), { ids: [], hasNext: false, hasPrevious: true, totalCount: 7 }],
        ['nothing matches', cmp('n', 'gt', 100), offset(0, 3), { ids: [], hasNext: false, hasPrevious: false, totalCount: 0 }],
        ['nothing matches, past the end', cmp('n', 'gt', 100), offset(5, 3), { ids: [], hasNext: false, hasPrevious: true, totalCount: 0 }],
        ['a filter: the count is the filter\'s', cmp('n', 'le', 3), offset(1, 2), { ids: ['i2', 'i3'], hasNext: false, hasPrevious: true, totalCount: 3 }],
        ['a full page before more', cmp('n', 'le', 5), offset(2, 2), { ids: ['i3', 'i4'], hasNext: true, hasPrevious: true, totalCount: 5 }],
        ['without the count', null, offset(2, 2, false), { ids: ['i3', 'i4'], hasNext: true, hasPrevious: true }]
      ]
      for (const [label, filter, paging, expected] of cases) {
        const db = counted(store)
        const page = await readPage(db, { filter, ordering, paging }, fields, source, { columns })
        t.strictSame(summary(page), expected, label)
        t.equal(db.statements, 1, `${label}: one statement`)
        t.ok(page.items.every(item => !('$totalCount' in item)), `${label}: the count is not left in the items`)
      }
    })

    t.test('keyset paging: forwards, then back', async t => {
      const query = (paging: Paging): CollectionQuery => ({ filter: null, ordering, paging })
      const first = await readPage(store, query({ kind: 'cursor', limit: 3 }), fields, source, { columns })
      t.strictSame([summary(first), first.previous, first.next], [{ ids: ['i1', 'i2', 'i3'], hasNext: true, hasPrevious: false }, null, { direction: 'next', values: [3, 'i3'] }])
      const second = await readPage(store, query({ kind: 'cursor', limit: 3, cursor: first.next ?? undefined }), fields, source, { columns })
      t.strictSame([summary(second), second.previous, second.next], [{ ids: ['i4', 'i5', 'i6'], hasNext: true, hasPrevious: true }, { direction: 'previous', values: [4, 'i4'] }, { direction: 'next', values: [6, 'i6'] }])
      const last = await readPage(store, query({ kind: 'cursor', limit: 3, cursor: second.next ?? undefined }), fields, source, { columns })
      t.strictSame([summary(last), last.next], [{ ids: ['i7'], hasNext: false, hasPrevious: true }, null], 'null sorts last')
      const back = await readPage(store, query({ kind: 'cursor', limit: 3, cursor: second.previous ?? undefined }), fields, source, { columns })
      t.strictSame(summary(back), { ids: ['i1', 'i2', 'i3'], hasNext: true, hasPrevious: false }, 'a previous page comes back in order')
    })

    t.test('items are decoded rows; a path without a column is a setup mistake', async t => {
      const page = await readPage(store, { filter: null, ordering, paging: offset(0, 1) }, fields, source, { columns, decode: row => ({ ...row, seen: true }) })
      t.strictSame(page.items, [{ id: 'i1', n: 1, name: 'one', seen: true }])
      t.equal(page.totalCount, 7)
      await t.rejects(readPage(store, { filter: null, ordering, paging: offset(0, 1) }, fields, source, { columns: new Map([['id', 't.id']]) }),
        new TypeError('sql-query: the query names n, which has no column'))
    })

    t.test('a soft-deletable table hides deleted rows unless the query filters on their deletion', async t => {
      const spec: TableSpec = {
        table: 'notes',
        columns: [columnOf('name', Type.String())],
        writable: ['name'],
        unique: [],
        references: [],
        indexes: [],
        summaryOmit: [],
        softDelete: true
      }
      await store.exec(tableDdl(spec))
      await store.exec(`INSERT INTO notes (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, "deletedDateTime") VALUES
        ('a', 'n1', '"e1"', now(), now(), 'kept', NULL), ('a', 'n2', '"e2"', now(), now(), 'gone', now()), ('a', 'n3', '"e3"', now(), now(), 'kept too', NULL)`)
      const table = new ResourceTable(spec)
      const noteFields = createFieldMap([
        { path: 'id', type: 'string', sortable: true },
        { path: 'name', type: 'string' },
        { path: 'deletedDateTime', type: 'date-time', nullable: true }
      ])
      const byId: OrderingTerm[] = [{ field: 'id', direction: 'asc' }]
      const deleted: Filter = { kind: 'cmp', field: 'deletedDateTime', op: 'isnull', values: [false], ci: false }
      const named: Filter = { kind: 'cmp', field: 'name', op: 'ne', values: ['x'], ci: false }
      const cases: Array<[string, Filter | null, unknown]> = [
        ['no filter: deleted rows hidden', null, { ids: ['n1', 'n3'], hasNext: false, hasPrevious: false, totalCount: 2 }],
        ['a filter on other fields: still hidden', named, { ids: ['n1', 'n3'], hasNext: false, hasPrevious: false, totalCount: 2 }],
        ['a filter on the deletion: asked for', deleted, { ids: ['n2'], hasNext: false, hasPrevious: false, totalCount: 1 }],
        ['the deletion inside a junction', { kind: 'or', children: [named, deleted] }, { ids: ['n1', 'n2', 'n3'], hasNext: false, hasPrevious: false, totalCount: 3 }]
      ]
      for (const [label, filter, expected] of cases) {
        const page = await table.page(store, { filter, ordering: byId, paging: offset(0, 10) }, noteFields, { ctx: 'a' })
        t.strictSame(summary(page), expected, label)
      }
    })
    t.test('a child collection\'s page: one statement, null for a missing parent, its check run only for an empty page', async t => {
      await store.exec(`CREATE TABLE owners (ctx text NOT NULL, id text NOT NULL, PRIMARY KEY (ctx, id));
        INSERT INTO owners VALUES ('a', 'o1'), ('a', 'o2'), ('b', 'o3');
        CREATE TABLE pets (ctx text NOT NULL, id text NOT NULL, owner text NOT NULL, num integer, label text, PRIMARY KEY (ctx, id));
        INSERT INTO pets VALUES ('a', 'p1', 'o1', 1, 'one'), ('a', 'p2', 'o1', 2, 'two'), ('a', 'p3', 'o1', 3, 'three'), ('b', 'p4', 'o3', 4, 'four')`)
      const pets = (ctx: string, owner: string): typeof source => ({ select: 't.id, t.num AS n, t.label AS name', from: 'pets t', where: 't.ctx = $1 AND t.owner = $2', params: [ctx, owner] })
      const exists = 'EXISTS (SELECT 1 FROM owners WHERE ctx = $1 AND id = $2)'
      const cursor: Paging = { kind: 'cursor', limit: 2 }
      const cases: Array<[string, string, string, Filter | null, Paging, unknown]> = [
        ['rows of a parent', 'a', 'o1', null, cursor, { ids: ['p1', 'p2'], hasNext: true, hasPrevious: false }],
        ['rows of a parent, counted', 'a', 'o1', null, offset(1, 5), { ids: ['p2', 'p3'], hasNext: false, hasPrevious: true, totalCount: 3 }],
        ['a parent with none', 'a', 'o2', null, cursor, { ids: [], hasNext: false, hasPrevious: false }],
        ['a parent with none, counted', 'a', 'o2', null, offset(0, 5), { ids: [], hasNext: false, hasPrevious: false, totalCount: 0 }],
        ['a parent whose rows the filter leaves out', 'a', 'o1', cmp('n', 'gt', 10), cursor, { ids: [], hasNext: false, hasPrevious: false }],
        ['past the end of a parent\'s rows, counted', 'a', 'o1', null, offset(5, 5), { ids: [], hasNext: false, hasPrevious: true, totalCount: 3 }],
        ['no such parent', 'a', 'o9', null, cursor, null],
        ['no such parent, counted', 'a', 'o9', null, offset(0, 5), null],
        ['a parent of another execution context', 'a', 'o3', null, cursor, null]
      ]
      for (const [label, ctx, owner, filter, paging, expected] of cases) {
        const db = counted(store)
        const query = { filter, ordering, paging }
        const page = await readChildPage(db, query, fields, pets(ctx, owner), exists, { columns })
        t.strictSame(page === null ? null : summary(page), expected, label)
        t.equal(db.statements, 1, `${label}: one statement`)
        t.ok(page === null || page.items.every(item => !('$parentExists' in item) && !('$totalCount' in item)), `${label}: nothing of the statement's own left in the items`)
        if (page !== null && page.items.length > 0) t.strictSame(page, await readPage(store, query, fields, pets(ctx, owner), { columns }), `${label}: the page readPage reads`)
      }
      // PostgreSQL runs an uncorrelated subquery the first time it is needed: never, for a page with rows.
      const plan = async (owner: string): Promise<string> => {
        const sql = compileSql({ filter: null, ordering, paging: cursor }, fields, { paramStart: 3, columns })
        const statement = selectStatement(sql, { ...pets('a', owner), parentExists: exists })
        const { rows } = await store.query<Record<string, string>>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${statement.text}`, statement.params)
        return rows.map(r => Object.values(r)[0]).join('\n')
      }
      t.match(await plan('o1'), /on owners[^\n]*\(never executed\)/, 'rows: the parent is not looked for')
      t.notMatch(await plan('o2'), /never executed/, 'none: it is')
    })
  })
}
