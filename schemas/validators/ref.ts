import { allChars, isDigit, isIdChar, isLower } from './chars.js'

/** The four parts of a URN-like reference `{namespace}:{entity}:{sub-entity}:{id}`. */
export interface RefParts {
  namespace: string
  entity: string
  subEntity: string
  id: string
}

export const REF_MAX_LENGTH = 255
export const DEFAULT_NAMESPACE = 'svc'

function isLowerAlnum (c: number): boolean {
  return isLower(c) || isDigit(c)
}

/** `[a-z]{1,10}` (conventions: "URN-like references", namespace). */
export function isRefNamespace (s: string): boolean {
  return s.length >= 1 && s.length <= 10 && allChars(s, 0, s.length, isLower)
}

/** `[a-z0-9]{1,20}`; the sub-entity may also be empty. */
export function isRefEntity (s: string, allowEmpty = false): boolean {
  return (allowEmpty || s.length >= 1) && s.length <= 20 && allChars(s, 0, s.length, isLowerAlnum)
}

/** A non-empty identifier of the convention's alphabet `[A-Za-z0-9._~-]`. */
export function isIdentifier (s: string): boolean {
  return s.length >= 1 && allChars(s, 0, s.length, isIdChar)
}

/** Splits a reference into its parts, or `undefined` when it breaks a rule of the convention. */
export function parseRef (s: string): RefParts | undefined {
  if (s.length > REF_MAX_LENGTH) return undefined
  const a = s.indexOf(':')
  const b = s.indexOf(':', a + 1)
  const c = s.indexOf(':', b + 1)
  if (a < 0 || b < 0 || c < 0) return undefined
  const parts = { namespace: s.slice(0, a), entity: s.slice(a + 1, b), subEntity: s.slice(b + 1, c), id: s.slice(c + 1) }
  const ok = isRefNamespace(parts.namespace) && isRefEntity(parts.entity) &&
    isRefEntity(parts.subEntity, true) && isIdentifier(parts.id)
  return ok ? parts : undefined
}

export function isRef (s: string): boolean {
  return parseRef(s) !== undefined
}

export interface FormatRefOptions {
  subEntity?: string
  namespace?: string
}

/** Writes the reference of an entity: `formatRef('author', id)` → `svc:author::<id>`. */
export function formatRef (entity: string, id: string, { subEntity = '', namespace = DEFAULT_NAMESPACE }: FormatRefOptions = {}): string {
  return `${namespace}:${entity}:${subEntity}:${id}`
}
