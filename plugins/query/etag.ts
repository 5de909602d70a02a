import { hash } from 'node:crypto'

/*
 * The collection ETag (conventions: "ETags with collections": the header covers the
 * whole page of body). A strong validator (RFC 9110 §8.8.3): a hash of the exact bytes
 * sent, so any change of an item, of the page's membership or of its links changes it.
 */

/** `"<22 base64url characters>"`: 128 bits of SHA-256 over the serialized body. */
export function collectionEtag (payload: string | Buffer): string {
  // One-shot: no Hash object per page.
  return `"${hash('sha256', payload, 'base64url').slice(0, 22)}"`
}

/**
 * Whether `If-None-Match` matches the strong tag `etag` by weak comparison (RFC 9110
 * §13.1.2): `*`, or a listed tag with the same opaque part, `W/` or not. A malformed header
 * was refused before the page was read (index.ts).
 */
export function ifNoneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  for (const part of header.split(',')) {
    const tag = part.trim()
    if (tag === etag || tag === '*' || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}
