/**
 * Entity tags and the conditional request headers that carry them (RFC 9110 §8.8.3,
 * §13.1.1 If-Match, §13.1.2 If-None-Match). An entity tag is kept as written in the
 * header (`"abc"` or `W/"abc"`), because the convention makes the `etag` property equal
 * to the `ETag` header value: comparing strings is then comparing tags.
 */

/** One entity tag: `tag` is the opaque-tag with its quotes, `weak` whether `W/` preceded it. */
export interface EntityTag {
  weak: boolean
  tag: string
}

/** `*` (any current representation) or a non-empty list of entity tags. */
export type EntityTagList = '*' | readonly EntityTag[]

/** etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3). */
function isEtagChar (code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x7e) || (code >= 0x80 && code <= 0xff)
}

function isOws (code: number): boolean {
  return code === 0x20 || code === 0x09
}

/**
 * Parses `"*" / #entity-tag`. Empty list elements are skipped (RFC 9110 §5.6.1), so the
 * value Node builds by joining repeated header lines with `, ` parses too. Returns null
 * when the value is malformed (or holds no tag at all); never throws. Linear: one scan.
 */
export function parseEntityTags (value: string): EntityTagList | null {
  let i = 0
  const n = value.length
  while (i < n && isOws(value.charCodeAt(i))) i++
  let end = n
  while (end > i && isOws(value.charCodeAt(end - 1))) end--
  if (end - i === 1 && value[i] === '*') return '*'
  const tags: EntityTag[] = []
  while (i < end) {
    const code = value.charCodeAt(i)
    if (code === 0x2c || isOws(code)) { i++; continue }
    let weak = false
    if (value.startsWith('W/', i)) { weak = true; i += 2 }
    if (value[i] !== '"') return null
    const start = i
    i++
    while (i < end && value[i] !== '"') {
      if (!isEtagChar(value.charCodeAt(i))) return null
      i++
    }
    if (i >= end) return null
    i++
    tags.push({ weak, tag: value.slice(start, i) })
    while (i < end && isOws(value.charCodeAt(i))) i++
    if (i < end && value[i] !== ',') return null
  }
  return tags.length === 0 ? null : tags
}

/** Strong comparison (§8.8.3.2): both tags strong and equal. `current` is an `ETag` value. */
export function strongMatch (list: EntityTagList, current: string): boolean {
  if (list === '*') return true
  for (const t of list) if (!t.weak && t.tag === current) return true
  return false
}

/** Weak comparison (§8.8.3.2): the opaque tags are equal, whatever their weakness. */
export function weakMatch (list: EntityTagList, current: string): boolean {
  if (list === '*') return true
  const opaque = current.startsWith('W/') ? current.slice(2) : current
  for (const t of list) if (t.tag === opaque) return true
  return false
}

/** The strong tags of an If-Match list, as the values a compare-and-set may accept. */
export function strongTags (list: readonly EntityTag[]): string[] {
  const out: string[] = []
  for (const t of list) if (!t.weak) out.push(t.tag)
  return out
}

/** The opaque tags of an If-None-Match list (weak comparison ignores `W/`). */
export function opaqueTags (list: readonly EntityTag[]): string[] {
  return list.map(t => t.tag)
}
