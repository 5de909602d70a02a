import t from 'tap'
import fc from 'fast-check'
import { compareDate, compareDateTime, daysInMonth, isDate, isDateTime, isLeapYear } from '../../schemas/validators/date-time.js'
import { ajvAccepts, pad } from './helper.js'

// The oracle: JavaScript's own calendar, asked through setUTCFullYear so years 0–99 stay literal;
// year 0 (1 BC) is out of the convention's range.
function realDay (y: number, m: number, d: number): boolean {
  if (y < 1) return false
  const date = new Date(0)
  date.setUTCFullYear(y, m - 1, d)
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
}

const instant = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })

t.test('date-time: every instant written by toISOString is accepted, with or without milliseconds', async t => {
  fc.assert(fc.property(instant, d => {
    const iso = d.toISOString()
    return isDateTime(iso) && isDateTime(iso.slice(0, 19) + 'Z') && ajvAccepts('date-time', iso)
  }))
  t.pass()
})

t.test('date: agrees with the JavaScript calendar for any YYYY-MM-DD of digits', async t => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), (y, m, d) => {
    const s = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`
    return isDate(s) === realDay(y, m, d) && ajvAccepts('date', s) === realDay(y, m, d)
  }))
  t.pass()
})

t.test('date-time: a field out of range, a replaced character or a zone other than Z is refused', async t => {
  const field = fc.oneof(
    fc.record({ at: fc.constant(5), width: fc.constant(2), value: fc.integer({ min: 13, max: 99 }) }), // month
    fc.record({ at: fc.constant(11), width: fc.constant(2), value: fc.integer({ min: 24, max: 99 }) }), // hour
    fc.record({ at: fc.constant(14), width: fc.constant(2), value: fc.integer({ min: 60, max: 99 }) }), // minute
    fc.record({ at: fc.constant(17), width: fc.constant(2), value: fc.integer({ min: 60, max: 99 }) }) // second
  )
  fc.assert(fc.property(instant, field, (d, f) => {
    const iso = d.toISOString()
    return !isDateTime(iso.slice(0, f.at) + pad(f.value, f.width) + iso.slice(f.at + f.width))
  }))
  fc.assert(fc.property(instant, fc.integer({ min: 0, max: 23 }), fc.string({ minLength: 1, maxLength: 1, unit: 'binary-ascii' }), (d, at, c) => {
    const iso = d.toISOString()
    const digitAt = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22].includes(at)
    fc.pre(digitAt ? !/\d/.test(c) : c !== iso[at])
    return !isDateTime(iso.slice(0, at) + c + iso.slice(at + 1))
  }))
  fc.assert(fc.property(instant, fc.constantFrom('+01:00', '-05:30', '+00:00', ''), (d, zone) => {
    return !isDateTime(d.toISOString().slice(0, 23) + zone) && !ajvAccepts('date-time', d.toISOString().slice(0, 23) + zone)
  }))
  fc.assert(fc.property(instant, d => {
    const day = d.toISOString()
    const y = d.getUTCFullYear()
    const m = d.getUTCMonth() + 1
    return !isDate(`${day.slice(0, 8)}${pad(daysInMonth(y, m) + 1, 2)}`)
  }))
  t.pass()
})

t.test('date and date-time: named edge cases', async t => {
  const cases: Array<[string, 'date' | 'date-time', boolean]> = [
    ['2024-02-29', 'date', true],
    ['2023-02-29', 'date', false],
    ['2023-02-30', 'date', false],
    ['2000-02-29', 'date', true],
    ['1900-02-29', 'date', false],
    ['2024-04-31', 'date', false],
    ['2024-12-31', 'date', true],
    ['2024-00-10', 'date', false],
    ['2024-13-01', 'date', false],
    ['2024-01-00', 'date', false],
    ['0000-01-01', 'date', false],
    ['0000-12-31T23:59:59Z', 'date-time', false],
    ['0001-01-01', 'date', true],
    ['0001-01-01T00:00:00.000Z', 'date-time', true],
    ['9999-12-31T23:59:59.999Z', 'date-time', true],
    ['2024-1-01', 'date', false],
    ['2024/01/01', 'date', false],
    ['24-01-01', 'date', false],
    ['2024-01-01T00:00:00Z', 'date', false],
    ['2024-05-01T12:00:00.000Z', 'date-time', true],
    ['2024-05-01T12:00:00Z', 'date-time', true],
    ['2024-02-29T23:59:59.999Z', 'date-time', true],
    ['2023-02-29T00:00:00Z', 'date-time', false],
    ['2024-05-01T24:00:00Z', 'date-time', false],
    ['2024-05-01T23:60:00Z', 'date-time', false],
    ['2024-05-01T23:59:60Z', 'date-time', false],
    ['2024-05-01T12:00:00+01:00', 'date-time', false],
    ['2024-05-01T12:00:00.000+00:00', 'date-time', false],
    ['2024-05-01T12:00:00', 'date-time', false],
    ['2024-05-01T12:00:00.000', 'date-time', false],
    ['2024-05-01T12:00:00.0Z', 'date-time', false],
    ['2024-05-01T12:00:00.00Z', 'date-time', false],
    ['2024-05-01T12:00:00.0000Z', 'date-time', false],
    ['2024-05-01T12:00:00.00aZ', 'date-time', false],
    ['2024-05-01T12:00:00,000Z', 'date-time', false],
    ['2024-05-01t12:00:00Z', 'date-time', false],
    ['2024-05-01T12:00:00z', 'date-time', false],
    ['2024-05-01 12:00:00Z', 'date-time', false],
    ['2024-05-01T12:00Z', 'date-time', false],
    ['2024-05-01', 'date-time', false],
    ['', 'date-time', false],
    ['', 'date', false]
  ]
  for (const [value, format, valid] of cases) {
    t.equal((format === 'date' ? isDate : isDateTime)(value), valid, `${format} ${JSON.stringify(value)}`)
    t.equal(ajvAccepts(format, value), valid, `${format} ${JSON.stringify(value)} through Ajv`)
  }
})

t.test('calendar helpers and ordering', async t => {
  t.equal(isLeapYear(2024), true)
  t.equal(isLeapYear(1900), false)
  t.equal(isLeapYear(2000), true)
  t.equal(daysInMonth(2023, 2), 28)
  t.equal(daysInMonth(2024, 2), 29)
  t.equal(daysInMonth(2024, 13), 0, 'no such month')
  t.equal(compareDateTime('2024-01-01T00:00:00Z', '2024-01-01T00:00:00.001Z'), -1, 'seconds form is padded to milliseconds')
  t.equal(compareDateTime('2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00Z'), 0)
  t.equal(compareDateTime('2024-01-02T00:00:00Z', '2024-01-01T23:59:59.999Z'), 1)
  t.equal(compareDate('2024-01-01', '2024-01-02'), -1)
  t.equal(compareDate('2024-01-02', '2024-01-02'), 0)
  t.equal(compareDate('2024-01-03', '2024-01-02'), 1)
  fc.assert(fc.property(instant, instant, (a, b) => {
    const ia = a.toISOString()
    const ib = b.toISOString()
    return Math.sign(compareDateTime(ia, ib)) === Math.sign(a.getTime() - b.getTime())
  }))
})
