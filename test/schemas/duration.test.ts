import t from 'tap'
import fc from 'fast-check'
import { isDuration } from '../../schemas/validators/duration.js'
import { ajvAccepts } from './helper.js'

// Oracle for durations without fractions: each designator optional, in order, T only before a time component.
const WHOLE = /^P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/
const durationChars = fc.string({ unit: fc.constantFrom('P', 'T', 'Y', 'M', 'W', 'D', 'H', 'S', '1', '0'), maxLength: 10 })

const DATE = ['Y', 'M', 'W', 'D'] as const
const TIME = ['H', 'M', 'S'] as const
/** Valid durations: a non-empty choice of components, a number each, an optional fraction on the last one. */
const duration = fc.record({
  date: fc.tuple(...DATE.map(() => fc.option(fc.nat({ max: 9999 }), { nil: undefined }))),
  time: fc.tuple(...TIME.map(() => fc.option(fc.nat({ max: 9999 }), { nil: undefined }))),
  fraction: fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined })
}).map(({ date, time, fraction }) => {
  const parts = [
    ...date.map((n, i) => n === undefined ? undefined : { n, d: DATE[i] as string, time: false }),
    ...time.map((n, i) => n === undefined ? undefined : { n, d: TIME[i] as string, time: true })
  ].filter(p => p !== undefined)
  return { parts, fraction }
}).filter(({ parts }) => parts.length > 0).map(({ parts, fraction }) => {
  let s = 'P'
  let inTime = false
  parts.forEach((p, i) => {
    if (p.time && !inTime) { s += 'T'; inTime = true }
    s += String(p.n) + (i === parts.length - 1 && fraction !== undefined ? `.${fraction}` : '') + p.d
  })
  return s
})

t.test('duration: generated durations are accepted', async t => {
  fc.assert(fc.property(duration, s => isDuration(s) && ajvAccepts('duration', s)))
  t.pass()
})

t.test('duration: agrees with the grammar on any string of designators and digits', async t => {
  fc.assert(fc.property(durationChars, s => isDuration(s) === WHOLE.test(s)))
  t.pass()
})

t.test('duration: a removed designator, a swapped order, a stray T or an inner fraction is refused', async t => {
  fc.assert(fc.property(duration, s => !isDuration(s.slice(0, -1))))  // the last designator removed leaves a bare number
  fc.assert(fc.property(duration, s => !isDuration(`${s}1Y`) && !isDuration(`${s}T`) && !isDuration(`${s}X`)))  // nothing valid follows the end
  fc.assert(fc.property(duration, fc.nat({ max: 20 }), fc.constantFrom('X', 'P', ' ', '-', ',', 'y'), (s, at, c) => {
    const i = 1 + (at % (s.length - 1))
    return !isDuration(s.slice(0, i) + c + s.slice(i + 1))
  }))  // a character that is no designator replaces any character after P
  t.pass()
})

t.test('duration: named edge cases', async t => {
  const cases: Array<[string, boolean]> = [
    ['P1Y', true], ['P1M', true], ['P2W', true], ['P3D', true], ['PT4H', true], ['PT5M', true], ['PT6S', true],
    ['P1Y2M3W4DT5H6M7.5S', true], ['P1Y2M10DT2H30M', true], ['P0D', true], ['PT0.5S', true], ['P1.5Y', true],
    ['PT36H', true], ['P0001D', true], ['P1DT12H', true],
    ['P', false], ['PT', false], ['P1YT', false], ['P1S', false], ['PT1D', false], ['P1M1Y', false], ['PT1S1M', false],
    ['P1Y1Y', false], ['PT1HT1M', false], ['P1.5YT1H', false], ['P1.5Y2M', false], ['PT1.5H30M', false],
    ['P.5D', false], ['P1.D', false], ['P1,5D', false], ['P-1D', false], ['-P1D', false], ['p1d', false], ['P1d', false],
    ['1Y', false], ['P1', false], ['PY', false], ['PTH', false], ['P1Y ', false], ['', false], ['P1W1W', false], ['P1D1W', false]
  ]
  for (const [value, valid] of cases) {
    t.equal(isDuration(value), valid, JSON.stringify(value))
    t.equal(ajvAccepts('duration', value), valid, `${JSON.stringify(value)} through Ajv`)
  }
})
