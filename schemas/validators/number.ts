import { isDigit } from './chars.js'

/** A decimal string split into its parts; `integer` has no leading zero, `fraction` may be empty. */
export interface DecimalParts {
  negative: boolean
  integer: string
  fraction: string
}

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/**
 * Parses the convention's decimal string (conventions: "Decimal" is a string, never a
 * number): optional `-`, digits without a leading zero (a single `0` is fine), optional
 * `.` followed by at least one digit. No `+`, no exponent, no spaces. Negative zero
 * (`-0`, `-0.00`) is refused: a producer writes zero one way, without a sign.
 */
export function parseDecimal (s: string): DecimalParts | undefined {
  const n = s.length
  const negative = s.charCodeAt(0) === 45
  let i = negative ? 1 : 0
  const intStart = i
  while (i < n && isDigit(s.charCodeAt(i))) i++
  const intLength = i - intStart
  if (intLength === 0 || (intLength > 1 && s.charCodeAt(intStart) === 48)) return undefined
  const integer = s.slice(intStart, i)
  let fraction = ''
  if (i < n) {
    if (s.charCodeAt(i) !== 46) return undefined
    const fracStart = ++i
    while (i < n && isDigit(s.charCodeAt(i))) i++
    if (i < n || i === fracStart) return undefined
    fraction = s.slice(fracStart)
  }
  if (negative && integer === '0' && isZeros(fraction)) return undefined
  return { negative, integer, fraction }
}

function isZeros (s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== 48) return false
  return true
}

export function isDecimal (s: string): boolean {
  return parseDecimal(s) !== undefined
}

/** An integer string in [-2^63, 2^63-1], written like a decimal without fraction (conventions: "Integer"). */
export function isInt64 (s: string): boolean {
  const p = parseDecimal(s)
  if (p === undefined || p.fraction !== '' || p.integer.length > 19) return false
  const v = BigInt(s)
  return v >= INT64_MIN && v <= INT64_MAX
}

function compareMagnitude (a: DecimalParts, b: DecimalParts): number {
  // Without leading zeros, the longer integer part is the larger one.
  if (a.integer.length !== b.integer.length) return a.integer.length < b.integer.length ? -1 : 1
  if (a.integer !== b.integer) return a.integer < b.integer ? -1 : 1
  const width = Math.max(a.fraction.length, b.fraction.length)
  const fa = a.fraction.padEnd(width, '0')
  const fb = b.fraction.padEnd(width, '0')
  return fa < fb ? -1 : fa > fb ? 1 : 0
}

/**
 * Orders two decimal strings exactly (no floating point): negative, zero or positive.
 * `"10.50"` equals `"10.5"`. Throws a TypeError when either is not a decimal string.
 */
export function compareDecimal (a: string, b: string): number {
  const pa = parseDecimal(a)
  const pb = parseDecimal(b)
  if (pa === undefined || pb === undefined) throw new TypeError(`compareDecimal: ${JSON.stringify(pa === undefined ? a : b)} is not a decimal string`)
  // Negative zero is refused by the parser, so a negative value is below every other.
  if (pa.negative !== pb.negative) return pa.negative ? -1 : 1
  const m = compareMagnitude(pa, pb)
  return pa.negative ? -m : m
}
