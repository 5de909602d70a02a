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

/**
 * The values of a record's columns, read by code made for the columns: each property read in
 * a place of its own, where V8 learns the rows' one shape, rather than by a path walked with
 * keys that change from column to column (as many shapes as columns in one place, slow).
 * A step through anything but an object reads `undefined`.
 */
type Reader = (item: unknown) => unknown[]
// By the columns' paths, so that a caller that makes its columns again for each page
// (`columnsOf` per request) still compiles its reader once; schemas are few, and so are these.
// The array the plugin keeps per route finds its reader without making that key each page.
const readers = new Map<string, Reader>()
const byArray = new WeakMap<readonly Column[], Reader>()

function readerOf (columns: readonly Column[]): Reader {
  let reader = byArray.get(columns)
  if (reader !== undefined) return reader
  const key = JSON.stringify(columns.map((c) => c.path))
  reader = readers.get(key)
  if (reader === undefined) {
    const read = (path: readonly string[]): string => path.reduce((from, key) =>
      `((v = ${from}), typeof v === 'object' && v !== null ? v[${JSON.stringify(key)}] : undefined)`, 'item')
    // Names quoted by JSON.stringify: the code holds no text of the schema's unquoted.
    // eslint-disable-next-line no-new-func
    reader = new Function('item', `let v\nreturn [${columns.map((c) => read(c.path)).join(',\n')}]`) as Reader
    readers.set(key, reader)
  }
  byArray.set(columns, reader)
  return reader
}

/**
 * The header row and one record per item, each ended by CRLF. Joined from arrays rather than
 * added to one string field by field: a string built by `+=` is thousands of pieces, which the
 * ETag's hash and the socket's write then copy into one again.
 */
export function writeCsv (columns: readonly Column[], items: readonly unknown[], separator = '|'): string {
  const records = new Array<string>(items.length + 2)
  records[0] = columns.map((c) => quoteField(c.name)).join(',')
  const read = readerOf(columns)
  let n = 1
  for (const item of items) {
    const fields = read(item)
    for (let i = 0; i < fields.length; i++) fields[i] = quoteField(fieldText(fields[i], separator))
    const record = fields.join(',')
    // A record of one empty field would be a blank line, which readers skip: quote it.
    records[n++] = record === '' ? '""' : record
  }
  // The last, empty, ends the last record with its CRLF.
  records[n] = ''
  return records.join('\r\n')
}
