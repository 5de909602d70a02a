import t from 'tap'
import { build, headers, type Echo } from './app.js'

const HEADER = 'svc-service'
const id = '0b7c4f3e-2a1d-4e5f-8a9b-0c1d2e3f4a5b'
const other = 'ffffffff-ffff-4fff-8fff-ffffffffffff'

t.test('a valid header becomes request.callingService', async t => {
  const app = await build(t)
  const cases: Array<[string, unknown]> = [
    [`id=${id}`, { id, attributes: {} }],
    [`id=${id.toUpperCase()};name=orders`, { id: id.toUpperCase(), name: 'orders', attributes: {} }],
    [`name=order-service; id=${id}; team=orders;  region=eu-west-1`, { id, name: 'order-service', attributes: { team: 'orders', region: 'eu-west-1' } }],
    [`id=${id};\tconstructor=x`, { id, attributes: { constructor: 'x' } }]
  ]
  for (const [value, expected] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: value }) })
    t.equal(res.statusCode, 200, value)
    t.strictSame(res.json<Echo>().callingService, expected)
  }
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers() })).json<Echo>().callingService, null)
})

t.test('an invalid header gives 400 with one context item per violation', async t => {
  const app = await build(t)
  const cases: Array<[string, Array<[string, string]>]> = [
    ['name=orders', [['must have an id attribute holding the service UUID', 'name=orders']]],
    ['', [['must not have an empty attribute between ";" delimiters', ''], ['must have an id attribute holding the service UUID', '']]],
    ['id=1234', [['must have an id that is a UUID', '1234']]],
    [`id=${id}; name=Order_Service`, [['must have a name of 1 to 60 characters among a-z, 0-9 and -', 'Order_Service']]],
    [`id=${id}; name=${'a'.repeat(61)}`, [['must have a name of 1 to 60 characters among a-z, 0-9 and -', 'a'.repeat(61)]]],
    [`id=${id}; Team=orders`, [['has the key "Team", which is not camelCase', 'Team=orders']]],
    [`id=${id}; team-name=orders`, [['has the key "team-name", which is not camelCase', 'team-name=orders']]],
    [`id=${id}; id=${other}`, [['repeats the key "id"', `id=${other}`]]],
    [`id=${id}; version=1.2.3`, [['has the key "version", but its attributes carry no versions (the header names a service, not a release of it)', 'version=1.2.3']]],
    [`id=${id}; apiVersion=2; team=x`, [['has the key "apiVersion", but its attributes carry no versions (the header names a service, not a release of it)', 'apiVersion=2']]],
    [`id=${id} ;name=orders`, [['has an empty value, whitespace or one of " , ; = \\ in the value of "id"', `id=${id} `]]],
    [`id=${id};;name=orders`, [['must not have an empty attribute between ";" delimiters', '']]],
    [`id=${id};`, [['must not have an empty attribute between ";" delimiters', '']]],
    [`id=${id}; junk`, [['must be key=value attributes separated by ";"', 'junk']]],
    [`id=${id}; team=`, [['has an empty value, whitespace or one of " , ; = \\ in the value of "team"', 'team=']]],
    [`id=${id}; team=a=b`, [['has an empty value, whitespace or one of " , ; = \\ in the value of "team"', 'team=a=b']]],
    [`id=${id}; team="orders"`, [['has an empty value, whitespace or one of " , ; = \\ in the value of "team"', 'team="orders"']]],
    ['Id=x; name=A', [['has the key "Id", which is not camelCase', 'Id=x'], ['must have an id attribute holding the service UUID', 'Id=x; name=A'], ['must have a name of 1 to 60 characters among a-z, 0-9 and -', 'A']]]
  ]
  for (const [value, violations] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: value }) })
    t.equal(res.statusCode, 400, JSON.stringify(value))
    t.equal(res.json().title, 'Invalid Data')
    t.strictSame(res.json().context, violations.map(([message, v]) => ({ code: 'INPUT_INVALID', message, field: 'Svc-Service', source: 'header', value: v })), JSON.stringify(value))
  }
  // The same header twice arrives comma-joined, which no value may contain.
  const twice = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: [`id=${id}`, `id=${other}`] }) })
  t.equal(twice.statusCode, 400)
})

t.test('a registry check runs on well-formed ids only', async t => {
  const asked: string[] = []
  const app = await build(t, {
    serviceHeader: {
      registry: async (sent, request) => {
        asked.push(sent)
        t.equal(typeof request.id, 'string')
        return sent === id
      }
    }
  })
  t.strictSame((await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: `id=${id}` }) })).json<Echo>().callingService, { id, attributes: {} })
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: `id=${other}; name=ghost` }) })
  t.equal(res.statusCode, 400)
  t.strictSame(res.json().context, [{ code: 'INPUT_INVALID', message: 'must have the id of a registered service; check the id this service was given', field: 'Svc-Service', source: 'header', value: other }])
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'id=bad' }) })).statusCode, 400)
  t.strictSame(asked, [id, other], 'not asked about a malformed id')
})

t.test('self: the service describes itself on every response, unless the handler did', async t => {
  const app = await build(t, { serviceHeader: { self: { id, name: 'conventions-test', attributes: { team: 'platform' } } } }, app => {
    app.get('/own', async (_request, reply) => reply.header('Svc-Service', `id=${other}`).send({}))
  })
  const expected = `id=${id}; name=conventions-test; team=platform`
  t.equal((await app.inject({ method: 'GET', url: '/echo', headers: headers() })).headers[HEADER], expected)
  t.equal((await app.inject({ method: 'GET', url: '/nowhere', headers: headers() })).headers[HEADER], expected, 'on problems too')
  t.equal((await app.inject({ method: 'GET', url: '/own', headers: headers() })).headers[HEADER], `id=${other}`)
  t.notOk(HEADER in (await app.inject({ method: 'GET', url: '/health', headers: headers() })).headers, 'not on routes with every rule off')

  const bare = await build(t, { serviceHeader: { self: { id } } })
  t.equal((await bare.inject({ method: 'GET', url: '/echo', headers: headers() })).headers[HEADER], `id=${id}`)
  const none = await build(t)
  t.notOk(HEADER in (await none.inject({ method: 'GET', url: '/echo', headers: headers() })).headers)
})

t.test('switched off globally, per route, or with every rule', async t => {
  const off = await build(t, { serviceHeader: false })
  const res = await off.inject({ method: 'GET', url: '/echo', headers: headers({ [HEADER]: 'garbage' }) })
  t.equal(res.statusCode, 200)
  t.equal(res.json<Echo>().callingService, null)

  const app = await build(t, { serviceHeader: { self: { id } } }, app => {
    app.get('/free', { config: { conventions: { serviceHeader: false } } }, async () => ({}))
  })
  const free = await app.inject({ method: 'GET', url: '/free', headers: headers({ [HEADER]: 'garbage' }) })
  t.equal(free.statusCode, 200)
  t.notOk(HEADER in free.headers, 'the own header goes off with the rule')
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: headers({ [HEADER]: 'garbage' }) })).statusCode, 200)
})
