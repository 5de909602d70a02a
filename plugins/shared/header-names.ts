/**
 * Standard field names (RFC 9110, 9111, 9112, 6265, 6266, 7089, 7240, 8288, 8594, 9530,
 * 9745, Fetch/CORS, W3C Trace Context and the permanent IANA entries services meet),
 * and the rate-limit fields of the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit` and `RateLimit-Policy`, and the `RateLimit-Limit`/`-Remaining`/`-Reset` of its
 * earlier revisions, which @fastify/rate-limit sends): standard fields on their way to
 * registration, not custom headers. Lowercase, as compared.
 */
export const STANDARD_HEADERS: ReadonlySet<string> = new Set([
  'a-im', 'accept', 'accept-ch', 'accept-charset', 'accept-datetime', 'accept-encoding', 'accept-language',
  'accept-patch', 'accept-post', 'accept-ranges', 'access-control-allow-credentials', 'access-control-allow-headers',
  'access-control-allow-methods', 'access-control-allow-origin', 'access-control-expose-headers',
  'access-control-max-age', 'access-control-request-headers', 'access-control-request-method', 'age', 'allow',
  'alt-svc', 'alt-used', 'authentication-info', 'authorization', 'cache-control', 'cache-status',
  'cdn-cache-control', 'clear-site-data', 'connection', 'content-digest', 'content-disposition',
  'content-encoding', 'content-language', 'content-length', 'content-location', 'content-range',
  'content-security-policy', 'content-security-policy-report-only', 'content-type', 'cookie',
  'cross-origin-embedder-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'date',
  'deprecation', 'early-data', 'etag', 'expect', 'expires', 'forwarded', 'from', 'host', 'if-match',
  'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'keep-alive', 'last-modified', 'link',
  'location', 'max-forwards', 'memento-datetime', 'origin', 'pragma', 'prefer', 'preference-applied', 'priority',
  'proxy-authenticate', 'proxy-authentication-info', 'proxy-authorization', 'range', 'ratelimit', 'ratelimit-limit',
  'ratelimit-policy', 'ratelimit-remaining', 'ratelimit-reset', 'referer', 'referrer-policy',
  'repr-digest', 'retry-after', 'sec-fetch-dest', 'sec-fetch-mode', 'sec-fetch-site', 'sec-fetch-user',
  'sec-websocket-accept', 'sec-websocket-extensions', 'sec-websocket-key', 'sec-websocket-protocol',
  'sec-websocket-version', 'server', 'server-timing', 'set-cookie', 'sunset', 'strict-transport-security', 'te',
  'timing-allow-origin', 'traceparent', 'tracestate', 'trailer', 'transfer-encoding', 'upgrade',
  'upgrade-insecure-requests', 'user-agent', 'vary', 'via', 'want-content-digest', 'want-repr-digest',
  'www-authenticate', 'x-content-type-options', 'x-frame-options'
])

/**
 * Conventions: Headers, Custom headers. Returns null when `name` may be used, else why
 * not. Standard headers, `X-Request-ID` and `X-Forwarded-*` are not custom headers;
 * `allow` lists further names accepted as they are (lowercase).
 */
export function checkCustomHeaderName (name: string, allow: ReadonlySet<string> = new Set()): string | null {
  const lower = name.toLowerCase()
  if (STANDARD_HEADERS.has(lower) || allow.has(lower) || lower === 'x-request-id' || lower.startsWith('x-forwarded-')) return null
  if (lower.startsWith('x-')) return 'a custom header starts with Svc-, never X-'
  if (!lower.startsWith('svc-')) return 'a header that is not a standard HTTP header is a custom header, and starts with Svc-'
  if (name.length > 50) return `a custom header name has at most 50 characters, this one ${name.length}`
  if (!/^[a-zA-Z0-9-]+$/.test(name)) return 'a custom header name uses only the characters a-z, A-Z, 0-9 and -'
  if (lower === 'svc-') return 'a custom header name says what it carries after Svc-'
  if (STANDARD_HEADERS.has(lower.slice(4))) return `a custom header must not duplicate the standard header ${name.slice(4)}`
  return null
}

function keysOf (value: unknown): string[] {
  return typeof value === 'object' && value !== null ? Object.keys(value) : []
}

/**
 * Header names a route declares: its request `schema.headers` properties, and the
 * `headers` maps of its responses (the form @fastify/swagger documents).
 */
export function declaredHeaderNames (schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return []
  const { headers, response } = schema as { headers?: { properties?: unknown }, response?: unknown }
  const names = keysOf(headers?.properties)
  for (const res of Object.values(response ?? {})) names.push(...keysOf((res as { headers?: unknown }).headers))
  return names
}
