import { parse as parseArray } from 'postgres-array'
import { parseTimestamptz } from '../parsers.js'
import type { FieldKind } from './columns.js'

/**
 * A column's value from its text form (`value::text` in the session's ISO DateStyle), as the
 * drivers read the column itself (store/parsers.ts), before `rowDecoder`: how a row kept as
 * text (an outbox's snapshot of a written entity) comes back exactly as a read would give it.
 */
export function fromText (kind: FieldKind, text: string): unknown {
  switch (kind) {
    case 'date-time': return parseTimestamptz(text)
    case 'int32': return Number.parseInt(text, 10)
    case 'number': return Number.parseFloat(text)
    case 'boolean': return text === 'true' || text === 't'
    // A text[] literal such as {a,"b c",NULL}, read as both drivers read a text[] column.
    case 'string-array': return parseArray(text)
    case 'json': return JSON.parse(text)
    // text, enum, date (YYYY-MM-DD), decimal (numeric's digits) and int64 (rowDecoder's string) as written.
    default: return text
  }
}
