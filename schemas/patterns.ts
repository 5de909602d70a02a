import type { DecimalDigits } from './keywords.js'
import { CRON_FIELDS, type CronField } from './validators/cron.js'
import { INT64_MAX, INT64_MIN, compareDecimal, parseDecimal } from './validators/number.js'

/*
 * Regular expressions of the convention's formats, for interface documents: a standard
 * JSON Schema validator knows `date-time` but not that the convention wants UTC with three
 * fraction digits or none, and does not know `decimal`, `int64`, `duration` or `cron` at all.
 * A pattern beside the format makes such a validator refuse what the service refuses.
 * The service itself keeps its linear-time validators (validators/): a route schema gets no
 * pattern, which Ajv would run as well, and whose error would speak for the field in place
 * of the format's plainer message. Every pattern accepts every value the validator accepts
 * (property-tested against it); where a regular expression cannot say all the validator
 * checks, `unchecked` says what is left to the format.
 */

/** A pattern (ECMA-262, the dialect of JSON Schema and OpenAPI 3.1) for a string schema. */
export interface FormatPattern {
  pattern: string
  /** What the format checks and the pattern does not; absent when the pattern is exact. */
  unchecked?: string
}

type Json = Record<string, unknown>

const YEAR = '(?!0000)\\d{4}'
// Gregorian leap years: a multiple of 4 that does not end in 00, or a multiple of 400.
const LEAP_YEAR = '(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)'
const MONTH_DAY = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))'
/** `YYYY-MM-DD` of a real day of the years 0001–9999 (validators/date-time.ts). */
const DATE = `(?:${YEAR}-${MONTH_DAY}|(?!0000)${LEAP_YEAR}-02-29)`
/** UTC, seconds precision or exactly three fraction digits, no leap second. */
const DATE_TIME = `${DATE}T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{3})?Z`

/**
 * ISO 8601 duration (validators/duration.ts): designators once each and in order, `T` only
 * before a time component, a fraction only on the last component (the one followed by `end`).
 */
function duration (end: string): string {
  const part = (designator: string): string => `(?:\\d+(?:\\.\\d+(?=${designator}${end}))?${designator})?`
  return `P(?!${end})${['Y', 'M', 'W', 'D'].map(part).join('')}(?:T(?!${end})${['H', 'M', 'S'].map(part).join('')})?`
}

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48
const span = (lo: number, hi: number): string => lo === hi ? String(lo) : `[${lo}-${hi}]`
const rest = (n: number): string => n === 0 ? '' : n === 1 ? '\\d' : `\\d{${n}}`

/** Integers below `n` (digits without a leading zero), as alternatives. */
function integersBelow (n: string): string[] {
  const k = n.length
  const out = k > 1 ? ['0', `[1-9]${k > 2 ? `\\d{0,${k - 2}}` : ''}`] : []
  for (let p = 0; p < k; p++) {
    const lo = p === 0 && k > 1 ? 1 : 0
    const hi = digit(n, p) - 1
    if (hi >= lo) out.push(n.slice(0, p) + span(lo, hi) + rest(k - p - 1))
  }
  return out
}

/** Integers above `n`, as alternatives. */
function integersAbove (n: string): string[] {
  const k = n.length
  const out = [`[1-9]\\d{${k},}`]
  for (let p = 0; p < k; p++) {
    const lo = digit(n, p) + 1
    if (lo <= 9) out.push(n.slice(0, p) + span(lo, 9) + rest(k - p - 1))
  }
  return out
}

/** Fraction digits `f` with 0.f ≤ 0.`frac` (`frac` without trailing zeros). */
function fractionsAtMost (frac: string): string {
  if (frac === '') return '0+'
  const out: string[] = []
  for (let p = 0; p < frac.length; p++) {
    const d = digit(frac, p)
    if (d > 0) out.push(`${frac.slice(0, p)}${span(0, d - 1)}\\d*`)
    if (p > 0) out.push(frac.slice(0, p))
  }
  out.push(`${frac}0*`)
  return out.join('|')
}

/** Fraction digits `f` with 0.f ≥ 0.`frac` (`frac` without trailing zeros, not empty). */
function fractionsAtLeast (frac: string): string {
  const out: string[] = []
  for (let p = 0; p < frac.length; p++) {
    const d = digit(frac, p)
    if (d < 9) out.push(`${frac.slice(0, p)}${span(d + 1, 9)}\\d*`)
  }
  out.push(`${frac}\\d*`)
  return out.join('|')
}

const ANY_FRACTION = '(?:\\.\\d+)?'

/**
 * Unsigned decimals whose value is at most (`below`) or at least the magnitude
 * `integer.fraction`; `fractions` false when the values are whole numbers.
 */
function magnitude (integer: string, fraction: string, below: boolean, fractions: boolean): string {
  const frac = fraction.replace(/0+$/, '')
  const any = fractions ? ANY_FRACTION : ''
  const others = (below ? integersBelow(integer) : integersAbove(integer)).map(i => i + any)
  // The bound's own integer part, followed by a fraction on the right side of the bound's.
  let equal: string | undefined
  if (!fractions) equal = below || frac === '' ? integer : undefined
  else if (below) equal = `${integer}(?:\\.(?:${fractionsAtMost(frac)}))?`
  else equal = frac === '' ? integer + ANY_FRACTION : `${integer}\\.(?:${fractionsAtLeast(frac)})`
  return [...others, ...(equal === undefined ? [] : [equal])].join('|')
}

/**
 * Decimal strings (already of the grammar) at most / at least `limit`: a lookahead. With
 * `signed` false the values have no sign, so the branch of negative values is left out.
 */
function bound (limit: string, atMost: boolean, signed: boolean, fractions: boolean): string {
  const p = parseDecimal(limit) as { negative: boolean, integer: string, fraction: string }
  // For a negative bound the order of magnitudes is the other way round.
  const same = `${p.negative ? '-' : ''}(?:${magnitude(p.integer, p.fraction, atMost !== p.negative, fractions)})`
  // Every negative value is below a bound ≥ 0, every non-negative one above a bound < 0.
  const other = atMost && !p.negative ? (signed ? '-\\d[\\d.]*' : '') : !atMost && p.negative ? '\\d[\\d.]*' : ''
  return `(?=(?:${[other, same].filter(s => s !== '').join('|')})$)`
}

interface NumberLimits { minimum?: string, maximum?: string, digits?: DecimalDigits }

/** Decimal strings within the limits (validators/number.ts, keywords.ts). */
function decimalPattern ({ minimum, maximum, digits = {} }: NumberLimits): string {
  const signed = minimum === undefined || compareDecimal(minimum, '0') < 0
  const integer = digits.integer === undefined ? '(?:0|[1-9]\\d*)' : digits.integer === 1 ? '\\d' : `(?:0|[1-9]\\d{0,${digits.integer - 1}})`
  const fractions = digits.fraction !== 0
  const fraction = !fractions ? '' : digits.fraction === undefined ? ANY_FRACTION : `(?:\\.\\d{1,${digits.fraction}})?`
  const lower = minimum !== undefined && compareDecimal(minimum, '0') !== 0 ? bound(minimum, false, signed, fractions) : ''
  const upper = maximum === undefined ? '' : bound(maximum, true, signed, fractions)
  // Negative zero is refused: zero is written one way, without a sign.
  const sign = signed ? '(?!-0(?:\\.0+)?$)-?' : ''
  return `^${lower}${upper}${sign}${integer}${fraction}$`
}

const tighter = (a: string | undefined, b: string, atMost: boolean): string =>
  a === undefined || (atMost ? compareDecimal(a, b) > 0 : compareDecimal(a, b) < 0) ? b : a

/** A cron number from `min` (0 or 1, as every field starts) to `max`: one digit, or two with a leading zero allowed. */
function cronNumber (min: number, max: number): string {
  const single = [span(min, Math.min(max, 9))]
  const lo = String(min).padStart(2, '0')
  const hi = String(max).padStart(2, '0')
  const tens: string[] = []
  const [t0, u0, t1, u1] = [digit(lo, 0), digit(lo, 1), digit(hi, 0), digit(hi, 1)]
  if (t0 === t1) tens.push(`${t0}${span(u0, u1)}`)
  else {
    tens.push(`${t0}${span(u0, 9)}`)
    if (t1 - t0 > 1) tens.push(`${span(t0 + 1, t1 - 1)}\\d`)
    tens.push(`${t1}${span(0, u1)}`)
  }
  return [...single, ...tens].join('|')
}

function cronItem (field: CronField): string {
  const value = `(?:${[cronNumber(field.min, field.max), ...(field.names ?? [])].join('|')})`
  const step = `(?:/(?:${cronNumber(1, field.max)}))`
  return `(?:\\*${step}?|${value}(?:-${value}${step}?)?)`
}

/** Five fields of comma lists, one space apart (validators/cron.ts); range order left to the format. */
const CRON = CRON_FIELDS.map(f => `${cronItem(f)}(?:,${cronItem(f)})*`).join(' ')

const INTERVAL_DURATION = duration('(?:/|$)')
const INTERVAL = `(?:R\\d*/)?(?:${DATE_TIME}/(?:${DATE_TIME}|${INTERVAL_DURATION})|${DATE}/(?:${DATE}|${INTERVAL_DURATION})|${INTERVAL_DURATION}/(?:${DATE_TIME}|${DATE}))`

/** `{namespace}:{entity}:{sub-entity}:{id}`, 255 characters at most (validators/ref.ts). */
const REF = '(?=.{1,255}$)[a-z]{1,10}:[a-z0-9]{1,20}:[a-z0-9]{0,20}:[A-Za-z0-9._~-]+'

const FIXED: Readonly<Record<string, FormatPattern>> = {
  date: { pattern: `^${DATE}$` },
  'date-time': { pattern: `^${DATE_TIME}$` },
  duration: { pattern: `^${duration('$')}$` },
  cron: { pattern: `^${CRON}$`, unchecked: 'that each range runs upward (a-b with a ≤ b)' },
  interval: { pattern: `^${INTERVAL}$`, unchecked: 'that the start comes before the end' },
  'svc-ref': { pattern: `^${REF}$` }
}

/**
 * The pattern of a string schema with one of the convention's formats, from its format and,
 * for decimals and 64-bit integers, its `decimalDigits`, `decimalMinimum` and
 * `decimalMaximum` keywords (as the `Decimal`, `Percentage` and `Int64` builders write
 * them). Undefined for any other schema.
 */
export function formatPattern (schema: Json): FormatPattern | undefined {
  const format = schema.format
  if (typeof format !== 'string') return undefined
  const min = typeof schema.decimalMinimum === 'string' ? schema.decimalMinimum : undefined
  const max = typeof schema.decimalMaximum === 'string' ? schema.decimalMaximum : undefined
  if (format === 'decimal') return { pattern: decimalPattern({ minimum: min, maximum: max, digits: schema.decimalDigits as DecimalDigits | undefined }) }
  if (format === 'int64') {
    return {
      pattern: decimalPattern({
        minimum: tighter(min, String(INT64_MIN), false),
        maximum: tighter(max, String(INT64_MAX), true),
        digits: { integer: 19, fraction: 0 }
      })
    }
  }
  return FIXED[format]
}
