import t from 'tap'
import fc from 'fast-check'
import fastJson, { type Schema as SerializerSchema } from 'fast-json-stringify'
import { branchTest, projectingSerializer } from '../../plugins/validation/projection.js'
import { conventionFormats } from '../../schemas/formats.js'
import { Collection } from '../../schemas/collection.js'
import { documents } from '../../routes/v1/documents.js'
import { authors } from '../../routes/v1/authors.js'

// The projecting serializer against fast-json-stringify, which it stands in for: on every
// payload, the same bytes, or the same refusal. And the fast path must really be taken for plain
// data, or the comparison would hold whatever the projection did.

type Json = Record<string, unknown>
const formats = Object.fromEntries(Object.entries(conventionFormats).map(([name, def]) => [name, def.validate]))
const branch = branchTest(formats)

/** Both serializers of `schema`; `fell()` tells how many payloads went to fast-json-stringify. */
function serializers (schema: object): { fjs: (v: unknown) => string, mine: (v: unknown) => string, fell: () => number, projects: boolean } {
  const fjs = fastJson(schema as SerializerSchema, { ajv: { formats } })
  let fell = 0
  const counted = (v: unknown): string => { fell++; return fjs(v) }
  const mine = projectingSerializer(schema, counted, branch)
  return { fjs, mine, fell: () => fell, projects: mine !== counted }
}

function outcome (write: () => string): string {
  try {
    return `wrote ${write()}`
  } catch (err) {
    return `threw ${(err as Error).message}`
  }
}

// Strings as fast-json-stringify escapes them in its own loop: quotes, backslashes, control
// characters, lone and paired surrogates, U+2028.
const char = fc.oneof(
  fc.constantFrom('a', 'Z', ' ', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', '\ud83d\ude00', 'é'),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
)
const text = fc.oneof(fc.string({ unit: char, maxLength: 60 }), fc.string({ unit: char, minLength: 40, maxLength: 120 }))
/** What no schema asks for: it sends the payload to fast-json-stringify, which coerces or refuses it. */
const odd: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(undefined, null, NaN, Infinity, -0, '12', '1.5', 'true', 0, 1, true, new Date(0), new Date(Number.NaN), { toJSON: () => 'x' }, [], {}, 10n),
  fc.double(), text
)

/** Values of `schema`, nearly always plain, now and then odd at any depth. */
function valueOf (schema: Json, depth = 0): fc.Arbitrary<unknown> {
  const plain = plainOf(schema, depth)
  return fc.oneof({ weight: 12, arbitrary: plain }, { weight: 1, arbitrary: odd })
}

function plainOf (schema: Json, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Json[]).map((s) => valueOf(s, depth + 1)))
  const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string]
  return fc.oneof(...types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string': return text
      case 'integer': return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 53 - 1, 1e21))
      case 'number': return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
      case 'boolean': return fc.boolean()
      case 'null': return fc.constant(null)
      case 'array': return depth > 4 ? fc.constant([]) : fc.array(valueOf(schema.items as Json, depth + 1), { maxLength: 4 })
      case 'object': {
        const properties = (schema.properties ?? {}) as Record<string, Json>
        const required = (schema.required ?? []) as string[]
        const members = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, required.includes(k) && s.default === undefined
          ? valueOf(s, depth + 1)
          : fc.option(valueOf(s, depth + 1), { nil: undefined, freq: 3 })]))
        // Members the schema does not have, and the schema's in another order.
        return fc.tuple(fc.record(members), fc.dictionary(fc.constantFrom('extra', 'legacy', 'id', 'a'), odd, { maxKeys: 2 }), fc.boolean())
          .map(([own, extra, reversed]) => {
            const entries = Object.entries({ ...extra, ...own })
            return Object.fromEntries(reversed ? entries.reverse() : entries)
          })
      }
      default: return odd
    }
  }))
}

/** Schemas of the kinds the projection reads, and now and then a keyword it does not. */
const schemaArb = fc.letrec<{ schema: Json, leaf: Json, object: Json, array: Json, union: Json }>((tie) => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('object'), tie('array'), tie('union')),
  leaf: fc.oneof(
    fc.constantFrom<Json>({ type: 'string' }, { type: 'integer' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' },
      { type: 'string', format: 'date-time' }, { type: 'string', format: 'date' }, { type: ['string', 'null'] }, { type: ['null', 'integer'] },
      { type: ['string', 'null'], format: 'date-time' }, { type: 'string', default: 'd' }, { type: 'integer', default: 7 }, { type: 'string', enum: ['A', 'B'] },
      { type: ['string', 'integer'] }, { type: 'string', nullable: true }, { const: 'c' }, {}, { type: 'string', description: 'annotated', maxLength: 3 })
  ),
  object: fc.record({
    properties: fc.dictionary(fc.constantFrom('id', 'name', 'a', 'b', 'with "quote"', '1', 'paging'), tie('schema'), { maxKeys: 5 }),
    required: fc.array(fc.constantFrom('id', 'name', 'a', 'b', 'with "quote"', '1', 'paging', 'absent'), { maxLength: 4 }),
    additionalProperties: fc.constantFrom(undefined, false, true),
    nullable: fc.boolean()
  }).map(({ properties, required, additionalProperties, nullable }) => {
    const known = [...new Set(required)].filter((k) => k in properties || k === 'absent')
    return { type: nullable ? ['object', 'null'] : 'object', properties, required: known, ...(additionalProperties === undefined ? {} : { additionalProperties }) }
  }),
  array: tie('schema').map((items) => ({ type: 'array', items })),
  union: fc.array(tie('object'), { minLength: 1, maxLength: 3 }).map((anyOf) => ({ anyOf }))
}))

t.test('generated schemas and payloads: the same bytes or the same refusal as fast-json-stringify', async t => {
  let projected = 0
  let compared = 0
  // A list of each generated schema: the projection writes only schemas with an array.
  const listed = schemaArb.schema.map((items): Json => ({ type: 'array', items }))
  fc.assert(fc.property(listed.chain((schema) => fc.tuple(fc.constant(schema), fc.array(valueOf(schema), { minLength: 1, maxLength: 5 }))), ([schema, values]) => {
    let s: ReturnType<typeof serializers>
    try {
      s = serializers(schema)
    } catch {
      return true // a schema fast-json-stringify refuses to compile is no one's response schema
    }
    if (s.projects) projected++
    for (const value of values) {
      compared++
      const expected = outcome(() => s.fjs(value))
      const got = outcome(() => s.mine(value))
      if (got !== expected) throw new Error(`${JSON.stringify(schema)}: ${got} instead of ${expected}`)
    }
    return true
  }), { numRuns: 1500 })
  t.ok(projected > 300, `many generated schemas are projected (${projected} of 1500)`)
  t.ok(compared > 1500, `payloads compared (${compared})`)
})

// The reference service's own response schemas: the entity and the page of each resource.
// An author has no array: fast-json-stringify writes it alone.
const reference: Array<[string, Json, boolean]> = [
  ['document', documents.api.entity as unknown as Json, true],
  ['document page', Collection(documents.api.summary) as unknown as Json, true],
  ['author', authors.api.entity as unknown as Json, false],
  ['author page', Collection(authors.api.summary) as unknown as Json, true]
]

for (const [name, schema, projects] of reference) {
  t.test(`${name}: written as fast-json-stringify writes it`, async t => {
    const s = serializers(schema)
    t.equal(s.projects, projects, projects ? 'projected' : 'left to fast-json-stringify')
    let plain = 0
    fc.assert(fc.property(plainOf(schema, 0), valueOf(schema), (value, rough) => {
      for (const v of [value, rough]) {
        const expected = outcome(() => s.fjs(v))
        const got = outcome(() => s.mine(v))
        if (got !== expected) throw new Error(`${got.slice(0, 400)}\ninstead of\n${expected.slice(0, 400)}`)
      }
      plain++
      return true
    }), { numRuns: 300 })
    t.equal(plain, 300)
  })
}

t.test('cases: what each rule of fast-json-stringify looks like through the projection', async t => {
  const object = {
    type: 'object',
    properties: {
      note: { type: 'string' },
      id: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' }, default: [] },
      at: { type: ['string', 'null'], format: 'date-time' },
      meta: { type: ['object', 'null'], additionalProperties: false, properties: { system: { type: 'string' } }, required: ['system'] },
      count: { type: 'integer' }
    },
    required: ['id', 'at', 'meta']
  }
  const paging = {
    anyOf: [
      { type: 'object', additionalProperties: false, required: ['limit', 'offset'], properties: { limit: { type: 'integer' }, offset: { type: 'integer' } } },
      { type: 'object', additionalProperties: false, required: ['limit', 'cursor'], properties: { limit: { type: 'integer' }, cursor: { type: 'string' } } }
    ]
  }
  const cases: Array<[string, object, unknown, string, boolean]> = [
    // [case, schema, payload, what is written (or 'threw'), whether it takes the projection]
    ['required first, then the others, each in the schema\'s order; a default for a left-out member', object,
      { count: 2, note: 'n', meta: null, at: null, id: 'x' }, '{"id":"x","at":null,"meta":null,"note":"n","tags":[],"count":2}', true],
    ['members the schema lacks are left out, at any depth', object,
      { id: 'x', at: '2024-01-01T00:00:00.000Z', meta: { system: 's', legacy: 'secret' }, stray: 1 }, '{"id":"x","at":"2024-01-01T00:00:00.000Z","meta":{"system":"s"},"tags":[]}', true],
    ['escapes as JSON.stringify does', { type: 'array', items: { type: 'string' } }, ['a"b\\c\n\u0001\ud800\u2028'], JSON.stringify(['a"b\\c\n\u0001\ud800\u2028']), true],
    ['a Date where a date-time is: written by fast-json-stringify', object,
      { id: 'x', at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)), meta: null }, '{"id":"x","at":"2024-01-02T03:04:05.006Z","meta":null,"tags":[]}', false],
    ['a number where a string is: coerced by fast-json-stringify', object, { id: 5, at: null, meta: null }, '{"id":"5","at":null,"meta":null,"tags":[]}', false],
    ['a missing required member: refused by fast-json-stringify', object, { at: null, meta: null }, 'threw', false],
    ['a union: the first branch that accepts the value', { type: 'array', items: paging }, [{ limit: 2, cursor: 'c' }], '[{"limit":2,"cursor":"c"}]', true],
    ['a union no branch accepts: refused by fast-json-stringify', { type: 'array', items: paging }, [{ limit: 'x' }], 'threw', false],
    ['a number not finite: refused, or null, as fast-json-stringify does', { type: 'array', items: { type: 'number' } }, [1, Infinity], '[1,null]', false],
    ['a getter that throws: its error, as fast-json-stringify throws it', { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
      [{ get a (): string { throw new Error('boom') } }], 'threw', true]
  ]
  for (const [label, schema, payload, written, fast] of cases) {
    const s = serializers(schema)
    const got = outcome(() => s.mine(payload))
    t.equal(got === 'threw' || got.startsWith('threw') ? 'threw' : got.slice('wrote '.length), written, label)
    t.equal(got, outcome(() => s.fjs(payload)), `${label}: as fast-json-stringify`)
    t.equal(s.fell() === 0, fast, `${label}: ${fast ? 'projected' : 'written by fast-json-stringify'}`)
  }
})

t.test('schemas with keywords the projection does not read, or no array, are written by fast-json-stringify alone', async t => {
  for (const schema of [
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
    { type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x': { type: 'string' } } },
    { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }] },
    { type: 'object', properties: { 1: { type: 'string' } } },
    { type: ['string', 'integer'] },
    { type: 'array', items: [{ type: 'string' }] },
    { $ref: '#/definitions/x', definitions: { x: { type: 'string' } } },
    // Nothing to list: fast-json-stringify's few concatenations cost less than a copy.
    { type: 'object', properties: { hello: { type: 'string' } } }
  ]) t.notOk(serializers(schema).projects, JSON.stringify(schema))
  const fallback = (): string => 'fjs'
  // Shapes no response schema should have, which fast-json-stringify may refuse itself: the copy
  // never takes them.
  const list = (items: unknown): object => ({ type: 'array', items })
  for (const schema of [
    list({ type: 'object', properties: { a: true } }), list({ type: 'object', properties: { a: null } }), list({ type: 'object', properties: { a: [] } }),
    list({ type: ['null', 'null'] }), list({ type: ['date', 'null'] }), list({ type: 'date' }), list({ type: 'object', required: 'a', properties: { a: { type: 'string' } } }),
    list({ anyOf: { type: 'string' } }), list({ anyOf: [{ type: 'string' }], type: 'string' }), list({ anyOf: [true] }), list({ anyOf: [null] }),
    list({ anyOf: [{ type: 'object', properties: { a: { type: 'string', if: {} } } }] })
  ]) t.equal(projectingSerializer(schema, fallback, branch), fallback, JSON.stringify(schema))
  const oneOf = serializers(list({ oneOf: [{ type: 'integer' }, { type: 'string' }] }))
  t.ok(oneOf.projects, 'oneOf is read as anyOf is')
  t.equal(oneOf.mine([1, 'a']), '[1,"a"]')
  // A branch's keyword arrays hold values as well as schemas (a null in an enum): the string rewrite skips them.
  const enumerated = serializers(list({ anyOf: [{ type: ['string', 'null'], enum: ['a', null] }, { type: 'integer' }] }))
  t.ok(enumerated.projects, 'a union with an enum holding null is projected')
  t.equal(enumerated.mine(['a', null, 3]), enumerated.fjs(['a', null, 3]))
  // ... and schemas too: a union nested in a branch is rewritten with it.
  const nested = serializers(list({ anyOf: [{ anyOf: [{ type: 'string' }, { type: 'null' }] }, { type: 'integer' }] }))
  t.ok(nested.projects, 'a union nested in a branch is projected')
  t.equal(nested.mine([new Date(0), null, 3]), nested.fjs([new Date(0), null, 3]), 'a Date taken by the nested string branch')
  const listed = serializers(list({ anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] }))
  t.ok(listed.projects, 'a branch holding a schema (items) is projected')
  t.equal(listed.mine([[new Date(0), 'a'], null]), listed.fjs([[new Date(0), 'a'], null]), 'a Date in the branch\'s items')
  const bare = serializers(list({ type: 'object' }))
  t.equal(bare.mine([{ a: 1 }]), bare.fjs([{ a: 1 }]), 'an object schema without properties writes none')
  const refusing = (): never => { throw new Error('no compiling this branch') }
  t.equal(projectingSerializer({ type: 'array', items: { anyOf: [{ type: 'string' }] } }, fallback, refusing), fallback, 'a union whose branch Ajv cannot compile here')
})
