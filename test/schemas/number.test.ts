import t from 'tap'
import fc from 'fast-check'
import { INT64_MAX, INT64_MIN, compareDecimal, isDecimal, isInt64, parseDecimal } from '../../schemas/validators/number.js'
import { ajvAccepts, makeAjv } from './helper.js'

// Oracle of the decimal grammar: optional '-', no leading zero, optional fraction, no negative zero.
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/
const NEGATIVE_ZERO = /^-0(\.0+)?$/
const decimalChars = fc.string({ unit: fc.constantFrom('-', '+', '.', '0', '1', '9', 'e', ' '), maxLength: 8 })

/** A decimal value n / 10^scale, written with exactly `scale` fraction digits. */
function write (n: bigint, scale: number): string {
  const negative = n < 0n
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0')
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return negative ? `-${text}` : text
}
const scaled = fc.record({ n: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), scale: fc.integer({ min: 0, max: 6 }) })
  .filter(({ n }) => n !== 0n)

t.test('decimal: agrees with the grammar on any string of decimal-ish characters', async t => {
  fc.assert(fc.property(decimalChars, s => {
    const expected = DECIMAL.test(s) && !NEGATIVE_ZERO.test(s)
    return isDecimal(s) === expected && ajvAccepts('decimal', s) === expected
  }))
  fc.assert(fc.property(scaled, ({ n, scale }) => isDecimal(write(n, scale))))
  t.pass()
})

t.test('decimal: named edge cases', async t => {
  const cases: Array<[string, boolean]> = [
    ['0', true], ['10.2', true], ['-12.50', true], ['0.5', true], ['-0.5', true], ['100', true], ['0.000', true],
    ['-0', false], ['-0.0', false], ['-0.000', false], ['00', false], ['01', false], ['-01.5', false], ['+1', false],
    ['1e5', false], ['1.', false], ['.5', false], ['-', false], ['', false], [' 1', false], ['1 ', false], ['1,5', false],
    ['1.2.3', false], ['--1', false], ['١', false]
  ]
  for (const [value, valid] of cases) t.equal(isDecimal(value), valid, JSON.stringify(value))
  t.strictSame(parseDecimal('-12.50'), { negative: true, integer: '12', fraction: '50' })
  t.strictSame(parseDecimal('7'), { negative: false, integer: '7', fraction: '' })
})

t.test('compareDecimal: exact, agrees with BigInt arithmetic', async t => {
  fc.assert(fc.property(scaled, scaled, (a, b) => {
    // a.n/10^a.scale vs b.n/10^b.scale, on a common scale.
    const left = a.n * 10n ** BigInt(b.scale)
    const right = b.n * 10n ** BigInt(a.scale)
    const expected = left < right ? -1 : left > right ? 1 : 0
    return compareDecimal(write(a.n, a.scale), write(b.n, b.scale)) === expected
  }))
  t.equal(compareDecimal('10.50', '10.5'), 0, 'trailing zeros do not matter')
  t.equal(compareDecimal('0', '0.000'), 0)
  t.equal(compareDecimal('0.1', '0.09'), 1)
  t.equal(compareDecimal('1.05', '1.5'), -1, 'fractions compare digit by digit')
  t.equal(compareDecimal('12.9', '13'), -1)
  t.equal(compareDecimal('13', '12.9'), 1)
  t.equal(compareDecimal('-0.1', '0'), -1)
  t.equal(compareDecimal('0', '-3'), 1)
  t.equal(compareDecimal('-2', '-10'), 1, 'a smaller magnitude is the larger negative')
  t.equal(compareDecimal('99999999999999999999.99', '100000000000000000000'), -1, 'no floating point')
  t.throws(() => compareDecimal('1', 'x'), { name: 'TypeError', message: /"x" is not a decimal string/ })
  t.throws(() => compareDecimal('1e3', '1'), { name: 'TypeError', message: /"1e3"/ })
})

t.test('int64: every 64-bit integer is accepted, one beyond is not', async t => {
  fc.assert(fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), n => isInt64(String(n)) && ajvAccepts('int64', String(n))))
  fc.assert(fc.property(fc.bigInt({ min: 1n, max: 2n ** 70n }), k => !isInt64(String(INT64_MAX + k)) && !isInt64(String(INT64_MIN - k))))
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: INT64_MAX }), n => !isInt64(`0${n}`) && !isInt64(`+${n}`) && !isInt64(`${n}.0`)))
  const cases: Array<[string, boolean]> = [
    ['9223372036854775807', true], ['-9223372036854775808', true], ['0', true], ['-1', true],
    ['9223372036854775808', false], ['-9223372036854775809', false], ['10000000000000000000', false],
    ['-0', false], ['007', false], ['1.5', false], ['1e3', false], ['', false], [' 1', false]
  ]
  for (const [value, valid] of cases) t.equal(isInt64(value), valid, JSON.stringify(value))
})

t.test('decimal keywords: exact bounds and digit limits, one error each, params for the problem plugin', async t => {
  const ajv = makeAjv()
  const validate = ajv.compile({ type: 'string', format: 'decimal', decimalMinimum: '-1.5', decimalMaximum: '100', decimalDigits: { integer: 3, fraction: 2 } })
  const errors = (value: string): Array<{ keyword: string, message?: string, params: unknown }> => {
    validate(value)
    return (validate.errors ?? []).map(e => ({ keyword: e.keyword, message: e.message, params: e.params }))
  }
  for (const ok of ['-1.5', '-1.50', '0', '99.99', '100', '100.00']) t.strictSame(errors(ok), [], `${ok} is within`)
  t.strictSame(errors('-1.51'), [{ keyword: 'decimalMinimum', message: 'must be at least -1.5', params: { limit: '-1.5' } }])
  t.strictSame(errors('100.01'), [{ keyword: 'decimalMaximum', message: 'must be at most 100', params: { limit: '100' } }])
  t.strictSame(errors('1.234'), [{ keyword: 'decimalDigits', message: 'must have at most 3 digits before the decimal point and 2 digits after the decimal point', params: { integer: 3, fraction: 2 } }])
  t.strictSame(errors('abc').map(e => e.keyword), ['format'], 'a value that is no decimal gets the format error only')
  t.strictSame(errors('-9999').map(e => e.keyword), ['decimalMinimum', 'decimalDigits'], 'two violations, two errors')
  t.equal(ajv.compile({ type: 'string', decimalMinimum: '5' })(7), false, 'a number is not a decimal string')

  const messages: Array<[object, string]> = [
    [{ fraction: 0 }, 'must be a whole number'],
    [{ integer: 4, fraction: 0 }, 'must be a whole number of at most 4 digits'],
    [{ integer: 1 }, 'must have at most 1 digit before the decimal point'],
    [{ fraction: 1 }, 'must have at most 1 digit after the decimal point']
  ]
  for (const [limits, message] of messages) {
    const v = ajv.compile({ type: 'string', decimalDigits: limits })
    t.equal(v('12.34'), false)
    t.equal(v.errors?.[0]?.message, message, JSON.stringify(limits))
  }
  t.throws(() => ajv.compile({ type: 'string', decimalMinimum: '1e3' }), { name: 'TypeError', message: /decimalMinimum must be a decimal string.*"1e3"/ })
  t.throws(() => ajv.compile({ type: 'string', decimalMaximum: 10 }), /decimalMaximum/, 'a number is not a bound')
  t.throws(() => ajv.compile({ type: 'string', decimalDigits: { integer: 0 } }), /decimalDigits/)
})
