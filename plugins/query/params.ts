/*
 * The query string of a collection request, read from the raw URL rather than from
 * `request.query`: a server may install any querystring parser (`qs` nests `a[b]=1`,
 * others split commas), and the conventions need every repeated parameter kept in
 * order ("Simple filtering" 2, "Sorting" 2). `application/x-www-form-urlencoded` rules:
 * `&` separates, the first `=` splits, `+` is a space, `%XX` is UTF-8 (RFC 3986 §2.1).
 */

/** The parameters of a query string by decoded name, in order of first appearance, every value kept. */
export type QueryParams = Map<string, string[]>

export interface ParsedQueryString {
  params: QueryParams
  /** Raw `name=value` parts that are not correctly percent-encoded UTF-8 (strict consuming). */
  malformed: string[]
}

/**
 * Whether a string is well-formed UTF-16 (no lone surrogate), so it can be percent-encoded
 * into a link and compared the same way in SQL and in memory.
 */
export function isWellFormed (text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0xD800 || code > 0xDFFF) continue
    if (code > 0xDBFF) return false
    const low = text.charCodeAt(i + 1)
    if (!(low >= 0xDC00 && low <= 0xDFFF)) return false
    i++
  }
  return true
}

/** One decoded name or value, or undefined when it is not percent-encoded UTF-8. */
export function decodeComponent (raw: string): string | undefined {
  let text = raw.indexOf('+') === -1 ? raw : raw.replaceAll('+', ' ')
  if (text.indexOf('%') !== -1) {
    try {
      text = decodeURIComponent(text)
    } catch {
      return undefined
    }
  }
  return isWellFormed(text) ? text : undefined
}

/** Parses the query string of a request URL (the part after the first `?`). */
export function parseQueryString (url: string): ParsedQueryString {
  const params: QueryParams = new Map()
  const malformed: string[] = []
  const start = url.indexOf('?')
  if (start === -1) return { params, malformed }
  let from = start + 1
  while (from <= url.length) {
    let end = url.indexOf('&', from)
    if (end === -1) end = url.length
    if (end > from) {
      const part = url.slice(from, end)
      const eq = part.indexOf('=')
      const name = decodeComponent(eq === -1 ? part : part.slice(0, eq))
      const value = eq === -1 ? '' : decodeComponent(part.slice(eq + 1))
      if (name === undefined || value === undefined) {
        malformed.push(part)
      } else {
        const values = params.get(name)
        if (values === undefined) params.set(name, [value])
        else values.push(value)
      }
    }
    from = end + 1
  }
  return { params, malformed }
}
