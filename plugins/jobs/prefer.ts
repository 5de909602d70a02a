/**
 * The preference names of a `Prefer` header (RFC 7240 §2): `respond-async, wait=10` gives
 * `respond-async` and `wait`. Names are case-insensitive; values and parameters are not needed
 * here. Repeated headers arrive joined by commas (Node), which parse the same.
 */
export function preferences (header: string | string[] | undefined): Set<string> {
  const out = new Set<string>()
  if (header === undefined) return out
  for (const line of Array.isArray(header) ? header : [header]) {
    for (const element of line.split(',')) {
      // token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
      const name = ((element.split(';')[0] as string).split('=')[0] as string).trim().toLowerCase()
      if (name !== '') out.add(name)
    }
  }
  return out
}
