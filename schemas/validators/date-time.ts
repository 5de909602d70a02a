import { readDigits } from './chars.js'

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Proleptic Gregorian leap year (ISO 8601). */
export function isLeapYear (year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
}

/** Days of `month` (1–12) in `year`. */
export function daysInMonth (year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1] ?? 0
}

/**
 * `YYYY-MM-DD` naming a real calendar day of the years 0001–9999 (conventions: "Date and
 * time"). Year 0000 (1 BC in ISO 8601's proleptic count) is refused: ISO 8601 admits it only
 * by mutual agreement, and PostgreSQL, the suite's store, has no year 0 and would reject it.
 */
export function isDate (s: string): boolean {
  if (s.length !== 10 || s[4] !== '-' || s[7] !== '-') return false
  const year = readDigits(s, 0, 4)
  const month = readDigits(s, 5, 2)
  const day = readDigits(s, 8, 2)
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ` or `YYYY-MM-DDTHH:mm:ssZ`: UTC only, exactly three fraction
 * digits when present, no leap second (conventions: "Date and time" wants UTC and
 * millisecond or second precision; local times and offsets are not used).
 */
export function isDateTime (s: string): boolean {
  const n = s.length
  if ((n !== 20 && n !== 24) || s[10] !== 'T' || s[13] !== ':' || s[16] !== ':' || s[n - 1] !== 'Z') return false
  if (!isDate(s.slice(0, 10))) return false
  const hour = readDigits(s, 11, 2)
  const minute = readDigits(s, 14, 2)
  const second = readDigits(s, 17, 2)
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false
  return n === 20 || (s[19] === '.' && readDigits(s, 20, 3) >= 0)
}

/** A fixed-width key of a valid date-time (seconds form padded to `.000Z`), so keys compare as strings. */
export function dateTimeKey (s: string): string {
  return s.length === 20 ? `${s.slice(0, 19)}.000Z` : s
}

/** Orders two valid date-times: negative, zero or positive. */
export function compareDateTime (a: string, b: string): number {
  const ka = dateTimeKey(a)
  const kb = dateTimeKey(b)
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

/** Orders two valid dates: negative, zero or positive. */
export function compareDate (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
