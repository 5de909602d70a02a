import type { ContextItem } from '../../schemas/problem.js'
import type { CollectionQuery, Filter, OrderingTerm, Paging } from '../../model/query.js'
import type { CollectionRoute } from './route.js'
import type { RequestParams, Source } from './read.js'
import { invalidData, invalidDetail, type ProblemError } from '../problem/index.js'
import { isQueryError, toContextItem } from './errors.js'
import { buildFilter, splitFilterParams } from './filter.js'
import { queryFingerprint, type CursorCodec } from './cursor.js'
import { INT32_MAX } from '../../schemas/types.js'

/*
 * Turns the parameters of a collection request into the query model, checking paging
 * (conventions: "Collection endpoints", "Limits"), filters and ordering with the core,
 * and opening the cursor. Every violation found is reported at once, one context item
 * each; the cursor is opened only when filter and ordering are valid, since it is
 * sealed with their fingerprint.
 */

/** The query of a request, with what its links need. */
export interface ResolvedQuery {
  query: CollectionQuery
  /** Filter and ordering parameters as text, in the order links carry them. */
  links: Array<[string, string]>
  /**
   * The fingerprint the cursor of the request was sealed with; null when no cursor came
   * (the envelope computes it only when it has a link to seal).
   */
  fingerprint: string | null
  /** The filter and ordering parameters exactly as read (source, values and their JSON types): a key for the fingerprint. */
  spelling: string
}

function item (source: Source, field: string, code: string, message: string, value: unknown): ContextItem {
  const out: ContextItem = { code, message, field, source }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out.value = String(value)
  return out
}

/**
 * An integer as sent, or undefined: digits (with a minus sign) in a query, a JSON integer in a
 * body. Past the range of a double it is ±Infinity, still an integer to compare with a bound.
 */
function integerOf (value: unknown, source: Source): number | undefined {
  if (source === 'body') return typeof value === 'number' && (Number.isInteger(value) || Math.abs(value) === Infinity) ? value : undefined
  const text = value as string // a query string gives text only
  const start = text.startsWith('-') ? 1 : 0
  if (text.length === start) return undefined
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 48 || code > 57) return undefined
  }
  return Number(text)
}

/**
 * Checks a paging integer against its minimum and, unless `capped` (a limit, lowered to the
 * route's maximum however large), the 32-bit range (conventions: "Limits").
 */
function pagingInteger (value: unknown, source: Source, field: string, min: number, capped: boolean, hint: string, items: ContextItem[]): number | undefined {
  const n = integerOf(value, source)
  if (n === undefined) {
    items.push(item(source, field, 'INPUT_INVALID', `must be an integer${hint}.`, value))
  } else if (n < min) {
    items.push(item(source, field, 'INPUT_MIN_VALUE', `must be at least ${min}.`, value))
  } else if (n > INT32_MAX && !capped) {
    items.push(item(source, field, 'INPUT_MAX_VALUE', `must be at most ${INT32_MAX}, a 32-bit integer.`, value))
  } else {
    return n
  }
  return undefined
}

function textOf (value: unknown): string {
  return value === null ? '' : String(value)
}

/** Appends `name=value` pairs of a value or list of values. */
function pushPairs (links: Array<[string, string]>, name: string, value: unknown): void {
  if (Array.isArray(value)) for (const v of value) links.push([name, textOf(v)])
  else links.push([name, textOf(value)])
}

function isOrderingValue (value: unknown): value is string | string[] {
  return typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))
}

/** Runs a core step; a QueryError becomes a context item, anything else is a fault of ours. */
function attempt<T> (source: Source, items: ContextItem[], step: () => T): T | undefined {
  try {
    return step()
  } catch (err) {
    // The core throws QueryErrors only; anything else is a fault of ours, a 500.
    /* c8 ignore next */
    if (!isQueryError(err)) throw err
    items.push(toContextItem(err, source))
    return undefined
  }
}

/**
 * As `attempt` for a step over several parameters (`whole`), which stops at its first
 * violation: when it fails, each parameter is checked alone (`one`, for each of `parts`), so
 * that every bad one gets an item (conventions: Errors 5, one item per violation). A fault of
 * the parameters together (`filter` with a hybrid filter) shows in none alone, and is listed as
 * well. Only a refused request pays for the second pass.
 */
function attemptEach<T, P> (source: Source, items: ContextItem[], whole: () => T, parts: readonly P[], one: (part: P) => unknown): T | undefined {
  try {
    return whole()
  } catch (err) {
    /* c8 ignore next */
    if (!isQueryError(err)) throw err
    const found: ContextItem[] = []
    for (const part of parts) attempt(source, found, () => one(part))
    const first = toContextItem(err, source)
    if (!found.some((f) => f.field === first.field && f.message === first.message)) found.push(first)
    items.push(...found)
    return undefined
  }
}

const MAX_FINGERPRINTS = 512

/**
 * queryFingerprint, looked up first by the parameters the query was read from: on one route
 * and in one scope, a spelling always means the same query, and the lookup skips writing out
 * the query model. Per route, bounded: emptied when full.
 */
export function fingerprintOf (route: CollectionRoute, scope: string, ordering: readonly OrderingTerm[], filter: Filter | null, spelling: string): string {
  const key = `${scope}\u0000${spelling}`
  let fingerprint = route.fingerprints.get(key)
  if (fingerprint === undefined) {
    fingerprint = queryFingerprint(scope, ordering, filter)
    if (route.fingerprints.size >= MAX_FINGERPRINTS) route.fingerprints.clear()
    route.fingerprints.set(key, fingerprint)
  }
  return fingerprint
}

/** Most context items a query's refusal lists, fewer than a body's: a URL or body of a thousand unknown names gets a short answer. */
const QUERY_CONTEXT_ITEMS = 20

function refusal (items: ContextItem[]): ProblemError {
  return invalidData(items.slice(0, QUERY_CONTEXT_ITEMS), invalidDetail(items.length, 'The request', QUERY_CONTEXT_ITEMS))
}

/**
 * The query model of a request; throws a 400 "Invalid Data" problem listing every
 * violation. `scope` is called only for cursor paging.
 */
export function resolveQuery (params: RequestParams, route: CollectionRoute, codec: CursorCodec, scope: () => string): ResolvedQuery {
  const { source } = params
  const at = source === 'body' ? 'paging.' : ''
  const items = params.faults.slice()

  let limit = route.defaultLimit
  if (params.limit !== undefined) {
    const n = pagingInteger(params.limit, source, at + 'limit', 1, true, `; above ${route.maxLimit}, ${route.maxLimit} applies`, items)
    if (n !== undefined) limit = Math.min(n, route.maxLimit)
  }
  const offset = params.offset === undefined ? undefined : pagingInteger(params.offset, source, at + 'offset', 0, false, '', items)
  let totalCount = false
  if (params.totalCount !== undefined) {
    totalCount = source === 'body' ? params.totalCount === true : params.totalCount === 'true'
    const valid = source === 'body' ? typeof params.totalCount === 'boolean' : totalCount || params.totalCount === 'false'
    if (!valid) items.push(item(source, at + 'totalCount', 'INPUT_INVALID', 'must be true or false.', params.totalCount))
    else if (params.offset === undefined) items.push(item(source, at + 'totalCount', 'INPUT_INVALID', 'applies to offset paging only; send offset too (0 for the first page).', params.totalCount))
  }
  const cursor = params.cursor
  if (cursor !== undefined) {
    if (typeof cursor !== 'string') items.push(item(source, at + 'cursor', 'INPUT_INVALID', 'must be the cursor string of a next or previous link.', cursor))
    else if (params.offset !== undefined) items.push(item(source, at + 'cursor', 'INPUT_INVALID', 'cannot be used together with offset: send cursor for cursor paging or offset for offset paging.', cursor))
  }

  const filterOf = (filters: ReadonlyArray<[string, unknown]>): Filter | null => {
    const record: Record<string, unknown> = Object.create(null)
    for (const [name, value] of filters) record[name] = value
    return buildFilter(splitFilterParams(record, route.fields), route.fields, route.limits)
  }
  const filter = attemptEach(source, items, () => filterOf(params.filters), params.filters, (one) => filterOf([one]))
  let ordering: OrderingTerm[] | undefined
  if (params.ordering !== undefined && !isOrderingValue(params.ordering)) {
    items.push(item(source, 'ordering', 'INPUT_INVALID', 'must be an attribute name, or a list of them in priority order.', undefined))
  } else {
    const terms = params.ordering as string | string[] | undefined
    ordering = attemptEach(source, items, () => route.ordering(terms), Array.isArray(terms) ? terms : [], (term) => route.ordering(term))
  }
  if (items.length > 0) throw refusal(items)

  const links: Array<[string, string]> = []
  for (const [name, value] of params.filters) pushPairs(links, name, value)
  if (params.ordering !== undefined) pushPairs(links, 'ordering', params.ordering)

  const terms = ordering as OrderingTerm[]
  const where = filter as Filter | null
  const spelling = JSON.stringify([source, params.filters, params.ordering ?? null])
  if (offset !== undefined) {
    const paging: Paging = { kind: 'offset', limit, offset, totalCount }
    return { query: { filter: where, ordering: terms, paging }, links, fingerprint: null, spelling }
  }
  // An empty cursor is the first page (conventions: cursor "default empty").
  if (typeof cursor !== 'string' || cursor === '') {
    return { query: { filter: where, ordering: terms, paging: { kind: 'cursor', limit } }, links, fingerprint: null, spelling }
  }
  const fingerprint = fingerprintOf(route, scope(), terms, where, spelling)
  const keyset = attempt(source, items, () => codec.decode(cursor, fingerprint, at + 'cursor'))
  if (keyset === undefined) throw refusal(items)
  return { query: { filter: where, ordering: terms, paging: { kind: 'cursor', limit, cursor: keyset } }, links, fingerprint, spelling }
}
