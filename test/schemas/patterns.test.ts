import t from 'tap'
import fc from 'fast-check'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { TSchema } from '@sinclair/typebox'
import { formatPattern } from '../../schemas/patterns.js'
import { CronSchedule, DateOnly, DateTime, Decimal, Duration, Int64, Interval, Percentage } from '../../schemas/types.js'
import { INT64_MAX, INT64_MIN } from '../../schemas/validators/number.js'
import { makeAjv, pad } from './helper.js'

// The documented pattern of each convention format against the service's own validator: a
// standard JSON Schema validator that knows none of the convention's formats or keywords,
// given the schema as the document shows it (type, lengths, pattern), accepts exactly what
// the service accepts; where the pattern is not exact, at least everything it accepts.

const service = makeAjv()
const standard = new Ajv2020({ strict: false, validateFormats: false })

type Json = Record<string, unknown>

interface Pair { serviceAccepts: (v: string) => boolean, documentAccepts: (v: string) => boolean }

/** The service's validator of `schema`, and a standard one of its documented form. */
function pair (schema: TSchema | Json): Pair {
  const json = schema as Json
  const documented = formatPattern(json)
  if (documented === undefined) throw new Error(`no pattern for ${JSON.stringify(schema)}`)
  const { minLength, maxLength } = json
  const s = service.compile(json)
  const d = standard.compile({ type: 'string', minLength, maxLength, pattern: documented.pattern })
  return { serviceAccepts: (v) => s(v), documentAccepts: (v) => d(v) }
}

/** The property: both agree (`exact`), or the document accepts whatever the service does. */
function agrees (p: Pair, exact: boolean): (v: string) => boolean {
  return (v) => exact ? p.serviceAccepts(v) === p.documentAccepts(v) : !p.serviceAccepts(v) || p.documentAccepts(v)
}

/** `value` with one character replaced, inserted or removed at `at` (modulo its length). */
const mutated = (base: fc.Arbitrary<string>, chars: string): fc.Arbitrary<string> =>
  fc.tuple(base, fc.nat(), fc.constantFrom(...chars.split('')), fc.constantFrom('replace', 'insert', 'remove')).map(([s, at, c, how]) => {
    const i = at % (s.length + 1)
    if (how === 'insert') return s.slice(0, i) + c + s.slice(i)
    return s.slice(0, i) + (how === 'replace' ? c : '') + s.slice(i + 1)
  })

const RUNS = { numRuns: 2000 }

t.test('date-time and date: the pattern is exact, calendar and UTC included', async t => {
  const dateTime = pair(DateTime())
  const date = pair(DateOnly())
  // Every field over a wider range than valid, so days past the month's end and Feb 29 come up.
  const fields = fc.record({
    y: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 1900, 2000, 2023, 2024, 2100, 2400, 9999)),
    m: fc.integer({ min: 0, max: 13 }),
    d: fc.integer({ min: 0, max: 32 }),
    h: fc.integer({ min: 0, max: 25 }),
    min: fc.integer({ min: 0, max: 61 }),
    s: fc.integer({ min: 0, max: 61 }),
    ms: fc.constantFrom('', '.000', '.5', '.12', '.1234', '.999'),
    zone: fc.constantFrom('Z', 'Z', 'Z', 'z', '+00:00', '+01:00', '')
  })
  const text = fields.map(f => `${pad(f.y, 4)}-${pad(f.m, 2)}-${pad(f.d, 2)}T${pad(f.h, 2)}:${pad(f.min, 2)}:${pad(f.s, 2)}${f.ms}${f.zone}`)
  fc.assert(fc.property(text, agrees(dateTime, true)), RUNS)
  fc.assert(fc.property(mutated(text, '0123456789T:-.Zt '), agrees(dateTime, true)), RUNS)
  const day = fields.map(f => `${pad(f.y, 4)}-${pad(f.m, 2)}-${pad(f.d, 2)}`)
  fc.assert(fc.property(day, agrees(date, true)), RUNS)
  fc.assert(fc.property(mutated(day, '0123456789-/ '), agrees(date, true)), RUNS)
  // Leap years, exhaustively: Feb 29 of every year.
  for (let y = 0; y <= 9999; y++) {
    const v = `${pad(y, 4)}-02-29`
    if (date.serviceAccepts(v) !== date.documentAccepts(v)) t.fail(v)
  }
  for (const v of ['2024-02-29T12:00:00Z', '2023-02-29T12:00:00Z', '2000-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '0000-01-01T00:00:00Z']) {
    t.equal(dateTime.documentAccepts(v), dateTime.serviceAccepts(v), v)
  }
})

/** A decimal `n / 10^scale` written with `scale` fraction digits. */
function write (n: bigint, scale: number): string {
  const negative = n < 0n
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0')
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return negative ? `-${text}` : text
}

const decimal = (max: bigint): fc.Arbitrary<string> =>
  fc.tuple(fc.bigInt({ min: -max, max }), fc.integer({ min: 0, max: 5 })).map(([n, scale]) => write(n, scale))
const decimalChars = fc.string({ unit: fc.constantFrom('-', '.', '0', '0', '1', '5', '9', '+', 'e'), maxLength: 12 })

t.test('decimal: digits, sign and bounds, exact', async t => {
  const schemas = [
    Decimal(),
    Decimal({ maxIntegerDigits: 15, maxFractionDigits: 4 }),
    Decimal({ maxIntegerDigits: 1, maxFractionDigits: 0 }),
    Percentage(),
    Decimal({ minimum: '-10.5', maximum: '20.25' }),
    Decimal({ minimum: '0.05' }),
    Decimal({ maximum: '-0.5', maxFractionDigits: 2 })
  ]
  for (const schema of schemas) {
    const p = pair(schema)
    fc.assert(fc.property(fc.oneof(decimal(100000n), decimalChars, mutated(decimal(1000n), '-.09')), agrees(p, true)), RUNS)
  }
  t.pass()
})

t.test('decimal: random bounds against values near them, exact', async t => {
  const bounds = fc.tuple(decimal(10n ** 8n), decimal(10n ** 8n), fc.option(fc.integer({ min: 1, max: 6 })), fc.option(fc.integer({ min: 0, max: 4 })))
  fc.assert(fc.property(bounds, fc.array(fc.oneof(decimal(10n ** 8n), decimalChars), { minLength: 20, maxLength: 20 }), ([a, b, int, frac], values) => {
    const [minimum, maximum] = service.compile({ type: 'string', decimalMaximum: b })(a) ? [a, b] : [b, a]
    const options = { minimum, maximum, ...(int === null ? {} : { maxIntegerDigits: int }), ...(frac === null ? {} : { maxFractionDigits: frac }) }
    const p = pair(Decimal(options))
    // The bounds, each with any one digit changed to any other, one more or one less digit, the other sign.
    const near = [minimum, maximum].flatMap(v => [
      v, `${v}0`, `${v}9`, v.slice(0, -1), v.startsWith('-') ? v.slice(1) : `-${v}`,
      ...[...v].flatMap((c, i) => /\d/.test(c) ? [...'0123456789'].map(d => v.slice(0, i) + d + v.slice(i + 1)) : [])
    ])
    return [...values, ...near].every(agrees(p, true))
  }), { numRuns: 300 })
  t.pass()
})

t.test('int64: no leading zero, no negative zero, the 64-bit range and the bounds, exact', async t => {
  const near = (v: bigint): fc.Arbitrary<string> => fc.integer({ min: -3, max: 3 }).map(d => String(v + BigInt(d)))
  const int = fc.oneof(fc.bigInt({ min: INT64_MIN * 2n, max: INT64_MAX * 2n }).map(String), near(INT64_MAX), near(INT64_MIN), near(0n), decimalChars)
  for (const schema of [Int64(), Int64({ minimum: '0' }), Int64({ minimum: -5n, maximum: 1000n }), Int64({ maximum: '-3' })]) {
    fc.assert(fc.property(fc.oneof(int, mutated(int, '-09.')), agrees(pair(schema), true)), RUNS)
  }
  t.pass()
})

t.test('duration: exact', async t => {
  const p = pair(Duration())
  const component = fc.tuple(fc.nat({ max: 99 }), fc.option(fc.nat({ max: 99 })), fc.constantFrom('Y', 'M', 'W', 'D', 'T', 'H', 'S', 'M'))
    .map(([n, f, d]) => d === 'T' ? 'T' : `${n}${f === null ? '' : `.${f}`}${d}`)
  const text = fc.array(component, { maxLength: 6 }).map(parts => `P${parts.join('')}`)
  const chars = fc.string({ unit: fc.constantFrom('P', 'T', 'Y', 'M', 'W', 'D', 'H', 'S', '1', '0', '.'), maxLength: 10 })
  fc.assert(fc.property(fc.oneof(text, chars, mutated(text, 'PTYMWDHS1.')), agrees(p, true)), RUNS)
  t.pass()
})

const CRON_SPECS = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]] as const
const NAMES = [[], [], [], ['JAN', 'JUN', 'DEC'], ['SUN', 'WED', 'SAT']] as const

t.test('cron: accepts every schedule the service does; exact without ranges', async t => {
  const p = pair(CronSchedule())
  const value = (i: number): fc.Arbitrary<string> => fc.oneof(
    fc.integer({ min: 0, max: 70 }).map(String),
    fc.integer({ min: 0, max: 9 }).map(n => `0${n}`),
    ...(NAMES[i]?.length === 0 ? [] : [fc.constantFrom(...NAMES[i] as readonly string[], 'MON-FRI', 'jan', 'MONDAY')])
  )
  const item = (i: number): fc.Arbitrary<string> => fc.oneof(
    fc.constant('*'),
    fc.tuple(value(i), fc.option(value(i)), fc.option(fc.integer({ min: 0, max: 70 }))).map(([a, b, s]) => `${a}${b === null ? '' : `-${b}`}${s === null ? '' : `/${s}`}`),
    fc.integer({ min: 0, max: 70 }).map(s => `*/${s}`)
  )
  const schedule = fc.tuple(...CRON_SPECS.map((_, i) => fc.array(item(i), { minLength: 1, maxLength: 3 }).map(items => items.join(','))))
    .map(fields => fields.join(' '))
  const all = fc.oneof(schedule, mutated(schedule, ' ,-/*0'))
  fc.assert(fc.property(all, agrees(p, false)), RUNS)
  // Without a range the only rule the pattern leaves out cannot apply.
  fc.assert(fc.property(all.filter(s => !s.includes('-')), agrees(p, true)), RUNS)
  t.notOk(p.serviceAccepts('5-1 * * * *'))
  t.ok(p.documentAccepts('5-1 * * * *'), 'a reversed range is the one thing left to the format')
  t.equal(formatPattern(CronSchedule())?.unchecked, 'that each range runs upward (a-b with a ≤ b)')
})

t.test('interval: accepts every interval the service does; start before end left to the format', async t => {
  const p = pair(Interval())
  const instant = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  const side = fc.oneof(
    instant.map(d => d.toISOString()),
    instant.map(d => `${d.toISOString().slice(0, 19)}Z`),
    instant.map(d => d.toISOString().slice(0, 10)),
    fc.constantFrom('P1D', 'PT1H', 'P1Y2M3DT4H5M6.5S', 'P2W', 'P1.5D', 'PT', 'P')
  )
  const interval = fc.tuple(fc.constantFrom('', 'R/', 'R5/', 'R12/'), side, side).map(([r, a, b]) => `${r}${a}/${b}`)
  fc.assert(fc.property(fc.oneof(interval, mutated(interval, '0123456789/RPTZ:-.')), agrees(p, false)), RUNS)
  t.notOk(p.serviceAccepts('2024-05-02/2024-05-01'))
  t.ok(p.documentAccepts('2024-05-02/2024-05-01'), 'the order of the ends is left to the format')
  t.notOk(p.documentAccepts('2024-05-01/2024-05-02T00:00:00Z'), 'a date with a date-time is refused by the pattern too')
  t.notOk(p.documentAccepts('P1D/P2D'), 'two durations too')
  t.equal(formatPattern(Interval())?.unchecked, 'that the start comes before the end')
})

t.test('svc-ref: exact', async t => {
  const p = pair({ type: 'string', format: 'svc-ref', maxLength: 255 })
  const part = (chars: string, max: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...chars.split('')), maxLength: max })
  const ref = fc.tuple(part('abcz', 12), part('ab09', 22), part('ab09', 22), part('aZ09._~-:', 130)).map(parts => parts.join(':'))
  fc.assert(fc.property(fc.oneof(ref, mutated(ref, 'A:9 ')), agrees(p, true)), RUNS)
  t.pass()
})

t.test('formats without a pattern of their own', async t => {
  t.equal(formatPattern({ type: 'string' }), undefined)
  t.equal(formatPattern({ type: 'string', format: 'email' }), undefined)
  t.equal(formatPattern({ type: 'string', format: 'date-time' })?.unchecked, undefined, 'an exact pattern leaves nothing to the format')
})
