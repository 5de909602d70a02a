import type { FastifyRequest } from 'fastify'

/*
 * Links of the collection envelope (conventions: "Collection response envelope"): `url`
 * is the complete URL of the other page, carrying the current limit, the cursor (or
 * offset), every filter parameter and the ordering. Scheme and host are the request's
 * as Fastify sees them, so `trustProxy` makes `X-Forwarded-Proto`/`X-Forwarded-Host` count.
 */

/** Host characters kept in a link: reg-name, IPv4, `[IPv6]` and `:port` (RFC 3986 §3.2.2). */
function isHostChar (code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) ||
    code === 45 || code === 46 || code === 95 || code === 126 || code === 58 || code === 91 || code === 93
}

function isSafeHost (host: string): boolean {
  if (host.length === 0 || host.length > 255) return false
  for (let i = 0; i < host.length; i++) if (!isHostChar(host.charCodeAt(i))) return false
  return true
}

/**
 * `scheme://host/path` of a request. A missing or odd `Host` (anything a client can
 * send) gives a path-absolute link instead of a link to a host of the client's choosing.
 */
export function linkBase (request: FastifyRequest, path: string): string {
  const host = request.host
  return isSafeHost(host) ? `${request.protocol}://${host}${path}` : path
}

/** `base?name=value&…`, each name and value percent-encoded (RFC 3986 §3.4). */
export function pageUrl (base: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  let url = base
  let separator = '?'
  for (const [name, value] of pairs) {
    url += `${separator}${encodeURIComponent(name)}=${encodeURIComponent(value)}`
    separator = '&'
  }
  return url
}
