import type { Column } from './columns.js'

/*
 * RFC 4180 text: fields separated by commas, records ended by CRLF, a field quoted when it
 * holds a comma, a quote, CR or LF, and a quote inside a quoted field doubled. Written by
 * hand rather than with a library: a page is a few thousand fields, and this loop is the
 * whole cost; test/csv/write.test.ts reads generated pages back with csv-parse.
 */

const NEEDS_QUOTES = /[",\r\n]/
const QUOTE = /"/g

/** One field as RFC 4180 writes it. */
export function quoteField (text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(QUOTE, '""')}"` : text
}

/** The text of one value: null and absent empty, arrays joined by `separator`, objects as JSON. */
export function fieldText (value: unknown, separator: string): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (Array.isArray(value)) return value.map((v) => fieldText(v, separator)).join(separator)
  return JSON.stringify(value)
}

function valueAt (item: unknown, path: readonly string[]): unknown {
  let value = item
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** The header row and one record per item, each ended by CRLF. */
export function writeCsv (columns: readonly Column[], items: readonly unknown[], separator = '|'): string {
  let out = columns.map((c) => quoteField(c.name)).join(',') + '\r\n'
  for (const item of items) {
    let line = ''
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) line += ','
      line += quoteField(fieldText(valueAt(item, (columns[i] as Column).path), separator))
    }
    // A record of one empty field would be a blank line, which readers skip: quote it.
    out += (line === '' ? '""' : line) + '\r\n'
  }
  return out
}
