import t, { type Test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import { NUMBER, numeralsOf, strictNumerals } from '../../plugins/validation/numerals.js'
import { textUnions, textUnionsOf } from '../../plugins/validation/text-unions.js'
import { Ajv } from 'ajv'
import { Nullable } from '../../schemas/types.js'

// A number in a query string, a header or a path parameter is read from decimal digits only;
// Ajv alone read it by JavaScript's rules (1e1 = 10, 0x10 = 16, a space = 0) and showed the
// coerced value in its error.

async function server (t: Test): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  const querystring = Type.Object({
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    x: Type.Optional(Type.Number()),
    ids: Type.Optional(Type.Array(Type.Integer())),
    counts: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))),
    maybe: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    nullable: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'] })),
    either: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    'a/b': Type.Optional(Type.Integer())
  })
  app.get('/q/:page', {
    schema: { querystring, params: Type.Object({ page: Type.Integer() }), headers: Type.Object({ 'x-count': Type.Optional(Type.Integer()) }) }
  }, async (request) => ({ query: request.query, params: request.params, count: request.headers['x-count'] ?? null }))
  return app
}

interface Item { code: string, field: string, source: string, value?: string, message: string }
const items = (body: string): Item[] => JSON.parse(body).context

t.test('query, path and header numbers: decimal digits accepted, other writings refused with the value sent', async t => {
  const app = await server(t)
  const accepted: Array<[string, unknown]> = [
    ['n=5', { n: 5 }], ['n=007', { n: 7 }], ['x=4.25', { x: 4.25 }], ['x=-1.5e3', { x: -1500 }], ['x=12', { x: 12 }],
    ['ids=1&ids=2', { ids: [1, 2] }], ['ids=3', { ids: [3] }], ['either=0x10', { either: '0x10' }], ['a%2Fb=4', { 'a/b': 4 }]
  ]
  for (const [query, expected] of accepted) {
    const res = await app.inject({ url: `/q/1?${query}` })
    t.equal(res.statusCode, 200, query)
    // Strictly: t.same would take 16 for '0x10'.
    t.strictSame(JSON.parse(res.body).query, expected, query)
  }
  const bounds: Array<[string, string, string, string]> = [
    ['n=-0', 'n', '-0', 'INPUT_MIN_VALUE'], ['n=0101', 'n', '0101', 'INPUT_MAX_VALUE'], ['ids=5&ids=-0003&nullable=', 'ids', '-0003', ''], ['maybe=-00', 'maybe', '-00', ''], ['maybe=', 'maybe', '', ''], ['counts=5&counts=00', 'counts', '00', 'INPUT_MIN_VALUE'], ['counts=-01', 'counts', '-01', 'INPUT_MIN_VALUE']
  ]
  for (const [query, field, value, code] of bounds) {
    const res = await app.inject({ url: `/q/1?${query}` })
    if (code === '') {
      t.equal(res.statusCode, 200, query)
      continue
    }
    t.equal(res.statusCode, 400, query)
    t.match(items(res.body), [{ code, field, value }], `${query}: a bound broken, shown with the value as sent`)
  }
  const refused: Array<[string, string, string, string]> = [
    // query, field, value sent, type
    ['n=1e1', 'n', '1e1', 'integer'],
    ['n=0x10', 'n', '0x10', 'integer'],
    ['n=%20', 'n', ' ', 'integer'],
    ['n=%205', 'n', ' 5', 'integer'],
    ['n=5%20', 'n', '5 ', 'integer'],
    ['n=', 'n', '', 'integer'],
    ['n=%2B5', 'n', '+5', 'integer'],
    ['n=1.0', 'n', '1.0', 'integer'],
    ['n=Infinity', 'n', 'Infinity', 'integer'],
    ['x=.5', 'x', '.5', 'number'],
    ['x=5.', 'x', '5.', 'number'],
    ['x=0b11', 'x', '0b11', 'number'],
    ['x=NaN', 'x', 'NaN', 'number'],
    ['ids=1&ids=0x2', 'ids', '0x2', 'integer'],
    ['ids=1e2', 'ids', '1e2', 'integer'],
    ['maybe=0x1', 'maybe', '0x1', 'integer'],
    ['a%2Fb=0x1', 'a/b', '0x1', 'integer']
  ]
  for (const [query, field, value, type] of refused) {
    const res = await app.inject({ url: `/q/1?${query}` })
    t.equal(res.statusCode, 400, query)
    const message = type === 'integer' ? 'must be an integer in decimal digits, such as 42 or -7' : 'must be a number in decimal digits, such as 4.2, -7 or 1.5e3'
    t.strictSame(items(res.body), [{ code: 'INPUT_INVALID', field, source: 'query', value, message }], `${query}: one item, the value as sent`)
  }
  t.strictSame(JSON.parse((await app.inject({ url: '/q/1?nullable=' })).body).query, { nullable: null }, 'an empty value of a nullable number is null, as before')
  // Past the largest number JavaScript holds, decimal digits read as Infinity.
  const huge = '9'.repeat(309)
  const outOfRange: Array<[string, string, string, string]> = [['x=1e400', 'x', '1e400', 'a number'], ['x=-1e309', 'x', '-1e309', 'a number'], [`n=${huge}`, 'n', huge, 'an integer']]
  for (const [query, field, value, type] of outOfRange) {
    const res = await app.inject({ url: `/q/1?${query}` })
    t.equal(res.statusCode, 400, `${value.slice(0, 10)}: out of range`)
    t.strictSame(items(res.body), [{ code: 'INPUT_INVALID', field, source: 'query', value: value.length > 100 ? `${value.slice(0, 100)}…` : value, message: `must be ${type} between -1.7976931348623157e308 and 1.7976931348623157e308` }])
  }
  t.strictSame(JSON.parse((await app.inject({ url: '/q/1?x=1.7976931348623157e308' })).body).query, { x: Number.MAX_VALUE }, 'the largest is taken')

  const several = await app.inject({ url: '/q/0x2?n=1e1&x=2&ids=4&ids=%205', headers: { 'x-count': '1e3' } })
  t.equal(several.statusCode, 400)
  t.strictSame(items(several.body).map(i => [i.source, i.field, i.value]), [[undefined, 'page', '0x2'], ['query', 'n', '1e1'], ['query', 'ids', ' 5'], ['header', 'x-count', '1e3']], 'every part, every value (a path parameter\'s item has no source)')

  const mixed = await app.inject({ url: '/q/1?n=0x1&n2=3&x=abc' })
  t.strictSame(items(mixed.body).map(i => [i.field, i.value]), [['n', '0x1'], ['x', 'abc']], 'with the schema\'s own errors for other parameters')
  const ok = await app.inject({ url: '/q/12', headers: { 'x-count': '-3' } })
  t.strictSame(JSON.parse(ok.body), { query: {}, params: { page: 12 }, count: -3 })
})

t.test('which properties are read as numbers', async t => {
  const cases: Array<[unknown, unknown[]]> = [
    [Type.Object({ a: Type.Integer(), b: Type.Number(), c: Type.String(), d: Type.Boolean() }), [['a', true, false], ['b', false, false]]],
    [Type.Object({ a: Type.Array(Type.Integer()), b: Type.Array(Type.String()) }), [['a', true, true]]],
    [{ type: 'object', properties: { a: { type: ['integer', 'null'] }, b: { type: ['string', 'number'] }, c: { type: ['number', 'integer'] } } }, [['a', true, false], ['c', false, false]]],
    [Type.Object({ a: Nullable(Type.Integer()), b: Type.Union([Type.Integer(), Type.Ref('X')]), c: Type.Union([Type.Literal('all'), Type.Integer()]) }), [['a', true, false]]],
    [{ type: 'object', properties: { a: { oneOf: [{ type: 'number' }, { type: 'null' }] } } }, [['a', false, false]]],
    [{ type: 'object' }, []],
    [{ type: 'object', properties: null }, []],
    [{ type: 'object', properties: { a: null, b: { type: 5 } } }, []],
    [null, []],
    ['schema', []]
  ]
  for (const [schema, expected] of cases) {
    t.strictSame(numeralsOf(schema).map(n => [n.key, n.integer, n.array]), expected, JSON.stringify(schema))
  }
  t.equal(numeralsOf(Type.Object({ 'a~b/c': Type.Integer() }))[0]?.pointer, '/a~0b~1c', 'a JSON Pointer, as Ajv writes it')
})

t.test('property: an integer parameter is accepted exactly when it is decimal digits, and reads as their value', async t => {
  const app = await server(t)
  const text = fc.oneof(
    fc.integer({ min: -200, max: 200 }).map(String),
    fc.stringMatching(/^[-+ 0-9a-fxe.]{0,6}$/)
  )
  await fc.assert(fc.asyncProperty(text, async (sent) => {
    const res = await app.inject({ url: `/q/1?n=${encodeURIComponent(sent)}` })
    const digits = /^-?[0-9]+$/.test(sent)
    const value = Number(sent)
    if (digits && value >= 1 && value <= 100) {
      t.equal(res.statusCode, 200, sent)
      t.strictSame(JSON.parse(res.body).query, { n: value }, sent)
    } else {
      t.equal(res.statusCode, 400, sent)
      t.strictSame(items(res.body).map(i => [i.code, i.value]), [[digits ? (value < 1 ? 'INPUT_MIN_VALUE' : 'INPUT_MAX_VALUE') : 'INPUT_INVALID', sent]], `${JSON.stringify(sent)}: the value as sent`)
    }
  }), { numRuns: 300 })
})

t.test('a value that is not an object is left to Ajv', async t => {
  const schema = Type.Object({ n: Type.Integer() })
  const validate = strictNumerals(new Ajv({ coerceTypes: 'array', allErrors: true }).compile(schema), schema)
  for (const data of [null, 'n=1', 5]) {
    t.equal(validate(data), false, JSON.stringify(data))
    t.match(validate.errors, [{ keyword: 'type', instancePath: '', params: { type: 'object' } }], JSON.stringify(data))
  }
  t.equal(validate({ n: '12' }), true)
  t.equal(validate.errors, null)
})

t.test('a parameter that admits text besides a number: decimal digits are the number, any other writing is the text as sent', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  await app.register(validation)
  const querystring = Type.Object({
    first: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    real: Type.Optional(Type.Unsafe<number | string>({ type: ['number', 'string'] })),
    word: Type.Optional(Type.Union([Type.Integer({ maximum: 99 }), Type.String({ pattern: '^[a-z]+$' })])),
    list: Type.Optional(Type.Array(Type.Union([Type.Integer(), Type.String()]))),
    n: Type.Optional(Type.Integer())
  })
  app.get('/q', { schema: { querystring } }, async (request) => request.query)
  const cases: Array<[string, number, unknown]> = [
    ['first=12', 200, { first: 12 }],
    ['first=-7', 200, { first: -7 }],
    // JavaScript's rules (Ajv's coercion) read these as 16, 10, 5 and 5.
    ['first=0x10', 200, { first: '0x10' }],
    ['first=1e1', 200, { first: '1e1' }],
    ['first=%205', 200, { first: ' 5' }],
    ['first=%2B5', 200, { first: '+5' }],
    ['first=abc', 200, { first: 'abc' }],
    ['real=0x10', 200, { real: '0x10' }],
    ['word=12', 200, { word: 12 }],
    ['word=abc', 200, { word: 'abc' }],
    ['word=0x10', 400, [{ field: 'word', value: '0x10' }]],
    ['list=1&list=2', 200, { list: [1, 2] }],
    // A list is read one way: as text, when any of its values is not decimal digits.
    ['list=1&list=0x10', 200, { list: ['1', '0x10'] }],
    ['first=0x10&n=5', 200, { first: '0x10', n: 5 }],
    ['first=0x10&n=0x5', 400, [{ field: 'n', value: '0x5', code: 'INPUT_INVALID' }]]
  ]
  for (const [query, status, expected] of cases) {
    const res = await app.inject({ url: `/q?${query}` })
    t.equal(res.statusCode, status, query)
    // Strictly: t.same would take 16 for '0x10'.
    if (status === 200) t.strictSame(JSON.parse(res.body), expected, query)
    else t.match(items(res.body), expected, query)
  }
})

t.test('which properties are unions of a number and text', async t => {
  const cases: Array<[unknown, unknown[]]> = [
    [Type.Object({ a: Type.Union([Type.Integer(), Type.String()]), b: Type.Union([Type.String(), Type.Number()]), c: Type.Integer(), d: Type.Union([Type.Integer(), Type.Null()]), e: Type.Union([Type.Literal('x'), Type.String()]), f: Type.Union([Type.Integer(), Type.Ref('X')]) }), [['a', false, 'integer'], ['b', false, 'number']]],
    [{ type: 'object', properties: { a: { oneOf: [{ type: 'integer' }, { type: 'string' }] }, b: { type: 'array', items: { anyOf: [{ type: 'number' }, { type: 'string' }] } }, c: { type: ['integer', 'string'] }, d: null } }, [['a', false, 'integer'], ['b', true, 'number']]],
    [{ type: 'object' }, []],
    [{ type: 'object', properties: null }, []],
    [null, []],
    ['schema', []]
  ]
  for (const [schema, expected] of cases) {
    t.strictSame(textUnionsOf(schema).map(u => [u.key, u.array, u.decimal === NUMBER ? 'number' : 'integer']), expected, JSON.stringify(schema))
  }
})

t.test('a value that is not an object is left to Ajv by the text unions too', async t => {
  const schema = Type.Object({ a: Type.Union([Type.Integer(), Type.String()]) })
  const ajv = new Ajv({ coerceTypes: 'array', allErrors: true })
  const validate = textUnions(ajv.compile(schema), schema, (s) => ajv.compile(s))
  for (const data of [null, 'a=1', 5]) {
    t.equal(validate(data), false, JSON.stringify(data))
    t.match(validate.errors, [{ keyword: 'type', instancePath: '', params: { type: 'object' } }], JSON.stringify(data))
  }
  const data = { a: '0x10' }
  t.equal(validate(data), true)
  t.strictSame(data, { a: '0x10' }, 'the text kept')
})
