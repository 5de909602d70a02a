import { isIPv6 } from 'node:net'

/**
 * The address a client is counted by, per address (the rate limit without a token, the
 * token-guessing throttle): an IPv4 address as it is, an IPv4-mapped IPv6 one as the IPv4
 * address it maps, and any other IPv6 one as its /64 (`2001:db8:1:2::/64`). A host is given a
 * whole /64 and may send from any of its addresses, so counting each apart would let one
 * client guess tokens without end, and push every other address out of the counts.
 */
export function countedAddress (ip: string): string {
  if (!ip.includes(':') || !isIPv6(ip)) return ip
  const address = ip.toLowerCase().split('%')[0] as string
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  if (mapped !== null) return mapped[1] as string
  const [head, tail] = address.split('::') as [string, string | undefined]
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  // An IPv4 address written at the end holds two groups' bits.
  const width = back.length + (back.at(-1)?.includes('.') === true ? 1 : 0)
  const groups = tail === undefined ? front : [...front, ...new Array<string>(8 - front.length - width).fill('0'), ...back]
  return `${groups.slice(0, 4).map(g => g.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
