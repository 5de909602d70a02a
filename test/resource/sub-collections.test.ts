import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import resource, { defineResource } from '../../plugins/resource/index.js'
import { Nullable } from '../../schemas/types.js'
import { databases } from '../support/databases.js'
import { prerequisites } from './helper.js'

// A sub-collection of a field that may be null: an entity without one has a collection all
// the same, empty, as the page of an entity whose field is an empty array.

const lists = defineResource({
  name: 'list',
  collection: 'lists',
  path: '/v1/lists',
  idParam: 'listId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 50 }),
    entries: Nullable(Type.Array(Type.Object({ n: Type.Integer({ minimum: 1 }), text: Type.String({ maxLength: 50 }) })))
  },
  subCollections: { entries: { key: 'n' } }
})

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const app = await prerequisites(Fastify())
    await app.register(resource, { store, resources: [lists] })
    t.teardown(() => app.close())
    await app.ready()

    const cases: Array<[string, unknown, unknown[]]> = [
      ['null: an empty page', null, []],
      ['an empty array: an empty page', [], []],
      ['items: in the order of their key', [{ n: 2, text: 'b' }, { n: 1, text: 'a' }], [{ n: 1, text: 'a' }, { n: 2, text: 'b' }]]
    ]
    for (const [name, entries, results] of cases) {
      const created = await app.inject({ method: 'POST', url: '/v1/lists', payload: { title: name, entries } })
      t.equal(created.statusCode, 201, name)
      t.strictSame(created.json().entries, entries, `${name}: stored as sent`)
      const page = await app.inject({ url: `/v1/lists/${created.json().id as string}/entries?offset=0&totalCount=true` })
      t.equal(page.statusCode, 200, name)
      t.match(page.json(), { results, paging: { totalCount: results.length } }, name)
      t.strictSame(page.json().results, results, name)
    }
  })
}
