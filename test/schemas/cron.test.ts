import t from 'tap'
import fc from 'fast-check'
import { isCron } from '../../schemas/validators/cron.js'
import { ajvAccepts } from './helper.js'

interface Spec { min: number, max: number, names?: string[] }
const SPECS: Spec[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] }
]

/** A value of the field, as a number or (for months and weekdays) sometimes as its name. */
function value (spec: Spec, n: number, named: boolean): string {
  const name = spec.names?.[n - spec.min]
  return named && name !== undefined ? name : String(n)
}

function item (spec: Spec): fc.Arbitrary<string> {
  const n = fc.integer({ min: spec.min, max: spec.max })
  const step = fc.integer({ min: 1, max: spec.max })
  return fc.oneof(
    fc.constant('*'),
    step.map(s => `*/${s}`),
    fc.tuple(n, fc.boolean()).map(([v, named]) => value(spec, v, named)),
    fc.tuple(n, n, fc.boolean(), fc.option(step, { nil: undefined })).map(([a, b, named, s]) =>
      `${value(spec, Math.min(a, b), named)}-${value(spec, Math.max(a, b), named)}${s === undefined ? '' : `/${s}`}`)
  )
}

const field = (spec: Spec): fc.Arbitrary<string> => fc.array(item(spec), { minLength: 1, maxLength: 3 }).map(items => items.join(','))
const cron = fc.tuple(...SPECS.map(field))

t.test('cron: generated schedules are accepted', async t => {
  fc.assert(fc.property(cron, fields => isCron(fields.join(' ')) && ajvAccepts('cron', fields.join(' '))))
  t.pass()
})

t.test('cron: a value out of range, a zero step, a reversed range or broken spacing is refused', async t => {
  const at = fc.integer({ min: 0, max: 4 })
  fc.assert(fc.property(cron, at, fc.integer({ min: 1, max: 40 }), (fields, i, over) => {
    const spec = SPECS[i] as Spec
    const broken = [...fields]
    broken[i] = String(spec.max + over)
    const below = [...fields]
    below[i] = spec.min === 0 ? '-1' : '0'
    return !isCron(broken.join(' ')) && !isCron(below.join(' '))
  }))
  fc.assert(fc.property(cron, at, (fields, i) => {
    const zero = [...fields]
    zero[i] = '*/0'
    const spec = SPECS[i] as Spec
    const reversed = [...fields]
    reversed[i] = `${spec.min + 1}-${spec.min}`
    return !isCron(zero.join(' ')) && !isCron(reversed.join(' '))
  }))
  fc.assert(fc.property(cron, at, fc.constantFrom('  ', '\t', ' \t'), (fields, i, gap) => {
    const head = fields.slice(0, i + 1).join(' ')
    const tail = fields.slice(i + 1).join(' ')
    return !isCron(tail === '' ? `${head}${gap}` : `${head}${gap}${tail}`)
  }))
  fc.assert(fc.property(cron, fields => !isCron(fields.slice(0, 4).join(' ')) && !isCron([...fields, '*'].join(' ')) && !isCron(` ${fields.join(' ')}`)))
  t.pass()
})

t.test('cron: named edge cases', async t => {
  const cases: Array<[string, boolean]> = [
    ['* * * * *', true], ['0 9 * * MON-FRI', true], ['0 0 * JAN-MAR MON-FRI', true], ['*/15 * * * *', true],
    ['0-30/5 8-18 1,15 * 1-5', true], ['59 23 31 12 7', true], ['0 0 1 1 0', true], ['05 09 * * *', true],
    ['0 0 * DEC SUN', true], ['0 0 * JAN-DEC/3 *', true], ['0 12 * * SUN,SAT', true],
    ['60 * * * *', false], ['* 24 * * *', false], ['* * 0 * *', false], ['* * 32 * *', false], ['* * * 0 *', false],
    ['* * * 13 *', false], ['* * * * 8', false], ['*/0 * * * *', false], ['*/60 * * * *', false], ['5-1 * * * *', false],
    ['5/10 * * * *', false], ['1-5/ * * * *', false], ['1-5/x * * * *', false], ['*/2/3 * * * *', false], ['1-2-3 * * * *', false],
    ['* * * * SAT-SUN', false], ['* * * jan *', false], ['* * * * mon', false], ['* * * JANUARY *', false], ['* * * * MON-FRIDAY', false],
    ['* * ? * *', false], ['* * L * *', false], ['* * 15W * *', false], ['* * * * 5#3', false], ['@daily', false], ['@reboot', false],
    ['0 0 0 * * *', false], ['* * * *', false], ['*  * * * *', false], [' * * * * *', false], ['* * * * * ', false], ['*\t* * * *', false],
    ['1, * * * *', false], [',1 * * * *', false], ['- * * * *', false], ['100 * * * *', false], ['', false]
  ]
  for (const [value, valid] of cases) {
    t.equal(isCron(value), valid, JSON.stringify(value))
    t.equal(ajvAccepts('cron', value), valid, `${JSON.stringify(value)} through Ajv`)
  }
})
