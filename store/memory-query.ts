import type { CollectionQuery, Comparison, FieldDescriptor, FieldMap, FieldType, Filter, KeyValue, Operand, OrderingTerm, Page, Scalar } from '../model/query.js'
import { isWildcard } from '../model/query.js'
import { readPath } from '../model/fields.js'
import type { CaseFolding } from './case-folding.js'
import { finishPage, sortKeyOf } from './finish-page.js'

/*
 * Evaluates a collection query over plain API-shaped objects, with the semantics of
 * store/sql-query.ts: decimals compare numerically (exactly, as text), int64 as BigInt,
 * dates and date-times chronologically, text by code point (PostgreSQL's COLLATE "C");
 * the case-insensitive operators lower-case each code point by its Unicode simple mapping,
 * as ILIKE does under the store's UTF-8 fold collations (store/case-folding.ts), or ASCII
 * letters only when told the store folds under "C"; every operator but `isnull` excludes
 * nulls; in ordering, null is greater than every value.
 */

export type Predicate = (item: unknown) => boolean

/** Code-point order of two strings (JavaScript's `<` compares UTF-16 units instead). */
export function compareCodePoints (a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // Surrogates (U+D800–DFFF) encode code points above U+FFFF: move them above U+E000–FFFF.
    if (x >= 0xD800 && y >= 0xD800) {
      x = x >= 0xE000 ? x - 0x800 : x + 0x2000
      y = y >= 0xE000 ? y - 0x800 : y + 0x2000
    }
    return x < y ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

interface DecimalParts { negative: boolean, whole: string, fraction: string }

function decimalParts (text: string): DecimalParts {
  const negative = text.charCodeAt(0) === 45
  const dot = text.indexOf('.')
  let whole = text.slice(negative ? 1 : 0, dot === -1 ? text.length : dot)
  let fraction = dot === -1 ? '' : text.slice(dot + 1)
  let start = 0
  while (start < whole.length && whole.charCodeAt(start) === 48) start++
  whole = whole.slice(start)
  let end = fraction.length
  while (end > 0 && fraction.charCodeAt(end - 1) === 48) end--
  fraction = fraction.slice(0, end)
  return { negative: negative && (whole !== '' || fraction !== ''), whole, fraction }
}

function compareStrings (a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1
}

/** Exact order of two decimal strings (`-?digits(.digits)?`). */
export function compareDecimals (a: string, b: string): number {
  const x = decimalParts(a)
  const y = decimalParts(b)
  if (x.negative !== y.negative) return x.negative ? -1 : 1
  // Same sign: compare magnitudes — longer whole part first, then digit by digit.
  const magnitude = x.whole.length !== y.whole.length
    ? x.whole.length - y.whole.length
    : compareStrings(x.whole, y.whole) || compareStrings(x.fraction, y.fraction)
  const sign = Math.sign(magnitude)
  return x.negative ? -sign : sign
}

/** Order of two non-null values of a field type. */
export function compareValues (type: FieldType, a: unknown, b: unknown): number {
  switch (type) {
    case 'int32':
      return Math.sign((a as number) - (b as number))
    case 'int64': {
      const x = BigInt(a as string)
      const y = BigInt(b as string)
      return x === y ? 0 : x < y ? -1 : 1
    }
    case 'decimal':
      return compareDecimals(String(a), String(b))
    case 'date-time':
      return Math.sign(Date.parse(a as string) - Date.parse(b as string))
    case 'boolean':
      return Number(a) - Number(b)
    case 'date': // YYYY-MM-DD orders as text
      return compareStrings(a as string, b as string)
    default: // string, enum
      return compareCodePoints(a as string, b as string)
  }
}

export interface MemoryQueryOptions {
  /**
   * How the case-insensitive operators fold case: `'unicode'` (default), or `'ascii'` to agree
   * with a store that folds under "C" (`caseFolding` of store/case-folding.ts says which).
   */
  folding?: CaseFolding
}

/** ASCII-only lower case: what ILIKE does under COLLATE "C". */
function asciiLower (text: string): string {
  let out = ''
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 65 && code <= 90) {
      out += text.slice(from, i) + String.fromCharCode(code + 32)
      from = i + 1
    }
  }
  return from === 0 ? text : out + text.slice(from)
}

const ASCII = /^[\0-\x7F]*$/

/**
 * Unicode simple lower case, code point by code point: what ILIKE does under pg_c_utf8 and the
 * libc C.UTF-8 collations. Code point by code point, as a final Σ is σ there, not ς; where
 * JavaScript's full mapping is longer (İ alone: i and a combining dot), the simple one is its
 * first code point.
 */
export function unicodeLower (text: string): string {
  if (ASCII.test(text)) return asciiLower(text)
  let out = ''
  for (const ch of text) out += String.fromCodePoint(ch.toLowerCase().codePointAt(0) as number)
  return out
}

/** Whether `text` is the segments with anything in between (only `*` wildcards, so leftmost matching is exact). */
function matches (text: string, segments: readonly string[]): boolean {
  const first = segments[0] as string
  if (segments.length === 1) return text === first
  const last = segments[segments.length - 1] as string
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false
  let at = first.length
  const end = text.length - last.length
  for (let s = 1; s < segments.length - 1; s++) {
    const segment = segments[s] as string
    const found = text.indexOf(segment, at)
    if (found === -1 || found + segment.length > end) return false
    at = found + segment.length
  }
  return true
}

function textSegments (node: Comparison): readonly string[] {
  const value = node.values[0] as Operand
  if (isWildcard(value)) return value.wildcard
  const text = value as string
  return node.op === 'contains' ? ['', text, ''] : node.op === 'startswith' ? [text, ''] : ['', text]
}

function fieldOf (fields: FieldMap, path: string): FieldDescriptor {
  const field = fields.get(path)
  if (field === undefined) throw new TypeError(`memory-query: the query names ${path}, which is not in the field map`)
  return field
}

/** A test of one non-null value. */
function valueTest (node: Comparison, field: FieldDescriptor, lower: (text: string) => string): (value: unknown) => boolean {
  const type = field.type
  const first = node.values[0] as Operand
  switch (node.op) {
    case 'eq':
    case 'ne': {
      let test: (value: unknown) => boolean
      if (isWildcard(first)) test = (v) => matches(v as string, first.wildcard)
      else if (type === 'string-array') test = (v) => (v as unknown[]).includes(first)
      else test = (v) => compareValues(type, v, first) === 0
      return node.op === 'eq' ? test : (v) => !test(v)
    }
    case 'lt': return (v) => compareValues(type, v, first) < 0
    case 'le': return (v) => compareValues(type, v, first) <= 0
    case 'gt': return (v) => compareValues(type, v, first) > 0
    case 'ge': return (v) => compareValues(type, v, first) >= 0
    case 'in':
    case 'out': {
      const list = node.values as readonly Scalar[]
      const test = type === 'string-array'
        ? (v: unknown) => (v as unknown[]).some((element) => list.includes(element as Scalar))
        : (v: unknown) => list.some((x) => compareValues(type, v, x) === 0)
      return node.op === 'in' ? test : (v) => !test(v)
    }
    default: {
      const segments = node.ci ? textSegments(node).map(lower) : textSegments(node)
      const test = node.ci ? (v: unknown) => matches(lower(v as string), segments) : (v: unknown) => matches(v as string, segments)
      return node.op === 'notlike' ? (v) => !test(v) : test
    }
  }
}

function predicate (node: Filter, fields: FieldMap, lower: (text: string) => string): Predicate {
  if (node.kind !== 'cmp') {
    const children = node.children.map((child) => predicate(child, fields, lower))
    return node.kind === 'and'
      ? (item) => children.every((test) => test(item))
      : (item) => children.some((test) => test(item))
  }
  const field = fieldOf(fields, node.field)
  const path = field.path
  if (node.op === 'isnull') {
    const wanted = node.values[0] === true
    return (item) => (readPath(item, path) === null) === wanted
  }
  // Every operator but isnull excludes nulls (conventions: "Advanced filtering" 3).
  const test = valueTest(node, field, lower)
  return (item) => {
    const value = readPath(item, path)
    return value !== null && test(value)
  }
}

/** The filter as a test of one item; null matches everything. */
export function compilePredicate (filter: Filter | null, fields: FieldMap, options: MemoryQueryOptions = {}): Predicate {
  return filter === null ? () => true : predicate(filter, fields, options.folding === 'ascii' ? asciiLower : unicodeLower)
}

/** Order of two sort keys (values in `ordering` order); null is greater than every value. */
export function keyComparator (ordering: readonly OrderingTerm[], fields: FieldMap): (a: readonly KeyValue[], b: readonly KeyValue[]) => number {
  const terms = ordering.map((term) => ({ type: fieldOf(fields, term.field).type, sign: term.direction === 'asc' ? 1 : -1 }))
  return (a, b) => {
    for (let i = 0; i < terms.length; i++) {
      const { type, sign } = terms[i] as { type: FieldType, sign: number }
      const x = a[i] ?? null
      const y = b[i] ?? null
      if (x === null && y === null) continue
      const order = x === null ? 1 : y === null ? -1 : compareValues(type, x, y)
      if (order !== 0) return order * sign
    }
    return 0
  }
}

/** One page of `items` for the query, by keyset (cursor) or offset paging. */
export function queryMemory<T> (items: readonly T[], query: CollectionQuery, fields: FieldMap, options: MemoryQueryOptions = {}): Page<T> {
  const test = compilePredicate(query.filter, fields, options)
  const compare = keyComparator(query.ordering, fields)
  const rows = items.filter(test).map((item) => ({ item, key: sortKeyOf(item, query.ordering) }))
  rows.sort((a, b) => compare(a.key, b.key))
  const { paging } = query
  const size = paging.limit + 1 // one more than the page, as the SQL back end fetches
  if (paging.kind === 'offset') {
    return finishPage(rows.slice(paging.offset, paging.offset + size).map((row) => row.item), paging, query.ordering, paging.totalCount ? rows.length : undefined)
  }
  const cursor = paging.cursor
  let fetched = rows.slice(0, size)
  // A cursor with no boundary reads from the collection's end its direction starts at.
  if (cursor !== undefined && cursor.values.length === 0) {
    fetched = cursor.direction === 'next' ? rows.slice(0, size) : rows.slice(Math.max(0, rows.length - size)).reverse()
  } else if (cursor !== undefined) {
    if (cursor.values.length !== query.ordering.length) {
      throw new TypeError(`memory-query: the cursor has ${cursor.values.length} values for an ordering of ${query.ordering.length}`)
    }
    if (cursor.direction === 'next') {
      const start = rows.findIndex((row) => compare(row.key, cursor.values) > 0)
      fetched = start === -1 ? [] : rows.slice(start, start + size)
    } else {
      // Fetched as the SQL back end does: the reversed ordering, then finishPage turns it back.
      let end = rows.findIndex((row) => compare(row.key, cursor.values) >= 0)
      if (end === -1) end = rows.length
      fetched = rows.slice(Math.max(0, end - size), end).reverse()
    }
  }
  return finishPage(fetched.map((row) => row.item), paging, query.ordering)
}
