import type { ContextItem } from '../../schemas/problem.js'
import type { CollectionRoute } from './route.js'
import { isWellFormed, parseQueryString } from './params.js'
import { cutShort } from '../shared/cut-short.js'

/*
 * The two ways a collection request arrives, brought to one shape: the query string of
 * a GET (conventions: "Collection endpoints") and the JSON body of a POST search
 * ("Search by POST": the same names at the root, multiple values as arrays, paging
 * inside `paging`). Only the names and their counts are checked here; values are
 * checked in resolve.ts, the same way for both.
 */

export type Source = 'query' | 'body'

/** The parameters of one collection request, sorted by kind. */
export interface RequestParams {
  source: Source
  /** Paging members as sent (query: text; body: JSON values); undefined when absent. */
  limit?: unknown
  offset?: unknown
  cursor?: unknown
  totalCount?: unknown
  ordering?: unknown
  /**
   * `filter`, attribute and `<attribute>Filter` parameters, by name in code-point order:
   * the filter, its cursor fingerprint and the links then do not depend on the order
   * the client wrote the parameters in.
   */
  filters: Array<[string, unknown]>
  /** Violations found so far: unknown, repeated or malformed parameters. */
  faults: ContextItem[]
}

/** A violation's item; the field as the client wrote it, cut short: an unknown name can be as long as the URL. */
function fault (source: Source, field: string, message: string, value?: string): ContextItem {
  const item: ContextItem = { code: 'INPUT_INVALID', message, field: cutShort(field), source }
  if (value !== undefined) item.value = value
  return item
}

function byName (a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : 1
}

function unknownMessage (name: string, route: CollectionRoute): string {
  const paging = route.offset ? 'limit, cursor, offset, totalCount' : 'limit, cursor'
  return `${cutShort(name)} is not a parameter of this collection; use an attribute that can be filtered, <attribute>Filter, filter, ordering or ${paging}.`
}

/** The query string of a GET (or HEAD) on the collection. */
export function readQueryString (url: string, route: CollectionRoute): RequestParams {
  const { params, malformed } = parseQueryString(url)
  const out: RequestParams = { source: 'query', filters: [], faults: [] }
  for (const part of malformed) {
    out.faults.push(fault('query', part.split('=', 1)[0] as string, 'is not correctly percent-encoded UTF-8 (RFC 3986 §2.1); encode reserved characters and non-ASCII text as %XX bytes.', part))
  }
  const maxValues = route.limits.maxListSize
  for (const [name, values] of params) {
    const kind = route.names.get(name)
    if (kind === undefined) {
      // The value is what was sent under the name (conventions: the offending value).
      out.faults.push(fault('query', name, unknownMessage(name, route), values.join(',')))
    } else if (kind === 'simple' || kind === 'hybrid' || kind === 'filter') {
      // `filter` repeated is refused by buildFilter, with its own message.
      if (values.length > maxValues) out.faults.push(fault('query', name, `${name} may be repeated at most ${maxValues} times.`))
      else out.filters.push([name, values.length === 1 ? values[0] : values])
    } else if (kind === 'ordering') {
      if (values.length > maxValues) out.faults.push(fault('query', name, `ordering may be repeated at most ${maxValues} times.`))
      else out.ordering = values
    } else if (values.length > 1) {
      out.faults.push(fault('query', name, `${name} may appear once.`, values.join(',')))
    } else {
      out[kind] = values[0]
    }
  }
  out.filters.sort(byName)
  return out
}

/** Whether a body value holds only well-formed strings (a lone surrogate cannot go into a link). */
function wellFormedValue (value: unknown): boolean {
  if (typeof value === 'string') return isWellFormed(value)
  return !Array.isArray(value) || value.every((v) => typeof v !== 'string' || isWellFormed(v))
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function readPaging (paging: unknown, route: CollectionRoute, out: RequestParams): void {
  if (paging === undefined || paging === null) return
  if (!isObject(paging)) {
    out.faults.push(fault('body', 'paging', 'must be an object such as {"limit": 20, "cursor": "…"}.'))
    return
  }
  for (const name of Object.keys(paging)) {
    const kind = route.names.get(name)
    const value = paging[name]
    if (kind === 'limit' || kind === 'offset' || kind === 'cursor' || kind === 'totalCount') {
      // null is the member left out.
      if (value !== null) out[kind] = value
    } else {
      out.faults.push(fault('body', `paging.${name}`, `is not a paging member; use ${route.offset ? 'limit, cursor, offset and totalCount' : 'limit and cursor'}.`))
    }
  }
}

/**
 * The query string of a POST search, which must be empty: its parameters travel in the
 * body, and paging parameters are never sent both ways (conventions: "Collection endpoints").
 */
export function readSearchQueryString (url: string, route: CollectionRoute): ContextItem[] {
  const { params, malformed } = parseQueryString(url)
  const sent: Array<[string, string]> = [...params].map(([name, values]) => [name, values.join(',')])
  for (const part of malformed) {
    const at = part.indexOf('=')
    sent.push(at === -1 ? [part, ''] : [part.slice(0, at), part.slice(at + 1)])
  }
  return sent.map(([name, value]) => {
    const kind = route.names.get(name)
    const message = kind === 'limit' || kind === 'offset' || kind === 'cursor' || kind === 'totalCount'
      ? `Paging parameters are never sent both in the query string and in the body; send ${name} in the body's paging.`
      : `A search takes its parameters in the JSON body; move ${cutShort(name)} there.`
    return fault('query', name, message, value)
  })
}

/** The JSON body of a POST search. */
export function readSearchBody (body: unknown, route: CollectionRoute): RequestParams {
  const out: RequestParams = { source: 'body', filters: [], faults: [] }
  if (!isObject(body)) {
    out.faults.push({ code: 'INPUT_INVALID', message: 'The body must be a JSON object of search parameters; send {} for the first page of everything.', source: 'body' })
    return out
  }
  const maxValues = route.limits.maxListSize
  for (const name of Object.keys(body)) {
    const value = body[name]
    const kind = route.names.get(name)
    if (name === 'paging') {
      readPaging(value, route, out)
    } else if (kind === undefined || kind === 'limit' || kind === 'offset' || kind === 'cursor' || kind === 'totalCount') {
      const message = kind === undefined ? unknownMessage(name, route) : `${name} goes inside paging: {"paging": {"${name}": …}}.`
      out.faults.push(fault('body', name, message))
    } else if (!wellFormedValue(value)) {
      out.faults.push(fault('body', name, 'must be well-formed Unicode text (no lone surrogate).'))
    } else if (Array.isArray(value) && value.length > maxValues) {
      out.faults.push(fault('body', name, `may list at most ${maxValues} values.`))
    } else if (kind === 'ordering') {
      out.ordering = value
    } else {
      out.filters.push([name, value])
    }
  }
  out.filters.sort(byName)
  return out
}
