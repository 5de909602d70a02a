import t from 'tap'
import fc from 'fast-check'
import { BlockList } from 'node:net'
import { countedAddress } from '../../plugins/shared/client-address.js'

// A client is counted by its IPv4 address, or by the /64 of its IPv6 one: a host may send from
// any address of its /64.

t.test('the address each form is counted by', async t => {
  const table: Array<[string, string]> = [
    ['10.0.0.1', '10.0.0.1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::FFFF:192.168.1.9', '192.168.1.9'],
    ['2001:db8:1:2::5', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1:2:3:4:5.6.7.8', '0:0:1:2::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['not an address', 'not an address'],
    ['2001:db8:::1', '2001:db8:::1']
  ]
  for (const [ip, counted] of table) t.equal(countedAddress(ip), counted, ip)
})

t.test('property: an IPv6 address lies in the /64 it is counted by, with every address that shares its first 64 bits', async t => {
  const group = fc.integer({ min: 0, max: 0xffff }).map(n => n.toString(16))
  fc.assert(fc.property(fc.ipV6(), fc.array(group, { minLength: 4, maxLength: 4 }), (ip, low) => {
    const counted = countedAddress(ip)
    if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip)) return counted === ip.slice(7)
    const network = counted.slice(0, -'/64'.length)
    const subnet = new BlockList()
    subnet.addSubnet(network, 64, 'ipv6')
    if (!subnet.check(ip, 'ipv6')) return false
    // Another address of the same /64: its first four groups, and other last four.
    const sibling = `${network.slice(0, -'::'.length)}:${low.join(':')}`
    return countedAddress(sibling) === counted
  }))
})
