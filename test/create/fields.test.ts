import t from 'tap'
import Fastify from 'fastify'
import * as typebox from '@sinclair/typebox'
import * as suite from '../../index.js'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import query from '../../plugins/query/index.js'
import lint from '../../plugins/lint/index.js'
import resourcePlugin from '../../plugins/resource/index.js'
import type { ResourceDefinition } from '../../plugins/resource/define.js'
// The initializer is plain JavaScript: it runs with no build, and with nothing installed.
import { FIELD_TYPES, example, parseResource, type Resource } from '../../create-svc-conventions/lib/fields.js'
import { resource as resourceSource } from '../../create-svc-conventions/templates/resources.js'
import { pglite } from '../support/databases.js'

/** Two names per type, one required and one optional (`?`), as the naming rules want them. */
const NAMES: Record<string, [string, string]> = {
  string: ['label', 'subtitle'],
  text: ['note', 'summary'],
  integer: ['quantity', 'pageCount'],
  decimal: ['amount', 'price'],
  boolean: ['paid', 'archived'],
  date: ['dueDate', 'startDate'],
  'date-time': ['shippedDateTime', 'closedDateTime']
}

/** The definition the initializer writes (CommonJS JavaScript), evaluated against this repository's suite. */
function definitionOf (specs: string[]): ResourceDefinition {
  const parsed = parseResource('things', specs)
  if ('error' in parsed) throw new Error(parsed.error)
  const source = resourceSource({ typescript: false, esm: false, resource: parsed })
  const modules: Record<string, unknown> = { '@sinclair/typebox': typebox, 'svc-conventions': suite }
  const module = { exports: {} as Record<string, unknown> }
  // eslint-disable-next-line no-new-func
  new Function('require', 'module', source)((name: string) => modules[name], module)
  return module.exports.things as ResourceDefinition
}

t.test('every field type of --resource, required or optional: the service starts, and takes and gives back the example', async (t) => {
  const specs = Object.keys(FIELD_TYPES).flatMap((type) => {
    const [required, optional] = NAMES[type] ?? [`${type}Value`, `other${type[0]?.toUpperCase() ?? ''}${type.slice(1)}Value`]
    return [`${required}:${type}`, `${optional}:${type}?`]
  })
  const definition = definitionOf(specs)
  const store = await pglite.create(t)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  await app.register(conventions, { userAgent: false })
  await app.register(query, { cursorSecret: 'a-cursor-secret-of-enough-bytes' })
  await app.register(lint)
  await app.register(resourcePlugin, { store, resources: [definition], withoutAuth: true })
  await app.ready()

  const entity = example(parseResource('things', specs) as Resource)
  const created = await app.inject({ method: 'POST', url: '/v1/things', payload: entity })
  t.equal(created.statusCode, 201, created.body)
  const body = created.json() as Record<string, unknown>
  for (const [field, value] of Object.entries(entity)) t.strictSame(body[field], value, `${field}: given back as sent`)
  const read = await app.inject({ url: `/v1/things?ordering=-createdDateTime&${NAMES.string?.[0] ?? 'label'}=${encodeURIComponent(String(entity.label))}` })
  t.equal(read.statusCode, 200, read.body)
  t.equal((read.json() as { results: unknown[] }).results.length, 1)
})

t.test('a number field is refused, pointing to decimal: the lint plugin stops a start on a JSON number', async (t) => {
  t.match(parseResource('things', ['weight:number?']), { error: /field "weight:number\?": .*use decimal, or integer/ })
  t.notOk('number' in FIELD_TYPES)
})

t.test('the singular of a collection names the entity (its ref, its id parameter)', async (t) => {
  const cases: Array<[string, string]> = [
    ['books', 'book'], ['categories', 'category'], ['addresses', 'address'], ['classes', 'class'], ['boxes', 'box'], ['taxes', 'tax'],
    ['batches', 'batch'], ['dishes', 'dish'], ['houses', 'house'], ['warehouses', 'warehouse'], ['cases', 'case'], ['status', 'status'], ['data', 'data']
  ]
  for (const [collection, name] of cases) {
    t.match(parseResource(collection, ['label:string']), { name, idParam: `${name}Id` }, collection)
  }
})
