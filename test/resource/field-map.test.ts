import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../plugins/resource/define.js'

const things = {
  name: 'thing',
  collection: 'things',
  path: '/v1/things',
  idParam: 'thingId',
  fields: { name: Type.String({ maxLength: 10 }) }
}

t.test('the field map covers stored fields and the ref: derived ones cannot be filtered', async t => {
  const fields = defineResource({ ...things, filterable: ['name'], sortable: ['name'] }).storage.fields
  t.ok(fields.get('name'), 'a stored field')
  t.ok(fields.get('id'), 'the id, always')
  t.notOk(fields.get('ref')?.filterable, 'ref, computed from the id, filters only when listed')
  const listed = defineResource({ ...things, filterable: ['ref'] }).storage.fields
  t.match(listed.get('ref'), { type: 'string', filterable: true }, 'listed: its text filters, read through the id')
  t.throws(() => defineResource({
    ...things,
    derived: { shout: { schema: Type.String(), value: () => 'x' } },
    filterable: ['shout' as 'name']
  }), /shout/, 'listing a derived field is a setup error')
})
