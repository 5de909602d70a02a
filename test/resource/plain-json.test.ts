import t, { type Test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { plainCheck } from '../../plugins/resource/plain-json.js'
import { documents } from '../../routes/v1/documents.js'
import { authors } from '../../routes/v1/authors.js'

// plainCheck says when JSON.stringify writes a value as the schema's own serializer would.
// Checked against that serializer itself (fast-json-stringify, through a Fastify route): for
// every generated value the check accepts, both write the same JSON.

type Json = Record<string, unknown>

/** The schema's serializer, as Fastify compiles it for a route's 200 response. */
async function schemaSerializer (t: Test, schema: Json): Promise<(value: unknown) => Promise<{ status: number, body: string }>> {
  const app: FastifyInstance = Fastify()
  let next: unknown
  app.post('/', { schema: { response: { 200: schema } } }, async () => next)
  await app.ready()
  t.teardown(async () => { await app.close() })
  return async (value) => {
    next = value
    const res = await app.inject({ method: 'POST', url: '/' })
    return { status: res.statusCode, body: res.body }
  }
}

// Values near a schema: right types, wrong types, extra and missing properties.
const scalar = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(NaN, Infinity, -0, 1.5, 0, null, true, false, undefined)
)
const near = (depth: number): fc.Arbitrary<unknown> => depth === 0
  ? scalar
  : fc.oneof(
    { weight: 3, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(near(depth - 1), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('source', 'system', 'region', 'extra', '__proto__'), near(depth - 1), { maxKeys: 3 }) }
  )

/** A summary of the documents schema, each property right most of the time and off now and then. */
function summaryOf (schema: Json): fc.Arbitrary<Json> {
  const props = schema.properties as Record<string, Json>
  const right = (s: Json): fc.Arbitrary<unknown> => {
    const types = Array.isArray(s.type) ? s.type as string[] : [s.type as string]
    return fc.oneof(...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string': return fc.string({ unit: 'binary', maxLength: 40 })
        case 'integer': return fc.integer({ min: 0, max: 100000 })
        case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true })
        case 'boolean': return fc.boolean()
        case 'null': return fc.constant(null)
        case 'array': return fc.array(right(s.items as Json), { maxLength: 4 })
        case 'object': return fc.record(Object.fromEntries(Object.entries(s.properties as Record<string, Json>).map(([k, p]) => [k, right(p)])))
        default: throw new Error(`no generator for the type ${type}`)
      }
    }))
  }
  const entries = Object.entries(props).map(([k, s]) => [k, fc.oneof({ weight: 60, arbitrary: right(s) }, { weight: 1, arbitrary: near(2) })] as const)
  return fc.tuple(fc.record(Object.fromEntries(entries)), fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: near(1) })).map(([value, extra]) => {
    const v: Json = { ...value }
    if (extra !== undefined) v.extraProperty = extra
    return v
  })
}

t.test('documents and authors: accepted summaries are written alike by JSON.stringify and by the schema', async t => {
  for (const def of [documents, authors]) {
    const schema = def.summaryEntity as unknown as Json
    const check = plainCheck(schema)
    const serialize = await schemaSerializer(t, schema)
    let accepted = 0
    let refused = 0
    await fc.assert(fc.asyncProperty(summaryOf(schema), async (value) => {
      if (!check(value)) { refused++; return }
      accepted++
      const res = await serialize(value)
      t.equal(res.status, 200)
      t.same(JSON.parse(JSON.stringify(value)), JSON.parse(res.body))
    }), { numRuns: 300 })
    // Both kinds occur, so the property was exercised on each side.
    t.ok(accepted > 20 && refused > 20, `${def.name}: ${accepted} accepted, ${refused} refused`)
  }
})

// Small schemas of every keyword understood, and values near them.
const leaf = fc.constantFrom<Json>(
  { type: 'string' }, { type: 'integer' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' },
  { type: ['string', 'null'] }, { type: ['integer', 'null'] }, { type: ['string', 'integer', 'null'] }, {},
  { type: 'string', format: 'date-time', maxLength: 30 }
)
const schemaArb: fc.Arbitrary<Json> = fc.letrec<{ s: Json }>((tie) => ({
  s: fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: tie('s').map((items) => ({ type: 'array', items })) },
    {
      weight: 1,
      arbitrary: fc.record({
        props: fc.dictionary(fc.constantFrom('source', 'system', 'region', 'extra'), tie('s'), { maxKeys: 3 }),
        extra: fc.constantFrom(undefined, true, false),
        nullable: fc.boolean(),
        requireAll: fc.boolean()
      }).map(({ props, extra, nullable, requireAll }) => {
        const s: Json = { type: nullable ? ['object', 'null'] : 'object', properties: props }
        if (extra !== undefined) s.additionalProperties = extra
        if (requireAll && Object.keys(props).length > 0) s.required = Object.keys(props)
        return s
      })
    }
  )
})).s

t.test('any schema of the understood keywords: accepted values are written alike', async t => {
  let accepted = 0
  await fc.assert(fc.asyncProperty(schemaArb, near(3), async (schema, value) => {
    const wrapped = { type: 'object', properties: { v: schema } }
    if (!plainCheck(wrapped)({ v: value })) return
    accepted++
    const app = Fastify()
    app.get('/', { schema: { response: { 200: wrapped } } }, async () => ({ v: value }))
    const res = await app.inject({ method: 'GET', url: '/' })
    await app.close()
    t.equal(res.statusCode, 200, res.body)
    t.same(JSON.parse(JSON.stringify({ v: value })), JSON.parse(res.body), JSON.stringify(schema))
  }), { numRuns: 400 })
  t.ok(accepted > 40, `${accepted} accepted`)
})

t.test('the straight-line object checks give the loop\'s verdict on every value', async t => {
  const documentSummary = documents.summaryEntity as unknown as Json
  const schemas = fc.oneof(schemaArb.map((s) => ({ type: 'object', properties: { v: s } }) as Json), fc.constant(documentSummary))
  fc.assert(fc.property(schemas, fc.oneof(near(3).map((v) => ({ v })), summaryOf(documentSummary)), (schema, value) => {
    return plainCheck(schema)(value) === plainCheck(schema, false)(value)
  }), { numRuns: 2000 })
  // Each side of the verdict occurs among such values.
  const both = [{ v: 'x' }, { v: 'x', w: 1 }].map((value) => plainCheck({ type: 'object', properties: { v: { type: 'string' } } })(value))
  t.same(both, [true, false])
})

t.test('refused: what the schema serializer writes differently, and keywords not understood', async t => {
  const metadata = (documents.summaryEntity as unknown as Json).properties as Record<string, Json>
  const cases: Array<[string, Json, unknown]> = [
    ['an undeclared property (the schema serializer drops it)', { type: 'object', properties: { a: { type: 'string' } } }, { a: 'x', b: 1 }],
    ['an undeclared property under additionalProperties: false', metadata.metadata as Json, { source: null, stray: 1 }],
    ['an own __proto__ key, as JSON.parse makes it', { type: 'object', properties: { a: { type: 'string' } } }, JSON.parse('{"a":"x","__proto__":{"b":1}}')],
    ['a missing required property', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, {}],
    ['a required property set to undefined', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { a: undefined }],
    ['a fraction for an integer', { type: 'integer' }, 1.5],
    ['NaN for a number', { type: 'number' }, NaN],
    ['Infinity for a number', { type: 'number' }, Infinity],
    ['a number for a string', { type: 'string' }, 12],
    ['null where null is not allowed', { type: 'string' }, null],
    ['a Date for a date-time string', { type: 'string', format: 'date-time' }, new Date(0)],
    ['an array item of the wrong type', { type: 'array', items: { type: 'string' } }, ['a', 1]],
    ['an undefined array item', { type: 'array', items: {} }, [undefined]],
    ['an object that is not plain', { type: 'object', properties: {} }, new Map()],
    ['anyOf', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 'x'],
    ['$ref', { $ref: '#/definitions/x' }, 'x'],
    ['additionalProperties as a schema', { type: 'object', properties: {}, additionalProperties: { type: 'string' } }, {}],
    ['patternProperties', { type: 'object', patternProperties: { '^a': { type: 'string' } } }, {}],
    ['an unknown type', { type: 'date' }, 'x'],
    ['properties that are not an object', { type: 'object', properties: 'x' }, {}],
    ['properties as an array', { type: 'object', properties: [] }, {}],
    ['items as a tuple', { type: 'array', items: [{ type: 'string' }] }, ['x']],
    ['items as a boolean schema', { type: 'array', items: true }, ['x']],
    ['items null', { type: 'array', items: null }, ['x']],
    ['properties without a type', { properties: { a: { type: 'string' } } }, { a: 'x' }],
    ['items without a type', { items: { type: 'string' } }, ['x']],
    ['a schema that is not an object', true as unknown as Json, 'x'],
    ['a null schema', null as unknown as Json, 'x']
  ]
  for (const [name, schema, value] of cases) t.equal(plainCheck(schema)(value), false, name)
  t.equal(plainCheck({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true })({ a: 'x', b: [1, { c: null }] }), true, 'an open object keeps its other properties')
  t.equal(plainCheck({ type: 'object', properties: { a: { type: 'string' } } })({ a: undefined }), true, 'an optional property set to undefined is left out by both')
  t.equal(plainCheck({ type: 'object' })({}), true, 'an object without properties')
  const union = plainCheck({ type: ['string', 'integer', 'null'] })
  t.same(['x', 3, null, 1.5, true, undefined].map(union), [true, true, true, false, false, false], 'a union of three types accepts each of them, nothing else')
  t.equal(plainCheck({ type: 'array' })([1, 'x', null]), true, 'an array without items')
})

t.test('an enumerable key on Object.prototype: the straight-line check defers to the loop', async t => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } }
  const fast = plainCheck(schema)
  const loop = plainCheck(schema, false)
  t.equal(fast({ a: 'x' }), true, 'before: accepted')
  // Counting keys with for-in sees the inherited key too; the loop's verdict then decides.
  // eslint-disable-next-line no-extend-native -- the case under test, undone in finally
  Object.defineProperty(Object.prototype, 'polluted', { value: 1, enumerable: true, configurable: true })
  try {
    t.equal(fast({ a: 'x' }), loop({ a: 'x' }), 'same verdict as the loop')
    t.equal(fast({ a: 'x' }), false, 'refused: the schema serializer is used')
  } finally {
    delete (Object.prototype as Record<string, unknown>).polluted
  }
  t.equal(fast({ a: 'x' }), true, 'after: accepted again')
})
