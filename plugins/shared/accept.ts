import { essenceOf, isUtf8, parseMediaType, splitOutsideQuotes, type MediaType } from './media-type.js'

// Accept (RFC 9110 §12.5.1) read and matched against what a route produces: the conventions
// plugin negotiates with it, and the files and CSV plugins choose their representations.

/** One media range of an Accept header (RFC 9110 §12.5.1). */
export interface MediaRange {
  type: string
  subtype: string
  /** Media type parameters: those before `q`; accept extensions after it are dropped. */
  params: Array<[string, string]>
  /** The weight, 0 to 1; 0 means "not acceptable". */
  q: number
}

/** RFC 9110 §12.4.2 weight, read leniently: `0`, `1`, or a decimal between them. */
function parseWeight (value: string): number | null {
  if (!/^[01](\.\d*)?$/.test(value)) return null
  const q = Number(value)
  return q <= 1 ? q : null
}

/**
 * Parses an Accept header into its media ranges. Elements that are not valid media
 * ranges (bad syntax, a wildcard type with a concrete subtype, an unreadable weight) are skipped, so the
 * result may be empty. Never throws.
 */
export function parseAccept (value: string): MediaRange[] {
  const ranges: MediaRange[] = []
  for (const element of splitOutsideQuotes(value, ',')) {
    if (element.trim() === '') continue
    const mt = parseMediaType(element)
    if (mt === null || (mt.type === '*' && mt.subtype !== '*')) continue
    const params: Array<[string, string]> = []
    let q: number | null = 1
    for (const [name, v] of mt.params) {
      if (name === 'q') {
        q = parseWeight(v)
        break
      }
      params.push([name, v])
    }
    if (q === null) continue
    ranges.push({ type: mt.type, subtype: mt.subtype, params, q })
  }
  return ranges
}

/**
 * A range's parameters must all be carried by the type. The service only writes UTF-8
 * (conventions: Headers, Content-Type), so `charset=utf-8` matches a type without charset.
 */
function paramsMatch (range: MediaRange, produced: MediaType): boolean {
  return range.params.every(([name, v]) => {
    const own = produced.params.find(([k]) => k === name)
    if (own === undefined) return name === 'charset' && isUtf8(v)
    return own[1].toLowerCase() === v.toLowerCase()
  })
}

/** The weight the client gives `produced`: that of the most specific matching range (RFC 9110 §12.5.1). */
export function qualityOf (ranges: readonly MediaRange[], produced: MediaType): number {
  let best = -1
  let q = 0
  for (const r of ranges) {
    if (r.type !== '*' && r.type !== produced.type) continue
    if (r.subtype !== '*' && r.subtype !== produced.subtype) continue
    if (!paramsMatch(r, produced)) continue
    const specificity = (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2) * 1000 + r.params.length
    if (specificity > best) {
      best = specificity
      q = r.q
    }
  }
  return q
}

/**
 * Chooses what to send. `application/json` wins whenever it is acceptable (conventions:
 * Media types: "When Accept lists it together with others, JSON is returned"); otherwise
 * the acceptable type of highest weight, ties going to the route's order. Null: nothing fits.
 */
export function negotiate (ranges: readonly MediaRange[], produces: readonly MediaType[]): string | null {
  let chosen: string | null = null
  let chosenQ = 0
  for (const mt of produces) {
    const q = qualityOf(ranges, mt)
    if (q <= 0) continue
    if (essenceOf(mt) === 'application/json') return essenceOf(mt)
    if (q > chosenQ) {
      chosen = essenceOf(mt)
      chosenQ = q
    }
  }
  return chosen
}
