import { lookup as dnsLookup } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** Resolves a host name to every address it has, as `dns.promises.lookup(name, { all: true })` does. */
export type Resolver = (hostname: string) => Promise<Array<{ address: string, family: number }>>

/** The system resolver (getaddrinfo, as connections use it). */
export const systemResolver: Resolver = async (hostname) => await new Promise((resolve, reject) => {
  dnsLookup(hostname, { all: true }, (err, addresses) => { if (err === null) resolve(addresses); else reject(err) })
})

/**
 * Addresses a subscriber's URL must not reach: the service's own host and network, and what
 * is not a public unicast address (IANA special-purpose registries, RFC 6890). An attacker
 * who may name a URL must not make the service call its neighbours (server-side request forgery).
 */
// Two lists: a BlockList checks an IPv4 address against IPv6 rules too, through the IPv4-mapped form.
const INTERNAL_V4 = new BlockList()
const INTERNAL_V6 = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated, RFC 7526)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4] // reserved, broadcast
] as const) {
  INTERNAL_V4.addSubnet(net, bits, 'ipv4')
  // NAT64's well-known prefix (RFC 6052) embeds an IPv4 address in its last 32 bits, which the
  // translator reaches: judged by that address (a DNS64 network gives public names such addresses too).
  INTERNAL_V6.addSubnet(`64:ff9b::${net}`, 96 + bits, 'ipv6')
}
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped: would reach any IPv4 address, internal ones included
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 2765): embeds any IPv4 address too
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // segment routing identifiers (RFC 9602)
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8] // multicast
] as const) INTERNAL_V6.addSubnet(net, bits, 'ipv6')

/** Whether `address` (an IP literal) is loopback, private, link-local or otherwise not a public unicast address. */
export function isInternalAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return family === 4 ? INTERNAL_V4.check(address, 'ipv4') : INTERNAL_V6.check(address, 'ipv6')
}

/** A URL refused as a subscriber's target: the rule it breaks, for a 400 naming it. */
export interface TargetRefusal {
  code: 'INPUT_INVALID' | 'URL_CREDENTIALS' | 'URL_NOT_HTTPS' | 'URL_INTERNAL_ADDRESS' | 'URL_UNRESOLVABLE'
  message: string
}

/** The host of a URL as an IP literal (brackets removed), or null for a name. */
function literalOf (hostname: string): string | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  return isIP(bare) === 0 ? null : bare
}

/**
 * Checks a subscriber's URL when it is saved: `https://`, and every address its host has is a
 * public one. `allowInsecure` (local development, tests) accepts any http(s) URL. `allowedBy`
 * names the setting that turns `allowInsecure` on, for the refusals it would lift; null: none named.
 */
export async function refuseTarget (url: string, allowInsecure: boolean, resolve: Resolver, allowedBy: string | null = null): Promise<TargetRefusal | null> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    // The schema's `uri` format lets through what no client can connect to: a port over
    // 65535, a percent-escape or a space in the host.
    return { code: 'INPUT_INVALID', message: 'must be a URL a client can connect to: a host name or address without spaces or percent-escapes, and a port up to 65535' }
  }
  // A credential in the URL would be shown by every read of the subscription, which keeps its
  // secret out of them; the secret's signature is what tells the subscriber who is calling.
  if (parsed.username !== '' || parsed.password !== '') {
    return { code: 'URL_CREDENTIALS', message: 'must not carry a user name or password, which every read of the subscription would show; the subscriber authenticates deliveries by their signature' }
  }
  if (allowInsecure) return null
  const hint = allowedBy === null ? '' : ` (in local development, ${allowedBy} allows it)`
  if (parsed.protocol !== 'https:') return { code: 'URL_NOT_HTTPS', message: `must be an https:// URL${hint}` }
  const literal = literalOf(parsed.hostname)
  let addresses: string[]
  if (literal !== null) addresses = [literal]
  else {
    try {
      addresses = (await resolve(parsed.hostname)).map(a => a.address)
    } catch {
      return { code: 'URL_UNRESOLVABLE', message: 'must name a host that resolves to an address' }
    }
  }
  if (addresses.length === 0) return { code: 'URL_UNRESOLVABLE', message: 'must name a host that resolves to an address' }
  if (addresses.some(isInternalAddress)) {
    return { code: 'URL_INTERNAL_ADDRESS', message: `must not resolve to a loopback, private, link-local or other internal address${hint}` }
  }
  return null
}

/** Thrown when a connection would reach an internal address: the attempt fails, nothing is sent. */
export class InternalTarget extends Error {
  readonly code = 'SVC_ERR_INTERNAL_TARGET'
}

/**
 * The `lookup` of the delivery agent's connections: names are resolved again when connecting
 * (DNS may have changed since the subscription was saved), and a connection to a name with
 * any internal address is refused. IP literals do not go through a lookup; the dispatcher
 * checks them before each attempt (`literalRefused`).
 */
export function guardedLookup (resolve: Resolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (err: Error | null, address: string | Array<{ address: string, family: number }>, family?: number) => void) => {
    resolve(hostname).then((addresses) => {
      const bad = addresses.find(a => isInternalAddress(a.address))
      if (addresses.length === 0 || bad !== undefined) {
        callback(new InternalTarget(`${hostname} resolves to an internal address`), '', 0)
        return
      }
      if (options.all === true) callback(null, addresses)
      else callback(null, (addresses[0] as { address: string }).address, (addresses[0] as { family: number }).family)
    }, (err: Error) => { callback(err, '', 0) })
  }) as unknown as LookupFunction
}

/** Whether a URL names an internal IP literal (checked before each attempt: literals skip the lookup). */
export function literalRefused (url: string): boolean {
  const literal = literalOf(new URL(url).hostname)
  return literal !== null && isInternalAddress(literal)
}
