import t from 'tap'
import { build, headers } from './app.js'

const valid = [
  'order-service/2 (orders-team)',
  'order-service/2',
  'curl/8.4.0',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  'svc/1 (a (nested) comment)',
  'svc/1 (escaped \\) paren)',
  'svc/1\t(tab before the comment)',
  'svc/1 other-product other/v2',
  ' svc/1 (surrounding whitespace) '
]

const invalid = [
  '',
  'curl',
  'curl/',
  'curl/v8',
  '/1',
  'svc/1(no space)',
  'svc/1 (unclosed',
  'svc/1 (unbalanced))',
  'svc/1 (control\u0001char)',
  'svc/1 (dangling escape \\',
  'svc/1 (escaped control \\\u0001)',
  'svc/1 ,comma',
  'svc/1 other/',
  'svc 1'
]

t.test('default rule: version starts with a digit, comment optional', async t => {
  const app = await build(t)
  for (const ua of valid) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': ua }) })
    t.equal(res.statusCode, 200, `accepts ${JSON.stringify(ua)}`)
  }
  for (const ua of invalid) {
    const res = await app.inject({ method: 'GET', url: '/echo?x=1', headers: headers({ 'user-agent': ua }) })
    t.equal(res.statusCode, 403, `refuses ${JSON.stringify(ua)}`)
    const body = res.json()
    t.equal(body.title, 'Forbidden')
    t.equal(body.instance, '/echo')
    t.match(body.detail, /^Requests to \/echo need a User-Agent header of the form <product>\/<major-version> <comment>/)
    t.ok(body.detail.includes(`${JSON.stringify(ua)} does not follow it`), 'detail quotes the value')
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
  }
})

t.test('a missing User-Agent is refused with 403 naming the path', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/echo', headers: headers({ 'user-agent': undefined }), payload: { a: 1 } })
  t.equal(res.statusCode, 403)
  t.match(res.json(), { title: 'Forbidden', status: 403, instance: '/echo', detail: /Requests to \/echo need a User-Agent header .*; the header is missing\.$/ })
})

t.test('a User-Agent sent more than once is refused with 403, whatever the values', async t => {
  const app = await build(t)
  const cases: Array<[string, string[]]> = [
    ['the same valid value twice', ['svc/1 (a)', 'svc/1 (a)']],
    ['two valid values', ['svc/1', 'other/2']],
    ['a valid then an invalid value', ['svc/1', 'curl']],
    ['three lines', ['svc/1', 'svc/1', 'svc/1']]
  ]
  for (const [name, values] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo?x=1', headers: headers({ 'user-agent': values as unknown as string }) })
    t.equal(res.statusCode, 403, name)
    t.match(res.json(), { title: 'Forbidden', status: 403, instance: '/echo', detail: /^Requests to \/echo need a User-Agent header .*; the header is sent more than once; send it once\.$/ }, name)
  }
  // A custom rule is not asked: two lines are refused before it.
  const custom = await build(t, { userAgent: { validate: () => true } })
  t.equal((await custom.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': ['a', 'b'] as unknown as string }) })).statusCode, 403, 'custom validate')
  t.equal((await custom.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'a' }) })).statusCode, 200, 'custom validate, one line')
  const off = await build(t, { userAgent: false })
  t.equal((await off.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': ['a', 'b'] as unknown as string }) })).statusCode, 200, 'the rule off: not read, not refused')
})

t.test('a long value is cut short in the detail', async t => {
  const app = await build(t)
  const long = 'x'.repeat(150)
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': long }) })
  t.equal(res.statusCode, 403)
  t.ok(res.json().detail.endsWith(`; "${'x'.repeat(100)}…" does not follow it.`))
})

t.test('unknown paths need a User-Agent too', async t => {
  const app = await build(t)
  t.equal((await app.inject({ method: 'GET', url: '/nowhere', headers: headers({ 'user-agent': 'curl' }) })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/nowhere', headers: headers() })).statusCode, 404)
})

t.test('strictVersion wants digits only', async t => {
  const app = await build(t, { userAgent: { strictVersion: true } })
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'order-service/2' }) })).statusCode, 200)
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'curl/8.4.0' }) })
  t.equal(res.statusCode, 403)
  t.match(res.json().detail, /the version being digits only/)
})

t.test('requireComment wants a parenthesized comment', async t => {
  const app = await build(t, { userAgent: { requireComment: true } })
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'order-service/2 (team)' }) })).statusCode, 200)
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'order-service/2 other/1' }) })
  t.equal(res.statusCode, 403)
  t.match(res.json().detail, /with a comment in parentheses/)
})

t.test('a custom predicate replaces the syntax check', async t => {
  const seen: Array<string | undefined> = []
  const app = await build(t, {
    userAgent: {
      validate: async (value, request) => {
        seen.push(value)
        t.equal(typeof request.id, 'string', 'gets the request')
        return value === 'not-a-product-version'
      }
    }
  })
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': 'not-a-product-version' }) })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers() })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': undefined }) })).statusCode, 403)
  t.strictSame(seen, ['not-a-product-version', 'conventions-test/1 (tap)', undefined])
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { userAgent: false })
  t.equal((await off.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': undefined }) })).statusCode, 200)

  const app = await build(t, {}, app => {
    app.get('/no-ua', { config: { conventions: { userAgent: false } } }, async () => ({ ok: true }))
  })
  t.equal((await app.inject({ method: 'GET', url: '/no-ua', headers: headers({ 'user-agent': undefined }) })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: headers({ 'user-agent': undefined }) })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': undefined }) })).statusCode, 403)
})
