import type { FastifyRequest } from 'fastify'
import type { CollectionQuery, Keyset, Page } from '../../model/query.js'
import { collectionPath } from './route.js'
import { linkBase, pageUrl } from './links.js'
import { fingerprintOf } from './resolve.js'
import { kCollection } from './state.js'
import { pathOf } from '../shared/url.js'

/*
 * The collection response envelope (conventions: "Collection response envelope"):
 * `results` and `paging`, never a bare array, 200 also when empty. Cursor paging gives
 * `next`/`previous` as `{cursor, url}` or null; offset paging gives `{url}` or null and
 * `totalCount` when it was asked. A POST search links to the GET form of the collection
 * with the equivalent query string (a POST cannot be linked); its cursors can also be
 * sent back in the body's `paging.cursor`, as both forms share the cursor's fingerprint.
 */

/** A page from the store or from queryMemory; `totalCount` is needed when the request asked for it. */
export interface CollectionPage<T> extends Page<T> {
  readonly totalCount?: number
}

export interface CursorPagingBody {
  limit: number
  next: { cursor: string, url: string } | null
  previous: { cursor: string, url: string } | null
}

export interface OffsetPagingBody {
  limit: number
  offset: number
  totalCount?: number
  next: { url: string } | null
  previous: { url: string } | null
}

export interface CollectionEnvelope<T> {
  results: T[]
  paging: CursorPagingBody | OffsetPagingBody
}

/** The envelope of `page` for the collection request being answered. */
export function buildEnvelope<T> (request: FastifyRequest, page: CollectionPage<T>): CollectionEnvelope<T> {
  const state = request[kCollection]
  const path = pathOf(request.url)
  // null on other routes; undefined when the query plugin is not registered at all.
  if (state == null) throw new TypeError(`buildEnvelope: ${request.method} ${path} is not a collection route; give it config.collection`)
  const { query, links, fingerprint, spelling } = state.resolved
  const base = linkBase(request, state.search ? collectionPath(path) : path)
  const paging = query.paging
  const limit = ['limit', String(paging.limit)] as const

  if (paging.kind === 'offset') {
    const { offset } = paging
    if (paging.totalCount && !(Number.isInteger(page.totalCount) && (page.totalCount as number) >= 0)) {
      throw new TypeError(`buildEnvelope: the request asked for totalCount, so the page needs totalCount (a count of the filter's matches), got ${String(page.totalCount)}`)
    }
    const extra = paging.totalCount ? [['totalCount', 'true'] as const] : []
    const at = (to: number, size = limit): { url: string } => ({ url: pageUrl(base, [size, ['offset', String(to)], ...extra, ...links]) })
    const body: OffsetPagingBody = paging.totalCount
      ? { limit: paging.limit, offset, totalCount: page.totalCount as number, next: null, previous: null }
      : { limit: paging.limit, offset, next: null, previous: null }
    if (page.hasNext) body.next = at(offset + paging.limit)
    // The link carries the current limit (conventions: Collection response envelope): nearer
    // the start than a limit, the previous page is the first one, which overlaps this one. At 0, none.
    if (page.hasPrevious && offset > 0) body.previous = at(Math.max(0, offset - paging.limit))
    return { results: page.items, paging: body }
  }

  let sealedWith = fingerprint
  const link = (keyset: Keyset | null): { cursor: string, url: string } | null => {
    if (keyset === null) return null
    sealedWith ??= fingerprintOf(state.route, state.route.scope(request), query.ordering, query.filter, spelling)
    const cursor = state.codec.encode(keyset, sealedWith)
    return { cursor, url: pageUrl(base, [limit, ['cursor', cursor], ...links]) }
  }
  return { results: page.items, paging: { limit: paging.limit, next: link(page.next), previous: link(page.previous) } }
}

/** `request.collectionQuery` of a collection route; a TypeError (a setup mistake) elsewhere. */
export function collectionQueryOf (request: FastifyRequest): CollectionQuery {
  const query = request.collectionQuery
  if (query == null) throw new TypeError(`collectionQueryOf: ${request.method} ${pathOf(request.url)} is not a collection route; give it config.collection`)
  return query
}
