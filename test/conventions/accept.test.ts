import t from 'tap'
import { build, headers } from './app.js'

const textOnly = { config: { conventions: { produces: ['text/csv', 'text/plain'] } } }

t.test('Accept negotiation on a JSON route', async t => {
  const app = await build(t)
  const cases: Array<[string | undefined, number]> = [
    [undefined, 200],
    ['', 200],
    ['  ', 200],
    ['application/json', 200],
    ['*/*', 200],
    ['application/*', 200],
    ['APPLICATION/JSON', 200],
    ['text/html, application/json;q=0.1', 200],
    ['application/json; charset=utf-8', 200],
    ['application/json; charset="UTF-8"', 200],
    ['text/html', 406],
    ['application/json;q=0', 406],
    ['application/json;q=0, */*', 406],
    ['*/*;q=0', 406],
    ['application/problem+json', 406],
    ['application/json; charset=iso-8859-1', 406],
    ['application/json; version=2', 406],
    ['application/json;q=2', 406],
    ['*/json', 406],
    ['foo', 406]
  ]
  for (const [accept, status] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ accept }) })
    t.equal(res.statusCode, status, `Accept ${JSON.stringify(accept)} gives ${status}`)
    if (status === 200) {
      t.equal(res.json().negotiatedType, 'application/json')
    } else {
      t.match(res.json(), {
        title: 'Not Acceptable',
        status: 406,
        instance: '/echo',
        detail: `None of the media types in the Accept header ${JSON.stringify(accept)} can be produced by GET /echo; accept application/json.`
      })
      // The refusal is still a problem document (RFC 9457), whatever Accept said.
      t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
    }
  }
})

t.test('JSON wins whenever it is acceptable; otherwise weight, then route order', async t => {
  const app = await build(t, {}, app => {
    app.get('/text', textOnly, async request => ({ negotiatedType: request.negotiatedType }))
  })
  const cases: Array<[string, string | undefined, string | null]> = [
    ['/csv', undefined, 'application/json'],
    ['/csv', 'text/csv', 'text/csv'],
    ['/csv', '*/*', 'application/json'],
    ['/csv', 'text/csv, application/json;q=0.5', 'application/json'],
    ['/csv', 'text/*', 'text/csv'],
    ['/csv', 'text/csv;q=0.5, application/json;q=0', 'text/csv'],
    ['/text', undefined, 'text/csv'],
    ['/text', ' ', 'text/csv'],
    ['/text', 'text/plain, text/csv;q=0.5', 'text/plain'],
    ['/text', 'text/*', 'text/csv'],
    ['/text', 'text/*;q=0.5, text/plain;q=0.9', 'text/plain'],
    ['/text', 'application/json', null]
  ]
  for (const [url, accept, chosen] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: headers({ accept }) })
    if (chosen === null) {
      t.equal(res.statusCode, 406)
      t.equal(res.json().detail, 'None of the media types in the Accept header "application/json" can be produced by GET /text; accept text/csv, text/plain.')
    } else {
      t.equal(res.statusCode, 200)
      t.equal(res.json().negotiatedType, chosen, `${url} with ${String(accept)} → ${chosen}`)
    }
  }
})

t.test('unknown paths are not negotiated: their 404 stands', async t => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/nowhere', headers: headers({ accept: 'text/html' }) })
  t.equal(res.statusCode, 404)
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { accept: false })
  const res = await off.inject({ method: 'GET', url: '/echo', headers: headers({ accept: 'text/html' }) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().negotiatedType, null, 'nothing negotiated')
  // A route cannot switch on what the plugin has off: its `produces` is ignored.
  t.equal((await off.inject({ method: 'GET', url: '/csv', headers: headers({ accept: 'text/html' }) })).statusCode, 200)

  const app = await build(t, {}, app => {
    app.get('/any', { config: { conventions: { accept: false } } }, async request => ({ negotiatedType: request.negotiatedType }))
    app.get('/any-listed', { config: { conventions: { accept: false, produces: ['text/csv'] } } }, async () => ({}))
    app.get('/listed-any', { config: { conventions: { produces: ['text/csv'], accept: false } } }, async () => ({}))
  })
  for (const url of ['/any', '/any-listed', '/listed-any', '/health']) {
    t.equal((await app.inject({ method: 'GET', url, headers: headers({ accept: 'text/html' }) })).statusCode, 200, url)
  }
})

t.test('a global produces list applies to every route', async t => {
  const app = await build(t, { produces: ['application/vnd.svc-thing+json', 'application/json'] })
  const a = await app.inject({ method: 'GET', url: '/echo', headers: headers({ accept: 'application/vnd.svc-thing+json' }) })
  t.equal(a.json().negotiatedType, 'application/vnd.svc-thing+json')
  const b = await app.inject({ method: 'GET', url: '/echo', headers: headers({ accept: 'text/html' }) })
  t.equal(b.json().detail, 'None of the media types in the Accept header "text/html" can be produced by GET /echo; accept application/vnd.svc-thing+json, application/json.')
})
