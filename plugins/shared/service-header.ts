// Svc-Service (conventions: Headers): read from requests by the conventions plugin, written on
// outgoing calls by the downstream client.

/** The calling service as described by its `Svc-Service` header. */
export interface CallingService {
  /** The service's UUID (the `id` attribute). */
  id: string
  /** The `name` attribute, when sent. */
  name?: string
  /** Every other attribute, by key. */
  attributes: Record<string, string>
}

/** A service as written in a `Svc-Service` header. */
export interface ServiceDescription {
  id: string
  name?: string
  attributes?: Record<string, string>
}

export interface ServiceHeaderViolation { message: string, value: string }

export type ServiceHeaderResult =
  | { ok: true, service: CallingService }
  | { ok: false, violations: ServiceHeaderViolation[] }

export const CAMEL_CASE_KEY = /^[a-z][a-zA-Z0-9]*$/
/** Visible ASCII without the delimiters `"`, `,`, `;`, `=` and `\`, so values never need quoting. */
export const ATTRIBUTE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c\x3e-\x5b\x5d-\x7e]+$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const SERVICE_NAME = /^[a-z0-9-]{1,60}$/

/**
 * Parses `key=value` attributes separated by `;`, whitespace allowed after a delimiter
 * only. Collects every violation rather than stopping at the first. Never throws.
 */
export function parseServiceHeader (value: string): ServiceHeaderResult {
  const violations: ServiceHeaderViolation[] = []
  const seen = new Set<string>()
  const attributes: Record<string, string> = {}
  let id: string | undefined
  let name: string | undefined
  value.split(';').forEach((raw, index) => {
    const part = index === 0 ? raw : raw.replace(/^[ \t]+/, '')
    const eq = part.indexOf('=')
    if (eq < 0) {
      violations.push({ message: part === '' ? 'must not have an empty attribute between ";" delimiters' : 'must be key=value attributes separated by ";"', value: part })
      return
    }
    const key = part.slice(0, eq)
    const v = part.slice(eq + 1)
    if (!CAMEL_CASE_KEY.test(key)) {
      violations.push({ message: `has the key "${key}", which is not camelCase`, value: part })
      return
    }
    if (seen.has(key)) {
      violations.push({ message: `repeats the key "${key}"`, value: part })
      return
    }
    // Conventions: extra attributes "describe one service only, and carry no versions".
    if (/version/i.test(key)) {
      violations.push({ message: `has the key "${key}", but its attributes carry no versions (the header names a service, not a release of it)`, value: part })
      return
    }
    seen.add(key)
    if (!ATTRIBUTE_VALUE.test(v)) {
      violations.push({ message: `has an empty value, whitespace or one of " , ; = \\ in the value of "${key}"`, value: part })
      return
    }
    if (key === 'id') id = v
    else if (key === 'name') name = v
    else attributes[key] = v
  })
  if (id === undefined) {
    if (!seen.has('id')) violations.push({ message: 'must have an id attribute holding the service UUID', value })
  } else if (!UUID.test(id)) {
    violations.push({ message: 'must have an id that is a UUID', value: id })
  }
  if (name !== undefined && !SERVICE_NAME.test(name)) {
    violations.push({ message: 'must have a name of 1 to 60 characters among a-z, 0-9 and -', value: name })
  }
  if (violations.length > 0 || id === undefined) return { ok: false, violations }
  return { ok: true, service: name === undefined ? { id, attributes } : { id, name, attributes } }
}

/** Writes a service description as a header value: `id=…; name=…; key=value`. */
export function formatServiceHeader (service: ServiceDescription): string {
  const parts = [`id=${service.id}`]
  if (service.name !== undefined) parts.push(`name=${service.name}`)
  for (const [k, v] of Object.entries(service.attributes ?? {})) parts.push(`${k}=${v}`)
  return parts.join('; ')
}
