import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/define.js'

t.test('the field map covers stored fields only: computed ones cannot be filtered', async t => {
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
  t.notOk(fields.get('ref'), 'ref is computed, not stored')
  t.throws(() => defineResource({
    name: 'odd',
    collection: 'odds',
    path: '/v1/odds',
    idParam: 'oddId',
    fields: { name: Type.String({ maxLength: 10 }) },
    filterable: ['ref' as 'name']
  }), /ref/, 'listing a computed field is a setup error')
})
