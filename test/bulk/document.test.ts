import t from 'tap'
import { documentedBody } from '../../plugins/bulk/document.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { addConventionFormats } from '../../schemas/formats.js'

// The bulk request body as the document shows it: one shape per action and rule, with the
// entity that action is checked against (the black-box comparison is in test/service/openapi).

type Json = Record<string, any>
const ajv = addConventionFormats(addFormats.default(new Ajv({ strict: false })))
const operationsOf = (body: unknown): Json => (body as Json).properties.operations

t.test('one shape per entity and ifMatch rule, told apart by action', async t => {
  const items = operationsOf(documentedBody(authors, ['CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'], 100)).items
  t.strictSame(items.anyOf.map((s: Json) => s.properties.action.enum), [['CREATE'], ['UPDATE', 'CREATE_UPDATE'], ['DELETE']], 'UPDATE and CREATE_UPDATE read the same entity under the same rule')
  t.match(items.anyOf[1].description, /^UPDATE: .* CREATE_UPDATE: /)
  const valid = ajv.compile({ type: 'array', items })
  t.ok(valid([{ action: 'DELETE', entity: { id: 'a-1' } }]), 'DELETE reads only the id')
  t.notOk(valid([{ action: 'UPDATE', entity: { name: 'Ann', email: 'ann@example.com' } }]), 'UPDATE needs the id')
  t.notOk(valid([{ action: 'CREATE', entity: { id: 'a-1', name: 'Ann', email: 'ann@example.com' } }]), 'CREATE takes none')

  const docs = operationsOf(documentedBody(documents, ['CREATE', 'UPDATE', 'CREATE_UPDATE', 'DELETE'], 10))
  t.equal(docs.maxItems, 10)
  t.strictSame(docs.items.anyOf.map((s: Json) => [s.properties.action.enum, s.required.includes('ifMatch')]), [[['CREATE'], false], [['UPDATE'], true], [['CREATE_UPDATE'], false], [['DELETE'], true]], 'a resource requiring If-Match: UPDATE and DELETE need ifMatch')
  t.match(docs.items.anyOf[2].description, /ifMatch is required when it exists, and must be left out when it does not/)

  const only = operationsOf(documentedBody(documents, ['DELETE'], 5)).items
  t.strictSame(only.properties.action.enum, ['DELETE'], 'one action: one shape, no union')
})
