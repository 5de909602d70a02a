// One text → value mapping for both engines, so a row reads the same whatever runs it.
// pg parses int8 as a string and `date` as a local-midnight Date; PGlite parses int8 as
// a number (a BigInt beyond 2^53, which JSON cannot serialize) and `date` as a UTC Date. Both
// would make a Date of a timestamptz, only for the API to write it back as text.

/** PostgreSQL type oids (pg_type.oid). */
export const OID = { int8: 20, date: 1082, timestamptz: 1184, int8Array: 1016, dateArray: 1182, textArray: 1009 } as const

/** int8 → number; beyond ±2^53 − 1 the exact decimal string, never a rounded number. */
export function parseInt8 (text: string): number | string {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : text
}

/** date → `'YYYY-MM-DD'` as stored: a calendar date has no time zone to shift it. */
export function parseDate (text: string): string {
  return text
}

// A timestamptz as PostgreSQL writes it (DateStyle ISO): `2024-05-01 12:00:00.12+00`; more
// year digits past 9999; an offset with minutes, even seconds (historic zones), outside UTC.
const TIMESTAMPTZ = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/

/**
 * timestamptz → `YYYY-MM-DDTHH:mm:ss.sssZ`, the convention's date-time, in UTC, to the
 * millisecond (finer digits are cut, as a Date would). Read as text rather than through a Date,
 * which the API would only turn back into this text; the sessions run in UTC, so this is
 * mostly a rearrangement. `infinity`, `-infinity` and BC values stay as PostgreSQL writes them.
 */
export function parseTimestamptz (text: string): string {
  // The form the store's connections write (they run in UTC), with a four-digit year
  // (`2024-05-01 12:00:00.12+00`): cut and joined at fixed places, without the general
  // pattern. The text comes from PostgreSQL.
  const n = text.length
  if (n >= 22 && n <= 29 && text.endsWith('+00') && text[4] === '-' && text[7] === '-' && text[10] === ' ' && text[13] === ':' && text[16] === ':' && (n === 22 || text[19] === '.')) {
    const ms = n === 22 ? '000' : (text.slice(20, n - 3) + '00').slice(0, 3)
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${ms}Z`
  }
  const m = TIMESTAMPTZ.exec(text)
  if (m === null) return text
  const [, y, mo, d, h, mi, s, frac = '', sign, oh, om = '00', os = '00'] = m as unknown as string[]
  const ms = (frac + '000').slice(0, 3)
  if (oh === '00' && om === '00' && os === '00' && y?.length === 4) return `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`
  // Date.UTC would read years 0 to 99 as 1900 to 1999.
  const local = new Date(0)
  local.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  local.setUTCHours(Number(h), Number(mi), Number(s), Number(ms))
  const offset = (sign === '-' ? -1 : 1) * ((Number(oh) * 60 + Number(om)) * 60 + Number(os)) * 1000
  return new Date(local.getTime() - offset).toISOString()
}
