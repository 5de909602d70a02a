import t from 'tap'
import fc from 'fast-check'
import { parseHttpDate } from '../../plugins/conditional/index.js'

// RFC 9110 §5.6.7: the three forms of an HTTP-date a recipient reads, and what is not one.

const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37)
const NOW = Date.UTC(2026, 11, 7, 12, 0, 0)

t.test('parseHttpDate: the three forms, and what is refused', async t => {
  const cases: Array<[string, string, number | null]> = [
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT', NOV_6_1994],
    ['rfc850-date', 'Sunday, 06-Nov-94 08:49:37 GMT', NOV_6_1994],
    ['asctime-date, a day of one digit', 'Sun Nov  6 08:49:37 1994', NOV_6_1994],
    ['asctime-date, a day of two digits', 'Wed Nov 16 08:49:37 1994', Date.UTC(1994, 10, 16, 8, 49, 37)],
    ['the day name is not checked against the date', 'Mon, 06 Nov 1994 08:49:37 GMT', NOV_6_1994],
    ['a leap day', 'Thu, 29 Feb 2024 00:00:00 GMT', Date.UTC(2024, 1, 29)],
    ['a leap second reads as the second before it', 'Wed, 31 Dec 2016 23:59:60 GMT', Date.UTC(2016, 11, 31, 23, 59, 59)],
    ['the last second of a day', 'Sun, 06 Nov 1994 23:59:59 GMT', Date.UTC(1994, 10, 6, 23, 59, 59)],
    ['a year before 100, not taken for 19xx', 'Sat, 01 Jan 0050 00:00:00 GMT', Date.parse('0050-01-01T00:00:00Z')],
    ['lower case', 'sun, 06 nov 1994 08:49:37 gmt', null],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC', null],
    ['an offset', 'Sun, 06 Nov 1994 08:49:37 +0000', null],
    ['ISO 8601', '1994-11-06T08:49:37Z', null],
    ['a number', '784111777', null],
    ['the empty string', '', null],
    ['a space around it', ' Sun, 06 Nov 1994 08:49:37 GMT', null],
    ['a day of one digit in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT', null],
    ['a two-digit year in IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT', null],
    ['31 February', 'Sun, 31 Feb 1994 08:49:37 GMT', null],
    ['29 February of a common year', 'Sun, 29 Feb 2023 08:49:37 GMT', null],
    ['day 0', 'Sun, 00 Nov 1994 08:49:37 GMT', null],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT', null],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT', null],
    ['second 61', 'Sun, 06 Nov 1994 08:49:61 GMT', null],
    ['a month by number', 'Sun, 06 11 1994 08:49:37 GMT', null],
    ['rfc850 with a short day name', 'Sun, 06-Nov-94 08:49:37 GMT', null],
    ['rfc850 on 31 February', 'Sunday, 31-Feb-94 08:49:37 GMT', null],
    ['asctime with a zone', 'Sun Nov  6 08:49:37 1994 GMT', null],
    ['asctime with day 0', 'Sun Nov  0 08:49:37 1994', null]
  ]
  for (const [name, value, expected] of cases) t.equal(parseHttpDate(value, NOW), expected, name)
})

t.test('rfc850-date: a two-digit year is the one nearest now, within 50 years', async t => {
  const years: Array<[string, number, number]> = [
    ['94 in 2026', NOW, 1994],
    ['26 in 2026', NOW, 2026],
    ['76 in 2026: 50 years ahead at most, so 2076', Date.UTC(2026, 0, 1), 2076],
    ['77 in 2026: more than 50 ahead, so 1977', NOW, 1977],
    ['05 in 2090: 2105, not 85 years back', Date.UTC(2090, 0, 1), 2105],
    ['50 in 2000', Date.UTC(2000, 0, 1), 2050]
  ]
  for (const [name, now, year] of years) {
    const at = parseHttpDate(`Sunday, 01-Jan-${name.slice(0, 2)} 00:00:00 GMT`, now)
    t.equal(at === null ? null : new Date(at).getUTCFullYear(), year, name)
  }
})

t.test('any instant written by Date.toUTCString, or in the obsolete forms, reads back to its second', async t => {
  const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
  const instant = fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59) })
  fc.assert(fc.property(instant, (ms) => {
    const second = Math.floor(ms / 1000) * 1000
    const d = new Date(ms)
    const imf = d.toUTCString()
    // The obsolete forms, from the same parts: `Sun, 06 Nov 1994 08:49:37 GMT`.
    const [dayName, day, month, year, time] = imf.replace(',', '').split(' ') as [string, string, string, string, string]
    const asctime = `${dayName} ${month} ${day.startsWith('0') ? ' ' + day.slice(1) : day} ${time} ${year}`
    const long = DAYS[d.getUTCDay()] as string
    const rfc850 = `${long}, ${day}-${month}-${year.slice(2)} ${time} GMT`
    const near = Math.abs(d.getUTCFullYear() - new Date(NOW).getUTCFullYear()) < 50
    return parseHttpDate(imf, NOW) === second && parseHttpDate(asctime, NOW) === second &&
      (!near || parseHttpDate(rfc850, NOW) === second)
  }))
  t.pass('held for every generated instant')
})

t.test('whatever the text, a number of whole seconds or null, and never a throw', async t => {
  fc.assert(fc.property(fc.string({ maxLength: 40 }), (value) => {
    const at = parseHttpDate(value, NOW)
    return at === null || (Number.isInteger(at) && at % 1000 === 0)
  }))
  t.pass('held for every generated string')
})
