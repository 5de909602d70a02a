import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { Int64, Nullable } from '../../schemas/types.js'
import { migrate } from '../../store/migrate.js'
import type { ClaimPart, OutboxPart, QuietPart } from '../../store/statement-parts.js'
import { ResourceTable, type Guard, type Returning, type TableWrite } from '../../store/table/index.js'
import { databases } from '../support/databases.js'

// A write answered without a body asks its statement for the rows' id and ETag alone
// (`returning: 'etag'`, write-statement.ts); any other, for the rows as stored. Whatever the
// statement answers, its outbox part still gets the whole row. Every kind of write, with and
// without a guard, an outbox and the `current` answer, on both engines; each shape is run
// with 'row' first, so a text cached without regard to `returning` would fail the 'etag' run.

const def = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/notes',
  idParam: 'noteId',
  fields: { title: Type.String(), big: Nullable(Int64()) },
  softDelete: true
})

/** An outbox of the test's own: the snapshot of each written row. */
const SNAPSHOTS = 'note_snapshots'
const outbox: OutboxPart = {
  key: 'test-snapshots',
  values: [],
  sql: (_first, written) => `o AS (INSERT INTO ${SNAPSHOTS} (entity) SELECT ${written.snapshot} FROM ${written.source} RETURNING 1)`
}

const ALL_FIELDS = ['id', 'etag', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', 'title', 'big', 'deletedDateTime', 'deletedBy']

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    await migrate(store, [def.storage.migration, { id: 'test:snapshots', sql: `CREATE TABLE ${SNAPSHOTS} (n serial PRIMARY KEY, entity text[] NOT NULL)` }])
    const table = new ResourceTable(def.storage.spec)
    const scope = { ctx: 'prod', by: 'tester' }
    let n = 0
    const guards: Array<{ name: string, guard: (etag: string) => Guard | null }> = [
      { name: 'unguarded', guard: () => null },
      { name: 'guarded by preconditions', guard: (etag) => ({ by: 'preconditions', allowed: [etag], refused: null, live: false }) }
    ]
    const kinds = ['update', 'mark-deleted', 'restore', 'delete'] as const

    for (const kind of kinds) {
      for (const { name, guard } of guards) {
        for (const withOutbox of [false, true]) {
          for (const current of [false, true]) {
            for (const returning of ['row', 'etag', 'count'] as Returning[]) {
              const label = `${kind}, ${name}${withOutbox ? ', with an outbox' : ''}${current ? ', current' : ''}: ${returning}`
              const id = `note-${++n}`
              await table.write(store, { kind: 'insert', scope, rows: [{ id, etag: '"old"', values: { title: 'before', big: '9007199254740993' } }] })
              if (kind === 'restore') await store.query(`UPDATE ${def.storage.table} SET "deletedDateTime" = now() WHERE id = $1`, [id])
              await store.query(`DELETE FROM ${SNAPSHOTS}`)
              const w: TableWrite = {
                kind,
                scope,
                rows: [{ id, etag: '"new"', values: { title: 'after' } }],
                fields: kind === 'update' ? ['title'] : undefined,
                guard: guard('"old"'),
                outbox: withOutbox ? outbox : null,
                current,
                returning
              }
              const written = await table.write(store, w)
              if (returning === 'count') {
                t.strictSame([written.rows, written.count], [[], 1], `${label}: no row, one written`)
                t.equal((await table.get(store, 'prod', id))?.etag, kind === 'delete' ? undefined : '"new"', `${label}: written`)
              } else t.equal(written.rows.length, 1, `${label}: one row written`)
              const row = (written.rows[0] ?? { id, etag: kind === 'delete' ? '"old"' : '"new"' }) as Record<string, unknown>
              if (returning === 'count') {
                t.notOk(/RETURNING/.test(table.statement(w).text) && !/^WITH/.test(table.statement(w).text), `${label}: a write alone returns nothing`)
              } else if (returning === 'etag') {
                t.strictSame(Object.keys(row).sort(), ['etag', 'id'], `${label}: the id and ETag alone`)
              } else {
                t.strictSame(Object.keys(row).sort(), [...ALL_FIELDS].sort(), `${label}: the whole row`)
                t.equal(row.big, '9007199254740993', `${label}: an int64 as its exact text`)
              }
              // As stored, or as it was for a delete.
              t.equal(row.etag, kind === 'delete' ? '"old"' : '"new"', `${label}: its ETag`)
              t.equal(row.id, id)
              const { rows: snapshots } = await store.query<{ entity: string[] }>(`SELECT entity FROM ${SNAPSHOTS}`)
              if (!withOutbox) {
                t.equal(snapshots.length, 0)
                continue
              }
              t.equal(snapshots.length, 1, `${label}: one outbox row`)
              const snapshot = table.snapshot((snapshots[0] as { entity: string[] }).entity)
              t.strictSame(Object.keys(snapshot).sort(), [...ALL_FIELDS].sort(), `${label}: the outbox holds the whole row`)
              t.match(snapshot, { id, title: kind === 'update' ? 'after' : 'before', big: '9007199254740993', createdBy: 'tester' }, `${label}: as written`)
            }
          }
        }
      }
    }

    // A claim of the test's own, taken when its one value is true.
    const claim = (taken: boolean): ClaimPart => ({ key: 'test-claim', values: [taken], sql: (first, when) => `k AS (SELECT 1 WHERE $${first}::boolean AND ${when ?? 'true'})` })
    for (const withOutbox of [false, true]) {
      for (const taken of [null, true, false]) {
        const label = `inserts counted${withOutbox ? ', with an outbox' : ''}${taken === null ? '' : taken ? ', a claim taken' : ', a claim held'}`
        await store.query(`DELETE FROM ${SNAPSHOTS}`)
        const ids = [`note-${++n}`, `note-${++n}`, `note-${++n}`]
        const written = await table.write(store, {
          kind: 'insert',
          scope,
          rows: ids.map(id => ({ id, etag: `"${id}"`, values: { title: id, big: null } })),
          outbox: withOutbox ? outbox : null,
          claim: taken === null ? null : claim(taken),
          returning: 'count'
        })
        const stored = taken === false ? 0 : 3
        t.strictSame([written.rows, written.count, written.claimed], [[], stored, taken !== false], `${label}: no row, how many written`)
        t.equal(written.events, withOutbox ? stored : 0, `${label}: its events`)
        const { rows } = await store.query<{ id: string, etag: string }>(`SELECT id, etag FROM ${def.storage.table} WHERE id = ANY($1::text[]) ORDER BY id`, [ids])
        t.strictSame(rows.map(r => [r.id, r.etag]), stored === 0 ? [] : ids.map(id => [id, `"${id}"`]).sort(), `${label}: stored as given`)
        t.equal((await store.query(`SELECT 1 FROM ${SNAPSHOTS}`)).rows.length, withOutbox ? stored : 0, `${label}: the outbox rows`)
      }
    }

    t.test('a counted write that finds its row changed', async t => {
      const id = `note-${++n}`
      await table.write(store, { kind: 'insert', scope, rows: [{ id, etag: '"now"', values: { title: 'x', big: null } }] })
      for (const withOutbox of [false, true]) {
        const written = await table.write(store, {
          kind: 'update',
          scope,
          rows: [{ id, etag: '"next"', values: { title: 'y' } }],
          fields: ['title'],
          guard: { by: 'preconditions', allowed: ['"then"'], refused: null, live: false },
          outbox: withOutbox ? outbox : null,
          current: true,
          returning: 'count'
        })
        t.match(written, { rows: [], count: 0, current: { etag: '"now"' } }, `nothing written; the row as found${withOutbox ? ', with an outbox' : ''}`)
      }
    })

    // A claimed write under no condition but the row being there (a webhook's): the lock taken
    // before the claim is what it found, with no read of its own; a quiet check, read once,
    // guards the claim and the write.
    t.test('a claimed write on any row there answers what its lock found', async t => {
      const sent: string[] = []
      const spy = { query: async (sql: string, params?: readonly unknown[]) => { sent.push(sql); return await store.query(sql, params) }, exec: store.exec.bind(store) }
      const quiet = (wanted: boolean): QuietPart => ({ key: 'test-quiet', values: [wanted], sql: (first) => `NOT $${first}::boolean` })
      const write = async (id: string, taken: boolean, wanted = false): Promise<Awaited<ReturnType<ResourceTable['write']>>> => await table.write(spy as never, {
        kind: 'update',
        scope,
        rows: [{ id, etag: `"${id}-${++n}"`, values: { title: 'set' } }],
        fields: ['title'],
        guard: { by: 'preconditions', allowed: null, refused: null, live: false },
        claim: claim(taken),
        quiet: quiet(wanted),
        current: true,
        returning: 'etag'
      })
      const id = `note-${++n}`
      await table.write(store, { kind: 'insert', scope, rows: [{ id, etag: '"there"', values: { title: 'x', big: null } }] })
      t.match(await write(id, false), { rows: [], claimed: false, current: { etag: '"there"', deletedDateTime: null } }, 'the claim held: nothing written, the row as locked')
      t.notMatch(sent[0], /\bcur AS\b/, 'no read of its own')
      t.match(sent[0], /g AS \(SELECT t\.etag, t\."deletedDateTime" AS deleted FROM .* FOR UPDATE OF t\)/s)
      t.equal(sent[0]?.split('NOT $').length, 2, 'the quiet check once', { text: sent[0] })
      t.match(await write(id, true, true), { rows: [], wanted: true, current: { etag: '"there"' } }, 'a subscription wants it: nothing written')
      const done = await write(id, true)
      t.match(done, { claimed: true, wanted: false, rows: [{ id }] }, 'written')
      await store.query(`UPDATE ${def.storage.table} SET "deletedDateTime" = now() WHERE id = $1`, [id])
      t.match(await write(id, false), { rows: [], current: { etag: done.rows[0]?.etag, deletedDateTime: String } }, 'a deleted row, as locked')
      t.match(await write(`note-${++n}`, true), { rows: [], claimed: false, current: null }, 'no row: nothing locked, the key not claimed, nothing found')
    })
  })
}
