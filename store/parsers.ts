// One text → value mapping for both engines, so a row reads the same whatever runs it.
// pg parses int8 as a string and `date` as a local-midnight Date; PGlite parses int8 as
// a number (a BigInt beyond 2^53, which JSON cannot serialize) and `date` as a UTC Date.

/** PostgreSQL type oids (pg_type.oid). */
export const OID = { int8: 20, date: 1082, int8Array: 1016, dateArray: 1182, textArray: 1009 } as const

/** int8 → number; beyond ±2^53 − 1 the exact decimal string, never a rounded number. */
export function parseInt8 (text: string): number | string {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : text
}

/** date → `'YYYY-MM-DD'` as stored: a calendar date has no time zone to shift it. */
export function parseDate (text: string): string {
  return text
}
