import t from 'tap'
import { Agent, MockAgent } from 'undici'
import { createDownstream, type DownstreamOptions } from '../../plugins/downstream/index.js'
import { SERVICE, USER_AGENT } from './helper.js'

const good = { service: SERVICE, userAgent: USER_AGENT }

t.test('bad options throw at creation, naming the option and the value', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /downstream plugin: the options must be an object, got undefined/],
    [{ ...good, serviec: {} }, /unknown option serviec \(did you mean service\?\)/],
    [{ userAgent: USER_AGENT }, /service must be this service's \{ id, name \}, got undefined/],
    [{ ...good, service: 'orders' }, /service must be an object, got "orders"/],
    [{ ...good, service: { id: SERVICE.id, name: 'orders', version: '2' } }, /unknown option service\.version/],
    [{ ...good, service: { ...SERVICE, id: 'not-a-uuid' } }, /service\.id must be a UUID, got "not-a-uuid"/],
    [{ ...good, service: { ...SERVICE, name: 'Orders Service' } }, /service\.name must be 1 to 60 characters among a-z, 0-9 and -, got "Orders Service"/],
    [{ service: SERVICE }, /userAgent must be \{ product, version \}/],
    [{ ...good, userAgent: { product: 'orders service', version: 2 } }, /userAgent\.product must be a token such as "orders-service", got "orders service"/],
    [{ ...good, userAgent: { product: 'orders', version: '2.1' } }, /userAgent\.version must be the major version, digits only, got "2.1"/],
    [{ ...good, userAgent: { product: 'orders', version: [2] } }, /userAgent\.version must be the major version, digits only, got \[2\]/],
    [{ ...good, userAgent: { product: 'orders', version: 2, comment: 'a (b' } }, /userAgent\.comment must be text without parentheses or control characters, got "a \(b"/],
    [{ ...good, baseUrl: 'not a url' }, /baseUrl must be an http:\/\/ or https:\/\/ URL, got "not a url"/],
    [{ ...good, baseUrl: 'ftp://example.com/' }, /baseUrl must be an http:\/\/ or https:\/\/ URL, got "ftp:\/\/example\.com\/"/],
    [{ ...good, timeouts: { header: 5 } }, /unknown option timeouts\.header \(did you mean timeouts\.headers\?\)/],
    [{ ...good, timeouts: { headers: 0 } }, /^downstream plugin: timeouts\.headers must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 0$/],
    [{ ...good, timeouts: { body: 1.5 } }, /^downstream plugin: timeouts\.body must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 1\.5$/],
    [{ ...good, timeouts: { total: 0 } }, /^downstream plugin: timeouts\.total must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 0$/],
    // Node takes a longer timer delay as 1 ms: every call would time out at once.
    [{ ...good, timeouts: { headers: 2147483648 } }, /^downstream plugin: timeouts\.headers must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ ...good, timeouts: { body: 2147483648 } }, /^downstream plugin: timeouts\.body must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ ...good, timeouts: { total: 2147483648 } }, /^downstream plugin: timeouts\.total must be a positive integer of milliseconds up to 2147483647 \(about 24\.8 days, the longest a timer waits\), got 2147483648$/],
    [{ ...good, maxResponseBytes: '1MB' }, /maxResponseBytes must be an integer of 1 or more, got "1MB"/],
    [{ ...good, retry: true }, /retry must be an object, got true/],
    [{ ...good, retry: { attempts: 0 } }, /retry\.attempts must be an integer of 1 or more, got 0/],
    [{ ...good, retry: { base: 500, cap: 100 } }, /retry\.cap must be at least retry\.base \(500\), got 100/],
    [{ ...good, retry: { maxRetryAfter: -1 } }, /retry\.maxRetryAfter must be an integer of 0 or more, got -1/],
    [{ ...good, defaultExecutionContext: 'Prod' }, /defaultExecutionContext must be 1 to 100 characters among a-z, 0-9, _ and -, got "Prod"/],
    [{ ...good, dispatcher: {} }, /dispatcher must be an undici Dispatcher \(Agent, Pool, MockAgent…\), got \{\}/],
    [{ ...good, dispatcher: null }, /dispatcher must be an undici Dispatcher/],
    [{ ...good, dispatcher: () => {} }, /dispatcher must be an undici Dispatcher \(Agent, Pool, MockAgent…\), got a function/],
    [{ ...good, sleep: 100 }, /sleep must be a function, got 100/],
    [{ ...good, after: 100 }, /after must be a function, got 100/],
    [{ ...good, now: 'now' }, /now must be a function, got "now"/],
    [{ ...good, random: {} }, /random must be a function, got \{\}/]
  ]
  for (const [options, message] of cases) t.throws(() => createDownstream(options as DownstreamOptions), { name: 'TypeError', message }, message.source)
})

t.test('good options: the defaults, a cap above the default base, a dispatcher of the caller\'s', async t => {
  const clients = [
    createDownstream(good),
    createDownstream({ ...good, retry: false, timeouts: {}, defaultExecutionContext: 'live' }),
    createDownstream({ ...good, retry: { base: 10_000 } }),
    // The longest a timer waits; the retry waits, never slept past timeouts.total, need no bound.
    createDownstream({ ...good, timeouts: { headers: 2147483647, body: 2147483647, total: 2147483647 } }),
    createDownstream({ ...good, retry: { base: 2147483648 * 10, cap: 2147483648 * 10, maxRetryAfter: 2147483648 * 10 } }),
    createDownstream({ ...good, userAgent: { product: 'orders', version: '3', comment: 'team' }, baseUrl: 'https://orders.example.com/api/' })
  ]
  for (const c of clients) await c.close()

  // A MockAgent in place of the network; closing the client leaves it open.
  const mock = new MockAgent()
  mock.disableNetConnect()
  t.teardown(() => mock.close())
  mock.get('https://authors.example.com').intercept({ path: '/v1/authors/1', method: 'GET' }).reply(200, { id: '1' }, { headers: { 'content-type': 'application/json' } }).times(2)
  const c = createDownstream({ ...good, dispatcher: mock })
  t.strictSame((await c.get('https://authors.example.com/v1/authors/1')).body, { id: '1' })
  await c.close()
  t.strictSame((await createDownstream({ ...good, dispatcher: mock }).get('https://authors.example.com/v1/authors/1')).body, { id: '1' }, 'the dispatcher still works')
  t.ok(new Agent(), 'undici is there for adopters to build agents with')
})

t.test('a relative URL needs a baseUrl', async t => {
  const c = createDownstream(good)
  t.teardown(() => c.close())
  await t.rejects(c.get('/v1/authors'), { name: 'TypeError' })
})
