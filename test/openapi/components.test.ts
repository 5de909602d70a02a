import t from 'tap'
import { exampleOf, shareComponents } from '../../plugins/openapi/components.js'
import { addPatterns, uniqueOperationIds } from '../../plugins/openapi/document.js'

t.test('exampleOf makes a value from what a schema states', async t => {
  const cases: Array<[string, unknown, unknown]> = [
    ['not a schema', 'x', undefined],
    ['its first example', { type: 'string', examples: ['a', 'b'] }, 'a'],
    ['empty examples: the default', { type: 'integer', examples: [], default: 3 }, 3],
    ['const', { const: 'C' }, 'C'],
    ['first enum value', { type: 'string', enum: ['X', 'Y'] }, 'X'],
    ['null where allowed', { type: ['string', 'null'], pattern: '^a$' }, null],
    ['nullable union', { anyOf: [{ type: 'string', pattern: '^a$' }, { type: 'null' }] }, null],
    ['union without null', { anyOf: [{ type: 'string', pattern: '^a$' }] }, undefined],
    ['known format', { type: 'string', format: 'email' }, 'ann@example.com'],
    ['unknown format', { type: 'string', format: 'svc-ref' }, undefined],
    ['pattern', { type: 'string', pattern: '^[A-Z]+$' }, undefined],
    ['plain string', { type: 'string' }, 'example'],
    ['padded to minLength', { type: 'string', minLength: 10 }, 'exampleeee'],
    ['cut to maxLength', { type: 'string', maxLength: 3 }, 'exa'],
    ['integer minimum', { type: 'integer', minimum: 5 }, 5],
    ['number', { type: 'number' }, 0],
    ['boolean', { type: 'boolean' }, true],
    ['array', { type: 'array', items: { type: 'string' } }, []],
    ['array with minItems 0', { type: 'array', minItems: 0 }, []],
    ['array needing items', { type: 'array', minItems: 1 }, undefined],
    ['no type', {}, undefined],
    ['object', { type: 'object', properties: { a: { type: 'string', examples: ['x'] }, b: { type: 'string', pattern: '^b$' } }, required: ['a'] }, { a: 'x' }],
    ['object without required list', { type: 'object', properties: { a: { type: 'boolean' } } }, { a: true }],
    ['required value unknown', { type: 'object', properties: { b: { type: 'string', pattern: '^b$' } }, required: ['b'] }, undefined],
    ['object without properties', { type: 'object' }, undefined]
  ]
  for (const [name, schema, expected] of cases) t.strictSame(exampleOf(schema), expected, name)
})

t.test('shareComponents replaces copies by $refs', async t => {
  const thing = { type: 'object', properties: { id: { type: 'string' } } }
  const doc = {
    openapi: '3.1.0',
    paths: { '/x': { get: { responses: { 200: { content: { 'application/json': { schema: { type: 'array', items: { ...thing, description: undefined } } } } } } } } },
    components: { schemas: { Problem: { type: 'object', properties: { thing } } } }
  }
  const out = shareComponents(doc, {
    Thing: { $id: 'Thing', ...thing, examples: [{ id: '1' }] },
    Same: thing
  }) as Record<string, any>
  t.strictSame(out.paths['/x'].get.responses['200'].content['application/json'].schema.items, { $ref: '#/components/schemas/Thing' }, 'undefined keys and $id/examples do not tell copies apart')
  t.strictSame(out.components.schemas.Problem.properties.thing, { $ref: '#/components/schemas/Thing' }, 'existing components refer to it')
  t.strictSame(out.components.schemas.Thing, { ...thing, examples: [{ id: '1' }] }, 'the component keeps its examples, not its $id')
  t.notOk(out.components.schemas.Same, 'one shape, one component: the first name')
  t.equal(doc.paths['/x'].get.responses['200'].content['application/json'].schema.items.type, 'object', 'the input is not changed')
})

t.test('addPatterns: a pattern beside each convention format; data and other schemas alone', async t => {
  const schema = {
    type: 'object',
    properties: {
      at: { type: ['string', 'null'], format: 'date-time' },
      examples: { type: 'string', format: 'date' },
      schedule: { type: 'string', format: 'cron', description: 'When.' },
      bare: { type: 'string', format: 'cron' },
      own: { type: 'string', format: 'date', pattern: '^2024' },
      email: { type: 'string', format: 'email' },
      count: { type: 'integer', format: 'int32' }
    },
    examples: [{ at: { type: 'string', format: 'date' } }],
    enum: [{ type: 'string', format: 'date' }]
  }
  const out = addPatterns(schema) as Record<string, any>
  const p = out.properties
  t.match(p.at.pattern, /^\^/, 'a nullable date-time')
  t.ok(p.examples.pattern, 'a property named examples is a schema')
  t.match(p.schedule.description, /^When\. The pattern does not check that each range runs upward/)
  t.match(p.bare.description, /^The pattern does not check/)
  t.equal(p.own.pattern, '^2024', 'a schema\'s own pattern is kept')
  t.notOk(p.email.pattern, 'a standard format has none')
  t.notOk(p.count.pattern, 'nor a non-string')
  t.strictSame(out.examples, schema.examples, 'examples are data')
  t.strictSame(out.enum, schema.enum)
})

t.test('uniqueOperationIds numbers a repeated one', async t => {
  const paths = { '/a': { get: { operationId: 'x' }, post: { operationId: 'y' } }, '/b': { get: { operationId: 'x' }, put: {} } }
  uniqueOperationIds(paths)
  t.strictSame(paths, { '/a': { get: { operationId: 'x' }, post: { operationId: 'y' } }, '/b': { get: { operationId: 'x2' }, put: {} } })
})
