import { readDigits } from './chars.js'

export interface CronField {
  min: number
  max: number
  /** Names standing for `min`, `min + 1`, … (upper case, as in the enum rule). */
  names?: readonly string[]
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

/** The five fields in order; their bounds and names also give the documented pattern (schemas/patterns.ts). */
export const CRON_FIELDS: readonly CronField[] = [
  { min: 0, max: 59 }, // minute
  { min: 0, max: 23 }, // hour
  { min: 1, max: 31 }, // day of month
  { min: 1, max: 12, names: MONTHS }, // month
  { min: 0, max: 7, names: WEEKDAYS } // weekday, 0 and 7 are Sunday
]

/** One or two digits (cron values never exceed 59). */
function readNumber (s: string): number {
  return s.length >= 1 && s.length <= 2 ? readDigits(s, 0, s.length) : -1
}

function readValue (s: string, field: CronField): number {
  const named = field.names?.indexOf(s) ?? -1
  if (named >= 0) return field.min + named
  const v = readNumber(s)
  return v >= field.min && v <= field.max ? v : -1
}

/** `*`, `n`, `a-b` (a ≤ b), and `/step` (1 ≤ step ≤ the field's maximum) after `*` or a range. */
function isItem (item: string, field: CronField): boolean {
  const slash = item.indexOf('/')
  const base = slash < 0 ? item : item.slice(0, slash)
  if (slash >= 0) {
    const step = readNumber(item.slice(slash + 1))
    if (step < 1 || step > field.max) return false
  }
  if (base === '*') return true
  const dash = base.indexOf('-')
  if (dash < 0) return slash < 0 && readValue(base, field) >= 0
  const from = readValue(base.slice(0, dash), field)
  const to = readValue(base.slice(dash + 1), field)
  return from >= 0 && to >= from
}

/**
 * A five-field cron schedule `minute hour day-of-month month weekday` (conventions:
 * "Schedule"). Fields are separated by exactly one space, with no leading or trailing
 * whitespace: a producer writes one canonical form, so `0  9 * * *` is refused. Each field
 * is a comma list of items; months take `JAN`–`DEC`, weekdays `SUN`–`SAT` (upper case).
 * No seconds field, no `?`, `L`, `W`, `#` and no `@daily` macros.
 */
export function isCron (s: string): boolean {
  const fields = s.split(' ')
  if (fields.length !== CRON_FIELDS.length) return false
  return fields.every((text, i) => text.split(',').every(item => isItem(item, CRON_FIELDS[i] as CronField)))
}
