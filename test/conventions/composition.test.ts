import t from 'tap'
import Fastify from 'fastify'
import conventions from '../../plugins/conventions/index.js'
import { problems } from '../../plugins/problem/index.js'
import { build, headers } from './app.js'

const withSchema = {
  schema: {
    body: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'], additionalProperties: false },
    headers: { type: 'object', properties: { 'svc-trace-token': { type: 'string', pattern: '^[a-z]+$' } } }
  }
}

t.test('conventions refuse before parsing and validation; validation reports the rest', async t => {
  const app = await build(t, {}, app => {
    app.post('/items', withSchema, async request => ({ body: request.body }))
  })
  const cases: Array<[Record<string, string | undefined>, string, number, string]> = [
    [{ 'content-type': 'text/plain' }, '{"other":1}', 415, 'Unsupported Media Type'],
    [{ 'user-agent': undefined, 'content-type': 'application/json' }, '{"other":1}', 403, 'Forbidden'],
    [{ 'content-type': 'application/json', accept: 'text/html' }, '{"other":1}', 406, 'Not Acceptable'],
    [{ 'content-type': 'application/json', 'svc-idempotency-key': 'bad' }, 'not json', 400, 'Invalid Data'],
    [{ 'content-type': 'application/json' }, 'not json', 400, 'Bad Request'],
    [{ 'content-type': 'application/json' }, '{"other":1}', 400, 'Invalid Data'],
    [{ 'content-type': 'application/json', 'svc-trace-token': 'ABC' }, '{"name":"x"}', 400, 'Invalid Data'],
    [{ 'content-type': 'application/json' }, '{"name":"x"}', 200, '']
  ]
  for (const [extra, payload, status, title] of cases) {
    const res = await app.inject({ method: 'POST', url: '/items', headers: headers(extra), payload })
    t.equal(res.statusCode, status, `${JSON.stringify(extra)} ${payload}`)
    if (status !== 200) t.equal(res.json().title, title)
  }
  const invalid = await app.inject({ method: 'POST', url: '/items', headers: headers({ 'content-type': 'application/json' }), payload: '{"other":1}' })
  t.strictSame(invalid.json().context.map((i: { field: string }) => i.field).sort(), ['name', 'other'])
})

t.test('the checks run in a fixed order: version, User-Agent, Accept, Content-Type, then the 400s together', async t => {
  const app = await build(t)
  const bad = { accept: 'text/html', 'content-type': 'text/plain', 'svc-execution-context': 'BAD', 'svc-service': 'x', 'svc-idempotency-key': 'k' }
  const steps: Array<[Record<string, string | undefined>, number]> = [
    [{ ...bad, 'user-agent': 'nope' }, 403],
    [bad, 406],
    [{ ...bad, accept: undefined }, 415]
  ]
  for (const [extra, status] of steps) {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: headers(extra), payload: 'x' })
    t.equal(res.statusCode, status)
  }
  const all = await app.inject({ method: 'POST', url: '/echo', headers: headers({ ...bad, accept: undefined, 'content-type': 'application/json' }), payload: '{}' })
  t.strictSame(all.json().context.map((i: { field: string }) => i.field), ['Svc-Execution-Context', 'Svc-Service', 'Svc-Service', 'Svc-Idempotency-Key'])
  t.equal(all.json().detail, 'The request has 4 invalid values; see context for each one.')
})

t.test('refusals carry the X-Request-ID and precede later onRequest hooks such as authentication', async t => {
  const app = await build(t, {}, app => {
    app.register(async secured => {
      secured.addHook('onRequest', async () => { throw problems.unauthorized('Send a Bearer token.') })
      secured.get('/secured', async () => ({}))
    })
  })
  const res = await app.inject({ method: 'GET', url: '/secured', headers: headers({ 'user-agent': undefined, 'x-request-id': 'req-42' }) })
  t.equal(res.statusCode, 403)
  t.equal(res.json().requestId, 'req-42')
  t.equal(res.headers['x-request-id'], 'req-42')
  t.equal((await app.inject({ method: 'GET', url: '/secured', headers: headers() })).statusCode, 401)
})

t.test('without the problem plugin the boot fails, naming it: the refusals would not be problems', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(conventions) }, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: /^The conventions plugin needs the problem plugin registered before it/ })
})
