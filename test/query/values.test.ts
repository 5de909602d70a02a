import t from 'tap'
import fc from 'fast-check'
import { describeType, expectation, isDateText, isDateTimeText, isDecimalText, parseScalar } from '../../plugins/query/values.js'
import type { FieldDescriptor, FieldType } from '../../model/query.js'

function field (type: FieldType, enumValues?: string[]): FieldDescriptor {
  return { path: 'x', type, nullable: false, filterable: true, sortable: false, ordered: true, ...(enumValues === undefined ? {} : { enumValues }) }
}

t.test('parseScalar converts by type and refuses what is not of the type', async (t) => {
  const cases: Array<[FieldType, string, unknown]> = [
    ['int32', '0', 0], ['int32', '-0', 0], ['int32', '007', 7], ['int32', '2147483647', 2147483647], ['int32', '-2147483648', -2147483648],
    ['int32', '2147483648', undefined], ['int32', '-2147483649', undefined], ['int32', '', undefined], ['int32', '-', undefined],
    ['int32', '+1', undefined], ['int32', '1.0', undefined], ['int32', '1e3', undefined], ['int32', ' 1', undefined], ['int32', '0x10', undefined],
    ['int32', '٣', undefined], ['int32', '0000000000001', undefined],
    ['int64', '9223372036854775807', '9223372036854775807'], ['int64', '-9223372036854775808', '-9223372036854775808'],
    ['int64', '9223372036854775808', undefined], ['int64', '-9223372036854775809', undefined], ['int64', '1'.repeat(41), undefined],
    ['int64', '12a', undefined], ['int64', '', undefined],
    ['decimal', '10', '10'], ['decimal', '10.25', '10.25'], ['decimal', '-0.5', '-0.5'], ['decimal', '007.10', '007.10'],
    ['decimal', '.5', undefined], ['decimal', '5.', undefined], ['decimal', '-', undefined], ['decimal', '1e5', undefined],
    ['decimal', '+1', undefined], ['decimal', '1..2', undefined], ['decimal', '1.2.3', undefined], ['decimal', '', undefined], ['decimal', '1,5', undefined],
    ['date', '2024-02-29', '2024-02-29'], ['date', '2000-02-29', '2000-02-29'], ['date', '0001-01-01', '0001-01-01'], ['date', '9999-12-31', '9999-12-31'],
    ['date', '2023-02-29', undefined], ['date', '1900-02-29', undefined], ['date', '0000-01-01', undefined], ['date', '2024-13-01', undefined],
    ['date', '2024-00-01', undefined], ['date', '2024-04-31', undefined], ['date', '2024-04-00', undefined], ['date', '2024-1-01', undefined],
    ['date', '2024-01-01T', undefined], ['date', 'abcd-ef-gh', undefined], ['date', '2024/01/01', undefined], ['date', '', undefined],
    ['date-time', '2024-01-31T12:00:00Z', '2024-01-31T12:00:00Z'], ['date-time', '2024-01-31T12:00:00.5Z', '2024-01-31T12:00:00.5Z'],
    ['date-time', '2024-01-31T23:59:59.123Z', '2024-01-31T23:59:59.123Z'], ['date-time', '2024-01-31T12:00:00.1234Z', undefined],
    ['date-time', '2024-01-31T12:00:00.Z', undefined], ['date-time', '2024-01-31T12:00:00z', undefined], ['date-time', '2024-01-31t12:00:00Z', undefined],
    ['date-time', '2024-01-31T12:00:00+00:00', undefined], ['date-time', '2024-01-31T24:00:00Z', undefined], ['date-time', '2024-01-31T23:60:00Z', undefined],
    ['date-time', '2024-01-31T23:59:60Z', undefined], ['date-time', '2024-01-31T12:00:00', undefined], ['date-time', '2024-01-31T12:00Z', undefined],
    ['date-time', '2024-02-30T00:00:00Z', undefined], ['date-time', '2024-01-31 12:00:00Z', undefined], ['date-time', '2024-01-31T12-00:00Z', undefined],
    ['date-time', '2024-01-31T12:00-00Z', undefined], ['date-time', '2024-01-31T1a:00:00Z', undefined], ['date-time', '2024-01-31T12:00:00.000ZZ', undefined],
    ['boolean', 'true', true], ['boolean', 'false', false], ['boolean', 'TRUE', undefined], ['boolean', '1', undefined], ['boolean', '', undefined],
    ['string', '', ''], ['string', 'any * thing', 'any * thing'], ['string-array', 'x', 'x']
  ]
  for (const [type, text, expected] of cases) t.equal(parseScalar(field(type), text), expected, `${type} ${JSON.stringify(text)}`)
  const status = field('enum', ['DRAFT', 'PUBLISHED'])
  t.equal(parseScalar(status, 'DRAFT'), 'DRAFT')
  t.equal(parseScalar(status, 'draft'), undefined)
  t.equal(parseScalar({ ...status, enumValues: undefined }, 'DRAFT'), undefined, 'an enum without values accepts none')
})

t.test('error wording', async (t) => {
  t.equal(expectation(field('int32')), 'an integer from -2147483648 to 2147483647')
  t.match(expectation(field('int64')), /64-bit integer/)
  t.match(expectation(field('decimal')), /decimal number such as 10.25/)
  t.match(expectation(field('date')), /2024-01-31$/)
  t.match(expectation(field('date-time')), /UTC date-time/)
  t.equal(expectation(field('boolean')), 'true or false')
  t.equal(expectation(field('enum', ['A', 'B'])), 'one of A, B')
  t.equal(expectation({ ...field('enum'), enumValues: undefined }), 'one of ')
  t.equal(describeType('int32'), 'an integer attribute')
  t.equal(describeType('string-array'), 'an array attribute')
  t.equal(describeType('enum'), 'an enumerated attribute')
})

const pad = (n: number, width: number): string => String(n).padStart(width, '0')

t.test('dates are valid exactly when they are calendar days', async (t) => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (y, m, d) => {
    const text = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`
    const date = new Date(0)
    date.setUTCFullYear(y, m - 1, d)
    const real = y >= 1 && m >= 1 && m <= 12 && date.getUTCDate() === d && date.getUTCMonth() === m - 1
    return isDateText(text) === real
  }), { numRuns: 3000 })
  t.pass()
})

t.test('every millisecond timestamp of years 0001-9999 is a valid date-time; cut ones are not', async (t) => {
  const instant = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  fc.assert(fc.property(instant, fc.integer({ min: 1, max: 23 }), (date, cut) => {
    const iso = date.toISOString()
    return isDateTimeText(iso) && isDateTimeText(iso.slice(0, 19) + 'Z') && !isDateTimeText(iso.slice(0, cut))
  }))
  t.pass()
})

t.test('int32 and decimals', async (t) => {
  fc.assert(fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (n) => parseScalar(field('int32'), String(n)) === n))
  fc.assert(fc.property(fc.oneof(fc.integer({ min: 2 ** 31, max: 2 ** 40 }), fc.integer({ min: -(2 ** 40), max: -(2 ** 31) - 1 })),
    (n) => parseScalar(field('int32'), String(n)) === undefined))
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => parseScalar(field('int64'), n.toString()) === n.toString()))
  fc.assert(fc.property(fc.bigInt(), fc.nat({ max: 10 }), (n, scale) => {
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0')
    const text = (n < 0n ? '-' : '') + (scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`)
    return isDecimalText(text)
  }))
  t.pass()
})
