import t from 'tap'
import fc from 'fast-check'
import { formatDuration, parseDuration } from '../../plugins/rate-limit/index.js'

t.test('parseDuration: a number and a unit, in milliseconds', async t => {
  const table: Array<[string, number | null]> = [
    ['1 minute', 60_000],
    ['1minute', 60_000],
    ['  30 s ', 30_000],
    ['2 Hours', 7_200_000],
    ['1.5 h', 5_400_000],
    ['500', 500],
    ['250ms', 250],
    ['1 day', 86_400_000],
    ['10 secs', 10_000],
    ['3 mins', 180_000],
    ['', null],
    ['minute', null],
    ['1 fortnight', null],
    ['-1 s', null],
    ['1e3', null],
    ['1 minute 30 s', null]
  ]
  for (const [text, ms] of table) t.equal(parseDuration(text), ms, JSON.stringify(text))
})

t.test('formatDuration: the largest unit that divides the window', async t => {
  const table: Array<[number, string]> = [
    [60_000, '1 minute'],
    [120_000, '2 minutes'],
    [90_000, '90 seconds'],
    [1000, '1 second'],
    [1500, '1500 milliseconds'],
    [1, '1 millisecond'],
    [3_600_000, '1 hour'],
    [172_800_000, '2 days']
  ]
  for (const [ms, text] of table) t.equal(formatDuration(ms), text, String(ms))
})

t.test('property: what formatDuration writes, parseDuration reads back', async t => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 12 }), (ms) => parseDuration(formatDuration(ms)) === ms))
})
