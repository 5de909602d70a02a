/** A non-empty list of concrete media types, in preference order. */
export type MediaTypes = readonly [MediaType, ...MediaType[]]

/** RFC 9110 §5.6.2: `token = 1*tchar`. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** A parsed media type; names are lowercased, parameters keep their order. */
export interface MediaType {
  type: string
  subtype: string
  /** `[name, value]` pairs in the order sent; names lowercased, quoted values unescaped. */
  params: Array<[string, string]>
}

/**
 * Splits on `sep` outside RFC 9110 quoted strings (§5.6.4), so `a;b="x;y"` gives two parts.
 * An unterminated quote runs to the end of the value.
 */
export function splitOutsideQuotes (value: string, sep: string): string[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]
    if (quoted) {
      if (ch === '\\') i++
      else if (ch === '"') quoted = false
    } else if (ch === '"') {
      quoted = true
    } else if (ch === sep) {
      parts.push(value.slice(start, i))
      start = i + 1
    }
  }
  parts.push(value.slice(start))
  return parts
}

/** RFC 9110 §5.6.4 quoted-string → its content, or null when it is not one. */
function unquote (value: string): string | null {
  if (!/^"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"$/.test(value)) return null
  return value.slice(1, -1).replace(/\\(.)/g, '$1')
}

/**
 * Parses `type/subtype *( OWS ";" OWS [ parameter ] )` (RFC 9110 §8.3.1, §5.6.6).
 * Returns null for anything else; never throws.
 */
export function parseMediaType (value: string): MediaType | null {
  const [essence = '', ...rest] = splitOutsideQuotes(value, ';')
  const slash = essence.indexOf('/')
  const type = essence.slice(0, slash).trim()
  const subtype = essence.slice(slash + 1).trim()
  if (slash < 0 || !TOKEN.test(type) || !TOKEN.test(subtype)) return null
  const params: Array<[string, string]> = []
  for (const raw of rest) {
    const param = raw.trim()
    if (param === '') continue
    const eq = param.indexOf('=')
    const name = param.slice(0, eq)
    const rawValue = param.slice(eq + 1)
    if (eq < 1 || !TOKEN.test(name)) return null
    const v = TOKEN.test(rawValue) ? rawValue : unquote(rawValue)
    if (v === null) return null
    params.push([name.toLowerCase(), v])
  }
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), params }
}

/** `type/subtype`, lowercased, without parameters. */
export function essenceOf (mt: MediaType): string {
  return `${mt.type}/${mt.subtype}`
}

/** The value of one parameter (names compare case-insensitively), or undefined. */
export function paramOf (mt: MediaType, name: string): string | undefined {
  for (const [k, v] of mt.params) if (k === name) return v
  return undefined
}

/**
 * The name of a parameter given more than once, or undefined. RFC 6838 §4.3 makes it an
 * error: which value the sender meant is unclear, and readers differ on which one wins.
 */
export function repeatedParam (mt: MediaType): string | undefined {
  const { params } = mt
  for (let i = 1; i < params.length; i++) {
    const name = (params[i] as [string, string])[0]
    for (let j = 0; j < i; j++) if ((params[j] as [string, string])[0] === name) return name
  }
  return undefined
}

/** True for `utf-8` in any case (RFC 9110 §8.3.2: charset names are case-insensitive). */
export function isUtf8 (charset: string): boolean {
  return charset.toLowerCase() === 'utf-8'
}

/**
 * Parses a configured media type (an option value, not a request header):
 * a concrete `type/subtype` without wildcards. Returns null when it is not one.
 */
export function parseConcreteMediaType (value: unknown): MediaType | null {
  if (typeof value !== 'string') return null
  const mt = parseMediaType(value)
  if (mt === null || mt.type === '*' || mt.subtype === '*') return null
  return mt
}
