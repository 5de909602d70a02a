/*
 * What a CSV page takes from a collection envelope (conventions: "Collection response
 * envelope"): its items, and its other pages as a `Link` header (RFC 8288), since a CSV body
 * has no place for `paging`.
 */

/** The `results` of a collection envelope; null when `payload` is not one. */
export function resultsOf (payload: unknown): unknown[] | null {
  if (typeof payload !== 'object' || payload === null) return null
  const results = (payload as { results?: unknown }).results
  return Array.isArray(results) ? results : null
}

function urlOf (link: unknown): string | null {
  if (typeof link !== 'object' || link === null) return null
  const url = (link as { url?: unknown }).url
  return typeof url === 'string' && url !== '' ? url : null
}

/** `<next>; rel="next", <previous>; rel="prev"` of the envelope's paging; null when it links nowhere. */
export function linkHeader (payload: unknown): string | null {
  const paging = (payload as { paging?: unknown }).paging
  if (typeof paging !== 'object' || paging === null) return null
  const { next, previous } = paging as { next?: unknown, previous?: unknown }
  const links: string[] = []
  const nextUrl = urlOf(next)
  const previousUrl = urlOf(previous)
  if (nextUrl !== null) links.push(`<${nextUrl}>; rel="next"`)
  if (previousUrl !== null) links.push(`<${previousUrl}>; rel="prev"`)
  return links.length === 0 ? null : links.join(', ')
}
