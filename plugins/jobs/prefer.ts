// RFC 9110 §5.6.2: the characters of a token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * The elements of a header list (RFC 9110 §5.6.1), split at the commas that are not inside a
 * quoted string: `foo="a,respond-async"` is one element, not a preference named in a value.
 */
function elements (line: string): string[] {
  const out: string[] = []
  let from = 0
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (quoted && c === 0x5c) i++ // a quoted-pair: the next character is taken as it is
    else if (c === 0x22) quoted = !quoted
    else if (c === 0x2c && !quoted) {
      out.push(line.slice(from, i))
      from = i + 1
    }
  }
  out.push(line.slice(from))
  return out
}

/**
 * The preference names of a `Prefer` header (RFC 7240 §2): `respond-async, wait=10` gives
 * `respond-async` and `wait`. Names are case-insensitive; values and parameters are not needed
 * here, and a comma or a name inside a quoted value is part of that value. An element whose
 * name is not a token is left out. Repeated headers arrive joined by commas (Node), which parse
 * the same.
 */
export function preferences (header: string | string[] | undefined): Set<string> {
  const out = new Set<string>()
  if (header === undefined) return out
  for (const line of Array.isArray(header) ? header : [header]) {
    for (const element of elements(line)) {
      // token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
      const name = (/^[^=;]*/.exec(element) as RegExpExecArray)[0].trim().toLowerCase()
      if (TOKEN.test(name)) out.add(name)
    }
  }
  return out
}
