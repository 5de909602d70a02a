import type { FieldDescriptor, FieldType, Scalar } from '../../model/query.js'

/*
 * Text → typed value, by the field's type (conventions: "Serialization rules by type").
 * Character scanning only, no regular expressions, so no input can make them slow.
 * Dates and date-times are checked here rather than with schemas/formats.ts: a filter
 * value must also compare the same way in SQL and in memory, which is why date-times
 * are UTC (`Z`) with at most millisecond precision (the store keeps timestamptz(3)).
 */

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function isDigit (code: number): boolean {
  return code >= 48 && code <= 57
}

/** Length of the run of digits of `text` from `start`. */
function digitRun (text: string, start: number): number {
  let i = start
  while (i < text.length && isDigit(text.charCodeAt(i))) i++
  return i - start
}

/** Optional `-` then digits only. */
function isIntegerText (text: string): boolean {
  const start = text.charCodeAt(0) === 45 ? 1 : 0
  const run = digitRun(text, start)
  return run > 0 && start + run === text.length
}

/** `-?digits(.digits)?`, the suite's decimal string. */
export function isDecimalText (text: string): boolean {
  const start = text.charCodeAt(0) === 45 ? 1 : 0
  const whole = digitRun(text, start)
  if (whole === 0) return false
  let i = start + whole
  if (i === text.length) return true
  if (text.charCodeAt(i) !== 46) return false
  i++
  const fraction = digitRun(text, i)
  return fraction > 0 && i + fraction === text.length
}

function number2 (text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48
}

function daysInMonth (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** `YYYY-MM-DD`, a real calendar day of years 0001–9999. */
export function isDateText (text: string): boolean {
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return false
  if (digitRun(text, 0) !== 4 || digitRun(text, 5) !== 2 || digitRun(text, 8) !== 2) return false
  const year = number2(text, 0) * 100 + number2(text, 2)
  const month = number2(text, 5)
  const day = number2(text, 8)
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/** `YYYY-MM-DDTHH:mm:ss[.s{1,3}]Z`. */
export function isDateTimeText (text: string): boolean {
  if (text.length < 20 || !isDateText(text) || text.charCodeAt(10) !== 84) return false
  if (digitRun(text, 11) !== 2 || text.charCodeAt(13) !== 58 || digitRun(text, 14) !== 2 ||
    text.charCodeAt(16) !== 58 || digitRun(text, 17) !== 2) return false
  if (number2(text, 11) > 23 || number2(text, 14) > 59 || number2(text, 17) > 59) return false
  let i = 19
  if (text.charCodeAt(i) === 46) {
    const fraction = digitRun(text, i + 1)
    if (fraction < 1 || fraction > 3) return false
    i += 1 + fraction
  }
  return i === text.length - 1 && text.charCodeAt(i) === 90
}

/**
 * Converts one filter value to the field's type; `undefined` when the text is not a
 * value of that type. The conversion of a string-array field is that of its elements.
 */
export function parseScalar (field: FieldDescriptor, text: string): Scalar | undefined {
  switch (field.type) {
    case 'string':
    case 'string-array':
      return text
    case 'int32': {
      if (!isIntegerText(text) || text.length > 12) return undefined
      const n = Number(text)
      return n >= INT32_MIN && n <= INT32_MAX ? n + 0 : undefined // `+ 0` turns -0 into 0
    }
    case 'int64': {
      if (!isIntegerText(text) || text.length > 40) return undefined
      const n = BigInt(text)
      return n >= INT64_MIN && n <= INT64_MAX ? text : undefined
    }
    case 'decimal':
      return isDecimalText(text) ? text : undefined
    case 'date':
      return text.length === 10 && isDateText(text) ? text : undefined
    case 'date-time':
      return isDateTimeText(text) ? text : undefined
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined
    case 'enum':
      return field.enumValues?.includes(text) === true ? text : undefined
  }
}

/** What a value of the field must look like, for error messages. */
export function expectation (field: FieldDescriptor): string {
  switch (field.type) {
    case 'int32': return `an integer from ${INT32_MIN} to ${INT32_MAX}`
    case 'int64': return 'a 64-bit integer (digits with an optional minus sign)'
    case 'decimal': return 'a decimal number such as 10.25'
    case 'date': return 'a date such as 2024-01-31'
    case 'date-time': return 'a UTC date-time such as 2024-01-31T12:00:00.000Z'
    case 'boolean': return 'true or false'
    // enum: text values always convert, so they never need an expectation
    default: return `one of ${(field.enumValues ?? []).join(', ')}`
  }
}

const NOUNS: Record<FieldType, string> = {
  string: 'a text',
  int32: 'an integer',
  int64: 'a 64-bit integer',
  decimal: 'a decimal',
  date: 'a date',
  'date-time': 'a date-time',
  boolean: 'a boolean',
  enum: 'an enumerated',
  'string-array': 'an array'
}

/** `an integer attribute`, for error messages. */
export function describeType (type: FieldType): string {
  return `${NOUNS[type]} attribute`
}
