import { essenceOf, parseMediaType, type MediaType } from '../shared/media-type.js'

/** The media types a file may be uploaded as, by essence: each with the type it is stored as. */
export type AllowedTypes = ReadonlyMap<string, string>

/** The allowed types of an endpoint, checked at boot; the option's name in the error. */
export function allowedTypes (option: string, value: unknown): AllowedTypes {
  if (!Array.isArray(value) || value.length === 0) throw new TypeError(`files plugin: ${option} must be a non-empty array of media types, got ${JSON.stringify(value)}`)
  const out = new Map<string, string>()
  for (const v of value) {
    const mt = typeof v === 'string' ? parseMediaType(v) : null
    if (mt === null || mt.type === '*' || mt.subtype === '*' || mt.type === 'multipart') {
      throw new TypeError(`files plugin: ${option} must list concrete media types such as "application/pdf" (multipart/form-data is always accepted), got ${JSON.stringify(v)}`)
    }
    const charset = mt.params.find(([k]) => k === 'charset')
    if (mt.params.some(([k]) => k !== 'charset') || (charset !== undefined && charset[1].toLowerCase() !== 'utf-8')) {
      throw new TypeError(`files plugin: ${option} may give a media type no parameter but charset=UTF-8, got ${JSON.stringify(v)}`)
    }
    out.set(essenceOf(mt), charset === undefined ? essenceOf(mt) : `${essenceOf(mt)}; charset=UTF-8`)
  }
  return out
}

/**
 * The type a file sent as `header` is stored as, or null when it is not allowed. Only UTF-8
 * text is taken (conventions: Headers, Content-Type), with or without its charset parameter.
 */
export function storedType (allowed: AllowedTypes, header: string): string | null {
  // Unreadable: a multipart file part's (Fastify refuses a request's before any parser runs).
  const mt: MediaType | null = parseMediaType(header)
  if (mt === null) return null
  const charset = mt.params.find(([k]) => k === 'charset')
  if (charset !== undefined && charset[1].toLowerCase() !== 'utf-8') return null
  return allowed.get(essenceOf(mt)) ?? null
}
