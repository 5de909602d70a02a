import t from 'tap'
import type { InjectOptions } from 'fastify'
import { build, headers, type Echo } from './app.js'

const HEADER = 'svc-execution-context'

t.test('absent means the default context, and nothing is echoed', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers() })
  t.equal(res.json<Echo>().executionContext, 'prod')
  t.notOk(HEADER in res.headers)
})

t.test('supported values are set on the request and echoed', async t => {
  const app = await build(t)
  for (const value of ['prod', 'preprod']) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: value }) })
    t.equal(res.statusCode, 200)
    t.equal(res.json<Echo>().executionContext, value)
    t.equal(res.headers[HEADER], value)
  }
})

t.test('an accepted context is echoed on every refusal, also those decided before it (403, 406, 415)', async t => {
  const app = await build(t)
  const cases: Array<[string, InjectOptions, number]> = [
    ['no User-Agent', { method: 'GET', url: '/echo', headers: headers({ 'user-agent': undefined, [HEADER]: 'preprod' }) }, 403],
    ['Accept: text/html', { method: 'GET', url: '/echo', headers: headers({ accept: 'text/html', [HEADER]: 'preprod' }) }, 406],
    ['a text/plain body', { method: 'POST', url: '/echo', payload: 'x', headers: headers({ 'content-type': 'text/plain', [HEADER]: 'preprod' }) }, 415],
    ['a bad Svc-Service', { method: 'GET', url: '/echo', headers: headers({ 'svc-service': 'id=nope', [HEADER]: 'preprod' }) }, 400],
    ['an unknown path', { method: 'GET', url: '/nowhere', headers: headers({ [HEADER]: 'preprod' }) }, 404]
  ]
  for (const [name, request, status] of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, status, name)
    t.equal(res.headers[HEADER], 'preprod', `${name}: echoed`)
  }
  const both = await app.inject({ method: 'GET', url: '/echo', headers: headers({ 'user-agent': undefined, [HEADER]: 'staging' }) })
  t.equal(both.statusCode, 403, 'a missing User-Agent still comes before a bad context')
  t.equal(both.headers[HEADER], 'staging', 'a well-formed context is echoed even when unsupported (the requested value)')
})

t.test('invalid or unsupported values give 400 Invalid Data', async t => {
  const app = await build(t)
  const pattern = 'must be 1 to 100 characters among a-z, 0-9, _ and -'
  const unsupported = 'names an execution context this service does not support; use one of prod, preprod, or omit the header for prod'
  const cases: Array<[string | string[], string, string]> = [
    ['staging', unsupported, 'staging'],
    ['PROD', pattern, 'PROD'],
    ['', pattern, ''],
    ['pré', pattern, 'pré'],
    ['a.b', pattern, 'a.b'],
    ['a'.repeat(101), pattern, 'a'.repeat(101)],
    [['prod', 'preprod'], pattern, 'prod, preprod']
  ]
  for (const [value, message, shown] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: value }) })
    t.equal(res.statusCode, 400, `${JSON.stringify(value)} refused`)
    t.strictSame(res.json().context, [{ code: 'INPUT_INVALID', message, field: 'Svc-Execution-Context', source: 'header', value: shown.length > 200 ? shown.slice(0, 200) + '…' : shown }])
    t.equal(res.json().title, 'Invalid Data')
    // The requested value, malformed or not (conventions: "the requested or the effective value").
    t.equal(res.headers[HEADER], Array.isArray(value) ? value.join(', ') : value, 'the requested value is echoed')
  }
})

t.test('extra names, another default, and a predicate', async t => {
  const app = await build(t, { executionContext: { extra: ['qa-1', 'x'.repeat(100)], default: 'preprod' } })
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers() })).json<Echo>().executionContext, 'preprod')
  for (const value of ['qa-1', 'x'.repeat(100), 'prod']) {
    t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: value }) })).statusCode, 200, value)
  }

  const tenants = await build(t, { executionContext: { supported: (name, request) => name.startsWith('tenant-') && request.method === 'GET', extra: ['sandbox'] } })
  t.equal((await tenants.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'tenant-a' }) })).json<Echo>().executionContext, 'tenant-a')
  t.equal((await tenants.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'sandbox' }) })).statusCode, 200)
  const refused = await tenants.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'other' }) })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().context[0].message, 'names an execution context this service does not support; use a context this service runs, or omit the header for prod')
  t.equal((await tenants.inject({ method: 'DELETE', url: '/echo', headers: headers({ [HEADER]: 'tenant-a' }) })).statusCode, 400, 'the predicate gets the request')
})

t.test('switched off: anything passes, the default is still set, nothing is echoed', async t => {
  const off = await build(t, { executionContext: false })
  const res = await off.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'NOT VALID' }) })
  t.equal(res.statusCode, 200)
  t.equal(res.json<Echo>().executionContext, 'prod')
  t.notOk(HEADER in res.headers)

  const app = await build(t, {}, app => {
    app.get('/free', { config: { conventions: { executionContext: false } } }, async request => ({ executionContext: request.executionContext }))
  })
  for (const url of ['/free', '/health']) {
    const r = await app.inject({ method: 'GET', url, headers: headers({ [HEADER]: 'staging' }) })
    t.equal(r.statusCode, 200, url)
    t.equal(r.json().executionContext, 'prod')
  }
})
