/** The syntax the User-Agent check asks for (conventions: Headers, User-Agent). */
export interface UserAgentSyntax {
  /**
   * `true`: the first product's version is digits only (`order-service/2`). Default `false`:
   * any RFC 9110 token that starts with a digit (`curl/8.4.0`, `Mozilla/5.0`), read as
   * "starts with the major version", since common clients send full versions.
   */
  strictVersion?: boolean
  /**
   * `true`: at least one RFC 9110 comment `( … )` must follow the product. Default `false`:
   * the `<comment>` of the convention's syntax is optional, as in RFC 9110 §10.1.5.
   */
  requireComment?: boolean
}

/** A parsed User-Agent (RFC 9110 §10.1.5: `product *( RWS ( product / comment ) )`). */
export interface UserAgent {
  product: string
  version: string
  /** Products after the first, in order. */
  products: Array<{ name: string, version?: string }>
  /** Comments with their parentheses, in order. */
  comments: string[]
}

const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/
/** RFC 9110 §5.6.5 ctext: HTAB, SP, %x21-27, %x2A-5B, %x5D-7E, obs-text. */
const CTEXT = /[\t \x21-\x27\x2a-\x5b\x5d-\x7e\x80-\xff]/

function tokenEnd (s: string, i: number): number {
  let j = i
  while (j < s.length && TCHAR.test(s[j] as string)) j++
  return j
}

/** `token ["/" token]` from `i`; null when there is no token. */
function readProduct (s: string, i: number): { name: string, version?: string, end: number } | null {
  const nameEnd = tokenEnd(s, i)
  if (nameEnd === i) return null
  const name = s.slice(i, nameEnd)
  if (s[nameEnd] !== '/') return { name, end: nameEnd }
  const versionEnd = tokenEnd(s, nameEnd + 1)
  if (versionEnd === nameEnd + 1) return null
  return { name, version: s.slice(nameEnd + 1, versionEnd), end: versionEnd }
}

/** A comment from the `(` at `i`, nested comments and quoted-pairs allowed; returns its end or -1. */
function commentEnd (s: string, i: number): number {
  let depth = 0
  for (let j = i; j < s.length; j++) {
    const ch = s[j] as string
    if (ch === '(') depth++
    else if (ch === ')') {
      depth--
      if (depth === 0) return j + 1
    } else if (ch === '\\') {
      if (j + 1 >= s.length || !/[\t \x21-\x7e\x80-\xff]/.test(s[j + 1] as string)) return -1
      j++
    } else if (!CTEXT.test(ch)) return -1
  }
  return -1
}

/**
 * Parses a User-Agent whose first product carries a version starting with a digit.
 * Returns null for anything else; never throws. Surrounding SP/HTAB are ignored (OWS).
 */
export function parseUserAgent (raw: string): UserAgent | null {
  const s = raw.replace(/^[ \t]+|[ \t]+$/g, '')
  const first = readProduct(s, 0)
  if (first?.version === undefined || !/^\d/.test(first.version)) return null
  const ua: UserAgent = { product: first.name, version: first.version, products: [], comments: [] }
  let i = first.end
  while (i < s.length) {
    const start = i
    while (s[i] === ' ' || s[i] === '\t') i++
    if (i === start) return null
    if (s[i] === '(') {
      const end = commentEnd(s, i)
      if (end < 0) return null
      ua.comments.push(s.slice(i, end))
      i = end
    } else {
      const p = readProduct(s, i)
      if (p === null) return null
      ua.products.push(p.version === undefined ? { name: p.name } : { name: p.name, version: p.version })
      i = p.end
    }
  }
  return ua
}

/** The syntax check with the chosen strictness. */
export function isValidUserAgent (value: string, opts: UserAgentSyntax = {}): boolean {
  const ua = parseUserAgent(value)
  if (ua === null) return false
  if (opts.strictVersion === true && !/^\d+$/.test(ua.version)) return false
  return opts.requireComment !== true || ua.comments.length > 0
}
