import t from 'tap'
import Fastify from 'fastify'
import problem, { contextItem, invalidData, isCredentialField } from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'

// A context item names a field whose value it cannot take, and shows the value sent, except for
// a field that holds a credential: answers are kept by logs, proxies and clients' error reports.

t.test('which fields name a credential', async t => {
  const table: Array<[string, boolean]> = [
    ['access_token', true], // RFC 6750 §2.3
    ['accessToken', true],
    ['refresh_token', true],
    ['token', true],
    ['credentials.password', true],
    ['newPassword', true],
    ['passwd', true],
    ['passphrase', true],
    ['clientSecret', true],
    ['x-api-key', true],
    ['apiKey', true],
    ['api_key', true],
    ['credentials', true],
    ['tokens[2]', true],
    ['users[0].password', true],
    ['tokenCount', false],
    ['secretary', false],
    ['passwordHint.length', false],
    ['svc-idempotency-key', false],
    ['webhook-id', false],
    ['name', false],
    ['cursor', false]
  ]
  for (const [field, credential] of table) t.equal(isCredentialField(field), credential, field)
})

t.test('contextItem keeps the value sent, except for a credential', async t => {
  t.strictSame(contextItem({ message: 'is not a parameter of GET /x', field: 'access_token', source: 'query', value: 'eyJhbGciOi.secret.part' }),
    { message: 'is not a parameter of GET /x', field: 'access_token', source: 'query' })
  t.strictSame(contextItem({ message: 'too short', code: 'INPUT_INVALID', field: 'password', source: 'body', value: 'hunter2' }),
    { message: 'too short', code: 'INPUT_INVALID', field: 'password', source: 'body' })
  t.strictSame(contextItem({ message: 'must be an integer', field: 'pageCount', source: 'body', value: 'abc' }),
    { message: 'must be an integer', field: 'pageCount', source: 'body', value: 'abc' })
  t.strictSame(contextItem({ message: 'no field', value: 'v' }), { message: 'no field', value: 'v' }, 'an item with no field keeps its value')
  t.strictSame(invalidData([{ message: 'unknown', field: 'api_key', source: 'query', value: 'k-123' }]).context, [{ message: 'unknown', field: 'api_key', source: 'query' }])
})

t.test('through validation: a token in the query string and a password in the body are named, not shown', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(validation)
  app.post('/users', {
    schema: {
      querystring: { type: 'object', properties: {}, additionalProperties: false },
      body: { type: 'object', required: ['name', 'password'], properties: { name: { type: 'string', maxLength: 5 }, password: { type: 'string', minLength: 12 } } }
    }
  }, async () => ({}))
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/users?access_token=eyJ.the.token', headers: { 'content-type': 'application/json' }, payload: { name: 'too long', password: 'hunter2' } })
  t.equal(res.statusCode, 400)
  const context = (JSON.parse(res.body) as { context: Array<Record<string, string>> }).context
  const byField = new Map(context.map(c => [c.field, c]))
  t.equal(byField.get('name')?.value, 'too long', 'an ordinary value is shown')
  t.ok(byField.has('password') && !('value' in (byField.get('password') as object)), 'the password is named without its value')
  t.notMatch(res.body, /hunter2|eyJ\.the\.token/, 'neither credential appears anywhere in the answer')
})
