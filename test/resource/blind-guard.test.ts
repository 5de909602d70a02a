import t from 'tap'
import fc from 'fast-check'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/index.js'
import { blindGuard } from '../../plugins/resource/write/blind.js'
import { decide } from '../../plugins/resource/write/decide.js'
import type { WriteOp } from '../../plugins/resource/write/operations.js'
import type { EntityTag, EntityTagList } from '../../plugins/conditional/index.js'
import { migrate } from '../../store/migrate.js'
import { ResourceTable } from '../../store/table/index.js'
import { quoteIdent } from '../../store/quote.js'
import { pglite } from '../support/databases.js'

// A replacement, a change of named fields, a delete, a server-side `set` or a merge patch of whole fields is written in one statement decided on its
// preconditions alone (blindGuard, write-statement.ts), without reading the entity first. Two
// implementations of one rule: the statement, on a real row, must change it exactly when
// `decide` would on that row; when it writes nothing, it names the row as it found it (the
// follow-up decision: an insert, a failure, nothing to do). A replacement without If-Match is an
// upsert (Writer.one): it also creates the entity where `decide` would insert it, and says which
// of the two it did.

const TAGS = ['"a"', '"b"', '"c"']

const tagList = fc.array(fc.record({ weak: fc.boolean(), tag: fc.constantFrom(...TAGS, '"z"') }), { minLength: 1, maxLength: 3 })
const condition: fc.Arbitrary<EntityTagList | null> = fc.oneof(fc.constant(null), fc.constant('*' as const), tagList as fc.Arbitrary<EntityTag[]>)
const cases = fc.record({
  exists: fc.boolean(),
  etag: fc.constantFrom(...TAGS),
  deleted: fc.boolean(),
  action: fc.constantFrom('put' as const, 'change' as const, 'delete' as const, 'set' as const, 'patch' as const),
  ifMatch: condition,
  ifNoneMatch: condition,
  requireIfMatch: fc.boolean(),
  // An upsert also sent as the write alone: then it answers nothing of what stopped it.
  current: fc.boolean()
})

t.test('a write decided on its preconditions writes exactly when decide would', async t => {
  const store = await pglite.create(t)
  for (const softDelete of [true, false]) {
    const def = defineResource({
      name: softDelete ? 'kept' : 'thing',
      collection: softDelete ? 'kepts' : 'things',
      path: softDelete ? '/kepts' : '/things',
      idParam: 'thingId',
      fields: { title: Type.String() },
      softDelete
    })
    await migrate(store, [def.storage.migration])
    const table = new ResourceTable(def.storage.spec)
    const T = quoteIdent(def.storage.table)
    let n = 0
    let compared = 0
    await fc.assert(fc.asyncProperty(cases, async (c) => {
      const id = `thing-${++n}`
      const deleted = softDelete && c.deleted
      if (c.exists) {
        await table.write(store, { kind: 'insert', scope: { ctx: 'prod', by: null }, rows: [{ id, etag: '"x"', values: { title: 'before' } }] })
        await store.query(`UPDATE ${T} SET etag = $2${deleted ? ', "deletedDateTime" = now()' : ''} WHERE id = $1`, [id, c.etag])
      }
      const op: WriteOp = { action: c.action, id, values: c.action === 'delete' ? {} : { title: 'after' }, ifMatch: c.ifMatch, ifNoneMatch: c.ifNoneMatch }
      const rules = { requireIfMatch: c.requireIfMatch, softDelete, actions: new Map() }
      const guard = blindGuard(op, rules)
      if (guard === null) return
      compared++
      const row = c.exists ? { id, etag: c.etag, deletedDateTime: deleted ? '2026-01-01T00:00:00.000Z' : null } : undefined
      const decision = decide(op, row, rules)
      const upsert = c.action === 'put' && c.ifMatch === null
      const kind = c.action === 'delete' ? (softDelete ? 'mark-deleted' : 'delete') : upsert ? 'upsert' : 'update'
      const written = await table.write(store, {
        kind,
        scope: { ctx: 'prod', by: null },
        rows: [{ id, etag: '"new"', values: { title: 'after' } }],
        fields: c.action === 'set' || c.action === 'patch' || c.action === 'change' ? ['title'] : undefined,
        guard,
        current: !upsert || c.current
      })
      const wrote = written.rows.length === 1
      // Otherwise a row that does not exist is created by a statement of its own (Writer.one).
      const writes = 'step' in decision && (upsert || decision.step !== 'insert')
      if (wrote !== writes) throw new Error(`wrote ${String(wrote)}, decide: ${JSON.stringify(decision)}`)
      const made = !upsert ? kind : written.created === true ? 'insert' : written.created === false ? 'update' : 'nothing'
      if (writes && decision.step !== made) throw new Error(`decide's step ${decision.step}, the statement's ${made}`)
      if (upsert && !wrote && written.created !== undefined) throw new Error(`an upsert that wrote nothing says created ${String(written.created)}`)
      if (upsert && wrote) {
        const stored = await table.get(store, 'prod', id)
        if (stored?.title !== 'after' || stored.etag !== '"new"') throw new Error(`stored ${JSON.stringify(stored)}`)
      }
      const found = wrote ? undefined : written.current
      if (!wrote && (!upsert || c.current) && (found === null) !== !c.exists) throw new Error(`found ${JSON.stringify(found)} for a row that ${c.exists ? 'exists' : 'does not'}`)
      if (found != null && (found.etag !== c.etag || (found.deletedDateTime !== null) !== deleted)) throw new Error(`found ${JSON.stringify(found)}`)
    }), { numRuns: 250 })
    t.ok(compared > 50, `${compared} cases compared (${softDelete ? 'soft' : 'hard'} delete)`)
  }
})

t.test('the cases it leaves to a read of the entity', async t => {
  const rules = { requireIfMatch: true, softDelete: true, actions: new Map() }
  const op = (o: Partial<WriteOp>): WriteOp => ({ action: 'put', id: 'x', values: {}, ifMatch: null, ifNoneMatch: null, ...o })
  t.equal(blindGuard(op({}), rules), null, 'If-Match required and not sent')
  t.not(blindGuard(op({ action: 'set' }), rules), null, 'the server\'s own change needs none')
  t.equal(blindGuard(op({ ifMatch: [{ weak: true, tag: '"a"' }] }), rules), null, 'only weak tags: no strong match possible')
  t.equal(blindGuard(op({ ifMatch: '*', ifNoneMatch: '*' }), rules), null, 'If-None-Match: *')
  t.not(blindGuard(op({ action: 'patch', ifMatch: '*', values: { title: 'x', tags: ['a'], pages: 3 } }), rules), null, 'a merge patch of whole fields needs none')
  t.equal(blindGuard(op({ action: 'patch', ifMatch: '*', values: { title: 'x', description: null } }), rules), null, 'a merge patch that removes a field needs the entity')
  t.equal(blindGuard(op({ action: 'patch', ifMatch: '*', values: { title: 'x', metadata: { a: 1 } } }), rules), null, 'a merge patch into an object needs the entity')
  t.equal(blindGuard(op({ action: 'transition', ifMatch: '*' }), rules), null, 'a transition needs its state')
  t.strictSame(blindGuard(op({ ifMatch: '*', ifNoneMatch: [{ weak: true, tag: '"a"' }] }), rules), { by: 'preconditions', allowed: null, refused: ['"a"'], live: true })
})
