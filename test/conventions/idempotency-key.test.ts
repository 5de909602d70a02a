import t from 'tap'
import { build, headers, type Echo } from './app.js'

const HEADER = 'svc-idempotency-key'
const key = '5b0c8a4e-3f1d-4c2a-9e7b-1d2c3b4a5f60'

t.test('valid keys, bare or quoted, reach request.idempotencyKey', async t => {
  const app = await build(t)
  const cases: Array<[string, string]> = [
    [key, key],
    [`"${key}"`, key],
    ['a'.repeat(20), 'a'.repeat(20)],
    ['0'.repeat(255), '0'.repeat(255)]
  ]
  for (const method of ['POST', 'PUT', 'DELETE'] as const) {
    for (const [sent, read] of cases) {
      const res = await app.inject({ method, url: '/echo', headers: headers({ [HEADER]: sent }) })
      t.equal(res.statusCode, 200, `${method} ${sent.slice(0, 30)}`)
      t.equal(res.json<Echo>().idempotencyKey, read)
    }
  }
  t.equal((await app.inject({ method: 'POST', url: '/echo', headers: headers() })).json<Echo>().idempotencyKey, null)
})

t.test('a malformed key gives 400 Invalid Data', async t => {
  const app = await build(t)
  const message = 'must be 20 to 255 characters among a-z, 0-9 and - (a lowercase UUID fits), bare or in double quotes'
  for (const value of ['short', key.toUpperCase(), 'a'.repeat(256), `"${key}`, `${key}"`, '"', '""', `'${key}'`, `${key} `, 'a_'.repeat(15)]) {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: headers({ [HEADER]: value }) })
    t.equal(res.statusCode, 400, JSON.stringify(value))
    t.strictSame(res.json().context, [{ code: 'INPUT_INVALID', message, field: 'Svc-Idempotency-Key', source: 'header', value: value.length > 200 ? value.slice(0, 200) + '…' : value }])
  }
})

t.test('the key is not used on GET or HEAD', async t => {
  const app = await build(t)
  for (const method of ['GET', 'HEAD'] as const) {
    const res = await app.inject({ method, url: '/echo', headers: headers({ [HEADER]: key }) })
    t.equal(res.statusCode, 400, method)
    if (method === 'GET') {
      t.strictSame(res.json().context, [{ code: 'INPUT_INVALID', message: 'is not used on GET; send it only with requests that change state', field: 'Svc-Idempotency-Key', source: 'header', value: key }])
    }
  }
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { idempotencyKey: false })
  const res = await off.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'x' }) })
  t.equal(res.statusCode, 200)
  t.equal(res.json<Echo>().idempotencyKey, null)

  const app = await build(t, {}, app => {
    app.get('/free', { config: { conventions: { idempotencyKey: false } } }, async () => ({}))
  })
  for (const url of ['/free', '/health']) {
    t.equal((await app.inject({ method: 'GET', url, headers: headers({ [HEADER]: key }) })).statusCode, 200, url)
  }
})
