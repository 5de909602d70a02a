import t from 'tap'
import { Type, type Static } from '@sinclair/typebox'
import {
  CronSchedule, DateOnly, DateTime, Decimal, Duration, Id, Int32, Int64, Interval, Nullable, Percentage,
  Quantity, QuantityFields, Ref, UpperSnakeEnum
} from '../../schemas/types.js'
import { assertType, makeAjv, type Equal } from './helper.js'

const ajv = makeAjv()
/** The keywords of Ajv's errors for `value`, in order; empty when valid. */
function errors (schema: object, value: unknown): string[] {
  const validate = ajv.compile(schema)
  return validate(value) ? [] : (validate.errors ?? []).map(e => e.keyword)
}

t.test('string formats: format fixed, lengths known, options passed through', async t => {
  const at = DateTime({ description: 'When', readOnly: true, format: 'email' })
  t.match(at, { type: 'string', format: 'date-time', minLength: 20, maxLength: 24, description: 'When', readOnly: true })
  t.match(DateOnly(), { type: 'string', format: 'date', minLength: 10, maxLength: 10 })
  t.match(Duration({ maxLength: 20 }), { type: 'string', format: 'duration', minLength: 3, maxLength: 20 })
  t.match(Interval(), { type: 'string', format: 'interval', maxLength: 128 })
  t.match(CronSchedule({ default: '0 0 * * *' }), { type: 'string', format: 'cron', default: '0 0 * * *' })
  for (const schema of [DateTime(), DateOnly(), Duration(), Interval(), CronSchedule(), Decimal(), Int64(), Id(), Ref('author')]) {
    for (const example of schema.examples as unknown[]) t.strictSame(errors(schema, example), [], `example ${String(example)} is valid`)
  }
  t.strictSame(errors(DateTime(), '2024-05-01T12:00:00.000+01:00'), ['maxLength', 'format'], 'the lengths document the format; both fire')
  t.strictSame(errors(DateTime(), '2024-05-01T25:00:00Z'), ['format'])
  t.strictSame(errors(DateTime(), 5), ['type'], 'one error for a wrong type')
  assertType<Equal<Static<ReturnType<typeof DateTime>>, string>>()
})

t.test('Decimal: exact bounds and digit limits become keywords; maxLength when the digits are known', async t => {
  const amount = Decimal({ maxIntegerDigits: 15, maxFractionDigits: 4 })
  t.match(amount, { type: 'string', format: 'decimal', minLength: 1, maxLength: 21, decimalDigits: { integer: 15, fraction: 4 } })
  t.notOk('decimalMinimum' in amount)
  t.strictSame(errors(amount, '123456789012345.1234'), [])
  t.strictSame(errors(amount, '-123456789012345.1234'), [])
  t.strictSame(errors(amount, '1.12345'), ['decimalDigits'])
  t.strictSame(errors(amount, 12.5), ['type'], 'a JSON number is refused')
  t.notOk('maxLength' in Decimal(), 'no digits, no maxLength')
  t.notOk('maxLength' in Decimal({ minimum: '0', maximum: '10' }), 'no fraction limit, no maxLength')
  t.equal(Decimal({ minimum: '0', maximum: '999', maxFractionDigits: 0 }).maxLength, 3, 'integer digits from the bounds, no sign')
  t.equal(Decimal({ minimum: '-5', maximum: '5', maxFractionDigits: 1 }).maxLength, 4, 'a negative minimum allows a sign')
  const bounded = Decimal({ minimum: '-10', maximum: '10.5' })
  t.match(bounded, { decimalMinimum: '-10', decimalMaximum: '10.5', examples: ['10.5'] })
  t.strictSame(errors(bounded, '10.50'), [])
  t.strictSame(errors(bounded, '10.51'), ['decimalMaximum'])
  t.strictSame(errors(bounded, '-10.01'), ['decimalMinimum'])
  t.strictSame(Decimal({ minimum: '3' }).examples, ['3'])
  t.strictSame(Decimal({ examples: ['1.5'] }).examples, ['1.5'], 'examples may be replaced')
  const throws: Array<[object, RegExp]> = [
    [{ minimum: '1e3' }, /^Decimal: minimum must be a decimal string like "0" or "-12.5", got "1e3"$/],
    [{ maximum: 10 }, /^Decimal: maximum must be a decimal string.*got 10$/],
    [{ minimum: '2', maximum: '1.5' }, /^Decimal: minimum must be at most the maximum 1.5, got "2"$/],
    [{ maxIntegerDigits: 0 }, /^Decimal: maxIntegerDigits must be an integer of at least 1, got 0$/],
    [{ maxFractionDigits: 1.5 }, /^Decimal: maxFractionDigits must be an integer of at least 0, got 1.5$/]
  ]
  for (const [options, message] of throws) t.throws(() => Decimal(options), { name: 'TypeError', message }, JSON.stringify(options))
  assertType<Equal<Static<typeof amount>, string>>()
})

t.test('Percentage: 0 to 100 with 2 decimals by default, overridable', async t => {
  const p = Percentage({ description: 'Discount' })
  t.match(p, { format: 'decimal', decimalMinimum: '0', decimalMaximum: '100', decimalDigits: { fraction: 2 }, maxLength: 6, description: 'Discount' })
  for (const ok of ['0', '12.5', '99.99', '100', '100.00']) t.strictSame(errors(p, ok), [], ok)
  t.strictSame(errors(p, '100.01'), ['decimalMaximum'])
  t.strictSame(errors(p, '-1'), ['decimalMinimum'])
  t.strictSame(errors(p, '1.234'), ['decimalDigits'])
  t.strictSame(errors(p, '50%'), ['format'])
  t.match(Percentage({ maximum: '200', maxFractionDigits: 0 }), { decimalMaximum: '200', decimalDigits: { fraction: 0 }, maxLength: 3 })
  t.throws(() => Percentage({ minimum: 'x' }), /^Percentage: minimum/)
})

t.test('Int32: explicit bounds within 32 bits, checked when built', async t => {
  const count = Int32({ minimum: 0, maximum: 100000, description: 'Pages' })
  t.match(count, { type: 'integer', minimum: 0, maximum: 100000, description: 'Pages' })
  t.match(Int32({ minimum: 0, maximum: 1, default: 0 }), { default: 0 })
  t.strictSame(errors(count, 100001), ['maximum'])
  t.strictSame(errors(count, 1.5), ['type'])
  t.strictSame(errors(count, '1'), ['type'])
  t.strictSame(Int32({ minimum: -2147483648, maximum: 2147483647 }).maximum, 2147483647)
  const throws: Array<[object, RegExp]> = [
    [{ minimum: -2147483649, maximum: 0 }, /^Int32: minimum must be an integer from -2147483648 to 2147483647, got -2147483649$/],
    [{ minimum: 0, maximum: 2147483648 }, /^Int32: maximum must be an integer from/],
    [{ minimum: 0.5, maximum: 1 }, /^Int32: minimum/],
    [{ minimum: 0 }, /^Int32: maximum .* got undefined$/],
    [{ minimum: 5, maximum: 1 }, /^Int32: minimum must be at most the maximum 1, got 5$/]
  ]
  for (const [options, message] of throws) t.throws(() => Int32(options as never), { name: 'TypeError', message }, JSON.stringify(options))
  assertType<Equal<Static<typeof count>, number>>()
})

t.test('Int64: a string with format int64 and exact bounds', async t => {
  const bytes = Int64()
  t.match(bytes, { type: 'string', format: 'int64', minLength: 1, maxLength: 20 })
  t.strictSame(errors(bytes, '9223372036854775807'), [])
  t.strictSame(errors(bytes, '9223372036854775808'), ['format'])
  t.strictSame(errors(bytes, 5), ['type'])
  const positive = Int64({ minimum: 0n, maximum: '1000' })
  t.match(positive, { decimalMinimum: '0', decimalMaximum: '1000', examples: ['1000'] })
  t.strictSame(errors(positive, '-1'), ['decimalMinimum'])
  t.strictSame(errors(positive, '1001'), ['decimalMaximum'])
  t.strictSame(Int64({ minimum: '-5' }).examples, ['-5'])
  const throws: Array<[object, RegExp]> = [
    [{ minimum: 5 }, /^Int64: minimum must be an integer from -9223372036854775808 to 9223372036854775807, got 5$/],
    [{ maximum: '9223372036854775808' }, /^Int64: maximum must be/],
    [{ maximum: 2n ** 64n }, /^Int64: maximum must be/],
    [{ minimum: '1.5' }, /^Int64: minimum/],
    [{ minimum: '10', maximum: '9' }, /^Int64: minimum must be at most the maximum 9, got "10"$/]
  ]
  for (const [options, message] of throws) t.throws(() => Int64(options as never), { name: 'TypeError', message })
  assertType<Equal<Static<typeof bytes>, string>>()
})

t.test('UpperSnakeEnum: one enum error, literal union type, bad values refused when built', async t => {
  const kind = UpperSnakeEnum(['PURCHASE_ORDER', 'INVOICE', 'CONTRACT'], { description: 'Kind' })
  t.strictSame(JSON.parse(JSON.stringify(kind)), { type: 'string', enum: ['PURCHASE_ORDER', 'INVOICE', 'CONTRACT'], description: 'Kind' })
  t.strictSame(errors(kind, 'RECEIPT'), ['enum'])
  t.strictSame(errors(kind, 'invoice'), ['enum'])
  t.strictSame(errors(kind, 1), ['type', 'enum'], 'Ajv checks enum whatever the type; the problem plugin should fold these')
  assertType<Equal<Static<typeof kind>, 'PURCHASE_ORDER' | 'INVOICE' | 'CONTRACT'>>()
  for (const bad of ['draft', 'A-B', 'A__B', '_A', 'A_', '', 'Ä']) {
    t.throws(() => UpperSnakeEnum(['OK', bad]), { name: 'TypeError', message: /^UpperSnakeEnum: values must be upper snake case/ }, JSON.stringify(bad))
  }
  t.throws(() => UpperSnakeEnum([]), /^UpperSnakeEnum: values must be a non-empty array, got $/)
  t.throws(() => UpperSnakeEnum(['A', 'B', 'A']), /^UpperSnakeEnum: values must be without repeated values, got "A, B, A"$/)
  t.throws(() => UpperSnakeEnum([1] as never), /upper snake case.*got 1$/)
  t.strictSame(UpperSnakeEnum(['A1', 'B_2', 'X9_Y8_Z7']).enum, ['A1', 'B_2', 'X9_Y8_Z7'])
})

t.test('Quantity: {amount, uom} object and the <x>/<x>Uom sibling form', async t => {
  const weight = Quantity({ amount: { minimum: '0' }, uomValues: ['kg', 'g'] })
  t.match(weight, { type: 'object', required: ['amount', 'uom'], additionalProperties: false })
  t.strictSame(errors(weight, { amount: '1.5', uom: 'kg' }), [])
  t.strictSame(errors(weight, { amount: '-1', uom: 'lb' }).sort(), ['decimalMinimum', 'enum'])
  t.strictSame(errors(weight, { amount: 1.5, uom: 'kg', extra: 1 }).sort(), ['additionalProperties', 'type'])
  assertType<Equal<Static<typeof weight>, { amount: string, uom: 'kg' | 'g' }>>()
  const free = Quantity()
  t.match(free.properties.uom, { type: 'string', minLength: 1, maxLength: 50 })
  assertType<Equal<Static<typeof free>, { amount: string, uom: string }>>()

  const box = Type.Object({ ...QuantityFields('length', { uomValues: ['m', 'cm'] }) })
  t.strictSame(Object.keys(box.properties), ['length', 'lengthUom'])
  t.strictSame(errors(box, { length: '2', lengthUom: 'cm' }), [])
  t.strictSame(errors(box, { length: '2', lengthUom: 'in' }), ['enum'])
  assertType<Equal<Static<typeof box>, { length: string, lengthUom: 'm' | 'cm' }>>()
  const plain = QuantityFields('volume')
  t.strictSame(Object.keys(plain), ['volume', 'volumeUom'])
  assertType<Equal<Static<(typeof plain)['volumeUom']>, string>>()
  t.throws(() => QuantityFields('Weight'), /^QuantityFields: name must be a camelCase property name, got "Weight"$/)
  t.throws(() => Quantity({ uomValues: [] }), /^Quantity: uomValues must be a non-empty array of non-empty strings/)
  t.throws(() => QuantityFields('w', { uomValues: ['kg', ''] }), /^QuantityFields: uomValues/)
})

t.test('Ref: pattern pinned to the entity, parts checked when built', async t => {
  const author = Ref('author', { readOnly: true })
  t.match(author, { type: 'string', pattern: '^svc:author::[A-Za-z0-9._~-]+$', minLength: 13, maxLength: 255, readOnly: true })
  t.strictSame(errors(author, 'svc:author::abc-1'), [])
  t.strictSame(errors(author, 'svc:document::abc'), ['pattern'], 'another entity')
  t.strictSame(errors(author, 'svc:author::a:b'), ['pattern'])
  t.strictSame(errors(author, `svc:author::${'x'.repeat(250)}`), ['maxLength'])
  const page = Ref('document', { subEntity: 'page', namespace: 'acme' })
  t.equal(page.pattern, '^acme:document:page:[A-Za-z0-9._~-]+$')
  t.strictSame(errors(page, 'acme:document:page:7'), [])
  t.strictSame(errors(page, 'svc:document:page:700'), ['pattern'])
  t.strictSame(errors(page, 'svc:document:page:7'), ['minLength', 'pattern'], 'too short for this prefix, and the wrong prefix')
  t.throws(() => Ref('Author'), /^Ref: entity must be 1 to 20 characters of \[a-z0-9\], got "Author"$/)
  t.throws(() => Ref('a'.repeat(21)), /^Ref: entity/)
  t.throws(() => Ref('author', { subEntity: 'sub-page' }), /^Ref: subEntity/)
  t.throws(() => Ref('author', { namespace: 'svc1' }), /^Ref: namespace must be 1 to 10 characters of \[a-z\], got "svc1"$/)
  t.throws(() => Ref(undefined as never), /^Ref: entity .* got undefined$/)
  assertType<Equal<Static<typeof author>, string>>()
})

t.test('Id: opaque identifier alphabet, configurable lengths', async t => {
  const id = Id()
  t.match(id, { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$' })
  t.strictSame(errors(id, 'abc.DEF_1~-'), [])
  t.strictSame(errors(id, 'a b'), ['pattern'])
  t.strictSame(errors(id, 'x'.repeat(129)), ['maxLength'], 'a long id is one error')
  t.strictSame(errors(id, 12), ['type'], 'identifiers are never numbers')
  t.equal(Id({ maxLength: 36 }).maxLength, 36)
})

t.test('Nullable: the same schema with null added to its type, one error when wrong', async t => {
  const name = Nullable(Type.String({ minLength: 1, maxLength: 5 }), { description: 'Optional name' })
  t.strictSame(JSON.parse(JSON.stringify(name)), { type: ['string', 'null'], minLength: 1, maxLength: 5, description: 'Optional name' })
  t.strictSame(errors(name, null), [])
  t.strictSame(errors(name, 'abc'), [])
  t.strictSame(errors(name, 5), ['type'])
  t.strictSame(errors(name, 'abcdef'), ['maxLength'])
  assertType<Equal<Static<typeof name>, string | null>>()

  const status = Nullable(UpperSnakeEnum(['DRAFT', 'PUBLISHED']))
  t.strictSame(JSON.parse(JSON.stringify(status)), { type: ['string', 'null'], enum: ['DRAFT', 'PUBLISHED', null] })
  t.strictSame(errors(status, null), [])
  t.strictSame(errors(status, 'GONE'), ['enum'])
  assertType<Equal<Static<typeof status>, 'DRAFT' | 'PUBLISHED' | null>>()

  const literal = Nullable(Type.Literal('ON'))
  t.strictSame(JSON.parse(JSON.stringify(literal)), { type: ['string', 'null'], enum: ['ON', null] })
  t.strictSame(errors(literal, 'OFF'), ['enum'])

  const twice = Nullable(Nullable(Type.Integer()))
  t.strictSame(twice.type, ['integer', 'null'], 'null is not added twice')
  t.strictSame(Nullable(Type.Unsafe({ type: ['string', 'null'], enum: ['A', null] })).enum, ['A', null])

  const source = Nullable(Type.Object({ system: Type.String() }))
  t.strictSame(source.type, ['object', 'null'])
  t.strictSame(errors(source, null), [])
  t.strictSame(errors(source, {}), ['required'])
  t.strictSame(errors(source, 'x'), ['type'])
  assertType<Equal<Static<typeof source>, { system: string } | null>>()

  const mixed = Nullable(Type.Union([Type.String(), Type.Integer()]), { description: 'Mixed' })
  t.strictSame(mixed.description, 'Mixed')
  t.strictSame(mixed.anyOf.length, 3, 'a union gets one more branch')
  t.strictSame(errors(mixed, null), [])
  t.strictSame(errors(mixed, 1.5).filter(k => k === 'anyOf'), ['anyOf'], 'one anyOf error, its branch errors are folded by the problem plugin')
  assertType<Equal<Static<typeof mixed>, string | number | null>>()

  const shared = makeAjv().addSchema({ $id: 'Code', type: 'string', pattern: '^[A-Z]+$' })
  const ref = Nullable(Type.Ref('Code'))
  t.strictSame(JSON.parse(JSON.stringify(ref)), { anyOf: [{ $ref: 'Code' }, { type: 'null' }] }, 'any other schema without a type')
  const check = shared.compile(Type.Object({ code: ref }))
  t.equal(check({ code: null }), true)
  t.equal(check({ code: 'AB' }), true)
  t.equal(check({ code: 'ab' }), false)

  const entity = Type.Object({ note: Type.Optional(Nullable(Type.String())), gone: Nullable(Type.String()) })
  t.strictSame(entity.required, ['gone'], 'Optional(Nullable(x)) may be absent, Nullable(x) must be present')
  assertType<Equal<Static<typeof entity>, { note?: string | null, gone: string | null }>>()
  t.equal(Object.getOwnPropertySymbols(name).length > 0, true, 'still a TypeBox schema')
})
