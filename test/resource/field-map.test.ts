import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/define.js'

t.test('the field map covers stored fields and the ref: derived ones cannot be filtered', async t => {
  const things = defineResource({
    name: 'thing',
    collection: 'things',
    path: '/v1/things',
    idParam: 'thingId',
    fields: { name: Type.String({ maxLength: 10 }) },
    filterable: ['name'],
    sortable: ['name']
  })
  const fields = things.storage.fields
  t.ok(fields.get('name'), 'a stored field')
  t.ok(fields.get('id'), 'the id, always')
  t.notOk(fields.get('ref')?.filterable, 'ref, computed from the id, filters only when listed')
  const odds = defineResource({
    name: 'odd',
    collection: 'odds',
    path: '/v1/odds',
    idParam: 'oddId',
    fields: { name: Type.String({ maxLength: 10 }) },
    filterable: ['ref']
  })
  t.match(odds.storage.fields.get('ref'), { type: 'string', filterable: true }, 'listed: its text filters, read through the id')
  t.throws(() => defineResource({
    name: 'odd',
    collection: 'odds',
    path: '/v1/odds',
    idParam: 'oddId',
    fields: { name: Type.String({ maxLength: 10 }) },
    derived: { shout: { schema: Type.String(), value: () => 'x' } },
    filterable: ['shout' as 'name']
  }), /shout/, 'listing a derived field is a setup error')
})
