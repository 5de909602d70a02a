import t from 'tap'
import fc from 'fast-check'
import { guardedLookup, isInternalAddress, refuseTarget, type Resolver } from '../../plugins/events/targets.js'
import { literalRefused } from '../../plugins/events/targets.js'
import { parseRetrySchedule } from '../../plugins/events/index.js'

// Safe targets: a subscriber's URL must not make the service reach its own neighbours.

const stub = (table: Record<string, string[]>): Resolver => async (hostname) => {
  const addresses = table[hostname]
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
  return addresses.map(address => ({ address, family: address.includes(':') ? 6 : 4 }))
}

t.test('internal addresses, IPv4 and IPv6, IPv4-mapped included', async t => {
  const internal = [
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.1', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255', '192.0.2.1', '198.18.0.1', '192.88.99.1',
    '::', '::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '::ffff:0:a00:1', '::ffff:0:7f00:1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1', '2002:a00:1::1', '3fff::1', '3fff:fff::1', '5f00::1', 'not an address'
  ]
  const external = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '192.88.100.1', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '3fff:1000::1', '5f01::1']
  for (const a of internal) t.equal(isInternalAddress(a), true, a)
  for (const a of external) t.equal(isInternalAddress(a), false, a)
})

t.test('NAT64 (64:ff9b::/96, RFC 6052): judged by the IPv4 address it embeds, which its translator reaches', async t => {
  const internal = ['64:ff9b::a00:1', '64:ff9b::10.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::c0a8:101', '64:ff9b::', '64:ff9b::ffff:ffff']
  const external = ['64:ff9b::5db8:d822', '64:ff9b::93.184.216.34', '64:ff9b::808:808']
  for (const a of internal) t.equal(isInternalAddress(a), true, a)
  for (const a of external) t.equal(isInternalAddress(a), false, a)
  t.equal((await refuseTarget('https://[64:ff9b::a9fe:a9fe]/latest/meta-data', false, stub({})))?.code, 'URL_INTERNAL_ADDRESS', 'a literal')
  t.equal((await refuseTarget('https://nat64.example.com/in', false, stub({ 'nat64.example.com': ['64:ff9b::a00:7'] })))?.code, 'URL_INTERNAL_ADDRESS', 'a name a DNS64 server answers')
  t.equal(literalRefused('https://[64:ff9b::7f00:1]/x'), true, 'before each attempt')
})

t.test('at save: no credentials; https only; no literal or name reaching an internal address; insecure allows all', async t => {
  const resolve = stub({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'], 'sneaky.example.com': ['93.184.216.34', '192.168.1.5'], 'empty.example.com': [] })
  const cases: Array<[string, string | null]> = [
    ['https://hooks.example.com/in', null],
    ['https://93.184.216.34/in', null],
    ['http://hooks.example.com/in', 'URL_NOT_HTTPS'],
    ['https://127.0.0.1/in', 'URL_INTERNAL_ADDRESS'],
    ['https://[::1]/in', 'URL_INTERNAL_ADDRESS'],
    ['https://10.1.2.3/in', 'URL_INTERNAL_ADDRESS'],
    ['https://169.254.169.254/latest/meta-data', 'URL_INTERNAL_ADDRESS'],
    ['https://[::ffff:127.0.0.1]/in', 'URL_INTERNAL_ADDRESS'],
    ['https://0x7f.1/in', 'URL_INTERNAL_ADDRESS'],
    ['https://sneaky.example.com/in', 'URL_INTERNAL_ADDRESS'],
    ['https://nowhere.example.com/in', 'URL_UNRESOLVABLE'],
    ['https://empty.example.com/in', 'URL_UNRESOLVABLE']
  ]
  for (const [url, code] of cases) t.equal((await refuseTarget(url, false, resolve))?.code ?? null, code, url)
  t.equal(await refuseTarget('http://127.0.0.1:8080/in', true, resolve), null, 'WEBHOOK_ALLOW_INSECURE_TARGETS=true')
  // What the schema's `uri` format accepts and no client can connect to, whatever the setting.
  for (const url of ['https://example.com:99999/', 'https://93.184.215.14:65536/', 'https://%00/', 'https://%ff/', 'https://a%20b/']) {
    for (const insecure of [false, true]) t.equal((await refuseTarget(url, insecure, resolve))?.code, 'INPUT_INVALID', `${url}, insecure ${String(insecure)}`)
  }
  for (const url of ['https://user:pw@hooks.example.com/in', 'https://token@hooks.example.com/in', 'https://:pw@hooks.example.com/in', 'http://user:pw@127.0.0.1:8080/in']) {
    for (const insecure of [false, true]) t.equal((await refuseTarget(url, insecure, resolve))?.code, 'URL_CREDENTIALS', `${url}, insecure ${String(insecure)}: credentials refused whatever the setting`)
  }
})

t.test('a refusal the insecure setting would lift names that setting, when one is given', async t => {
  const resolve = stub({ 'hooks.example.com': ['93.184.216.34'], localhost: ['127.0.0.1'] })
  const setting = 'WEBHOOK_ALLOW_INSECURE_TARGETS=true'
  t.strictSame(await refuseTarget('http://hooks.example.com/in', false, resolve, setting), { code: 'URL_NOT_HTTPS', message: `must be an https:// URL (in local development, ${setting} allows it)` })
  t.strictSame(await refuseTarget('https://localhost:8443/in', false, resolve, setting), { code: 'URL_INTERNAL_ADDRESS', message: `must not resolve to a loopback, private, link-local or other internal address (in local development, ${setting} allows it)` })
  t.strictSame(await refuseTarget('http://hooks.example.com/in', false, resolve), { code: 'URL_NOT_HTTPS', message: 'must be an https:// URL' }, 'none named')
  t.strictSame(await refuseTarget('https://nowhere.example.com/in', false, resolve, setting), { code: 'URL_UNRESOLVABLE', message: 'must name a host that resolves to an address' }, 'a host that does not resolve: no setting lifts that')
})

t.test('at connect: every address a name resolves to is checked again; literals before the attempt', async t => {
  const lookup = guardedLookup(stub({ 'good.example.com': ['93.184.216.34'], 'rebound.example.com': ['10.0.0.7'], 'empty.example.com': [] }))
  const ask = async (host: string, all: boolean): Promise<{ err: Error | null, address: unknown }> => await new Promise((resolve) => {
    (lookup as any)(host, { all }, (err: Error | null, address: unknown) => { resolve({ err, address }) })
  })
  t.strictSame(await ask('good.example.com', false), { err: null, address: '93.184.216.34' })
  t.strictSame((await ask('good.example.com', true)).address, [{ address: '93.184.216.34', family: 4 }])
  t.match((await ask('rebound.example.com', false)).err, { code: 'SVC_ERR_INTERNAL_TARGET' })
  t.match((await ask('empty.example.com', false)).err, { code: 'SVC_ERR_INTERNAL_TARGET' })
  t.match((await ask('unknown.example.com', false)).err, { code: 'ENOTFOUND' })
  t.equal(literalRefused('https://[::1]:8443/x'), true)
  t.equal(literalRefused('https://169.254.169.254/x'), true)
  t.equal(literalRefused('https://93.184.216.34/x'), false)
  t.equal(literalRefused('https://hooks.example.com/x'), false)
})

t.test('WEBHOOK_RETRY_SCHEDULE: comma-separated durations', async t => {
  t.strictSame(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h'), [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
  t.strictSame(parseRetrySchedule(' 100ms , 1 second '), [100, 1000])
  for (const bad of ['', '5s,', 'soon', '5 fortnights', '-1s']) t.equal(parseRetrySchedule(bad), null, bad)
  fc.assert(fc.property(fc.array(fc.nat({ max: 10_000_000 }), { minLength: 1, maxLength: 10 }), (ms) => {
    t.strictSame(parseRetrySchedule(ms.map(n => `${n}ms`).join(',')), ms)
  }))
})

t.test('the system resolver answers every address of a name', async t => {
  const { systemResolver } = await import('../../plugins/events/targets.js')
  const addresses = await systemResolver('localhost')
  t.ok(addresses.length > 0)
  t.ok(addresses.every(a => isInternalAddress(a.address)), 'localhost is loopback')
  await t.rejects(systemResolver('name.invalid'))
})
