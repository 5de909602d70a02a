import t from 'tap'
import fc from 'fast-check'
import { isInterval } from '../../schemas/validators/interval.js'
import { ajvAccepts } from './helper.js'

const instant = fc.date({ min: new Date('1000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
const pair = fc.tuple(instant, instant).filter(([a, b]) => a.getTime() !== b.getTime())
  .map(([a, b]) => a < b ? [a, b] as const : [b, a] as const)
const days = fc.tuple(instant, instant).map(([a, b]) => [a.toISOString().slice(0, 10), b.toISOString().slice(0, 10)] as const)
  .filter(([a, b]) => a !== b).map(([a, b]) => a < b ? [a, b] as const : [b, a] as const)
const duration = fc.constantFrom('P1D', 'PT1H', 'P1Y2M3DT4H5M6.5S', 'P2W')
const repeat = fc.oneof(fc.constant(''), fc.constant('R/'), fc.nat({ max: 1000 }).map(n => `R${n}/`))

t.test('interval: start before end, start with duration, duration with end, optionally repeated', async t => {
  fc.assert(fc.property(pair, repeat, ([a, b], r) => {
    const s = a.toISOString()
    const e = b.toISOString()
    return isInterval(`${r}${s}/${e}`) && isInterval(`${r}${s.slice(0, 19)}Z/${e}`) && ajvAccepts('interval', `${r}${s}/${e}`)
  }))
  fc.assert(fc.property(days, repeat, ([a, b], r) => isInterval(`${r}${a}/${b}`)))
  fc.assert(fc.property(instant, duration, repeat, (a, d, r) => {
    const s = a.toISOString()
    return isInterval(`${r}${s}/${d}`) && isInterval(`${r}${d}/${s}`) && isInterval(`${r}${s.slice(0, 10)}/${d}`)
  }))
  t.pass()
})

t.test('interval: end before start, equal ends, mixed kinds or a broken side are refused', async t => {
  fc.assert(fc.property(pair, ([a, b]) => !isInterval(`${b.toISOString()}/${a.toISOString()}`)))  // reversed
  fc.assert(fc.property(instant, a => !isInterval(`${a.toISOString()}/${a.toISOString()}`)))  // empty
  fc.assert(fc.property(days, ([a, b]) => !isInterval(`${b}/${a}`) && !isInterval(`${a}/${a}`)))  // reversed or empty dates
  fc.assert(fc.property(pair, ([a, b]) => !isInterval(`${a.toISOString().slice(0, 10)}/${b.toISOString()}`)))  // a date with a date-time
  fc.assert(fc.property(pair, fc.constantFrom('+01:00', 'X', ''), ([a, b], junk) => !isInterval(`${a.toISOString()}/${b.toISOString().slice(0, -1)}${junk}`)))  // an end that is no date-time
  t.pass()
})

t.test('interval: named edge cases', async t => {
  const cases: Array<[string, boolean]> = [
    ['2024-05-01T00:00:00Z/2024-05-02T00:00:00Z', true],
    ['2024-05-01T00:00:00Z/P1D', true],
    ['P1D/2024-05-02T00:00:00.000Z', true],
    ['2024-05-01/2024-05-31', true],
    ['2024-05-01/P1M', true],
    ['R5/2024-05-01T00:00:00Z/PT1H', true],
    ['R/2024-05-01T00:00:00Z/PT1H', true],
    ['R0/P1D/2024-05-01', true],
    ['2024-05-02T00:00:00Z/2024-05-01T00:00:00Z', false],
    ['2024-05-01T00:00:00Z/2024-05-01T00:00:00.000Z', false],
    ['2024-05-01/2024-05-01', false],
    ['2024-05-01/2024-05-02T00:00:00Z', false],
    ['P1D/P2D', false],
    ['P1D', false],
    ['2024-05-01T00:00:00Z', false],
    ['2024-05-01T00:00:00Z/', false],
    ['/P1D', false],
    ['2024-05-01T00:00:00+01:00/P1D', false],
    ['2024-05-01T00:00:00Z/P1D/P1D', false],
    ['R5', false],
    ['R-1/2024-05-01/P1D', false],
    ['Rx/2024-05-01/P1D', false],
    ['R5/R5/2024-05-01/P1D', false],
    ['R5/P1D', false],
    ['2024-02-30/P1D', false],
    ['', false]
  ]
  for (const [value, valid] of cases) {
    t.equal(isInterval(value), valid, JSON.stringify(value))
    t.equal(ajvAccepts('interval', value), valid, `${JSON.stringify(value)} through Ajv`)
  }
})
