import t from 'tap'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import { addConventionFormats, conventionAjvPlugin, conventionFormats, describeFormat } from '../../schemas/formats.js'
import { makeAjv } from './helper.js'

t.test('every convention format has a validator and a phrase that reads after "must be"', async t => {
  t.strictSame(Object.keys(conventionFormats).sort(), ['cron', 'date', 'date-time', 'decimal', 'duration', 'int64', 'interval', 'svc-ref'])
  for (const [name, def] of Object.entries(conventionFormats)) {
    t.match(def.description, /^an? /, `${name}: "${def.description}"`)
    t.equal(describeFormat(name), def.description)
  }
  t.equal(describeFormat('email'), 'an email address like name@example.com', 'kept ajv-formats formats are described too')
  t.equal(describeFormat('uuid'), 'a UUID like 123e4567-e89b-42d3-a456-426614174000')
  t.equal(describeFormat('ipv4'), 'a valid ipv4', 'any other format falls back to a generic phrase')
})

t.test('the date formats keep a compare function, so formatMinimum/formatMaximum still work', async t => {
  const ajv = makeAjv()
  const validate = ajv.compile({ type: 'string', format: 'date-time', formatMinimum: '2024-01-01T00:00:00Z' })
  t.equal(validate('2024-01-01T00:00:00.000Z'), true, 'equal, with milliseconds')
  t.equal(validate('2023-12-31T23:59:59.999Z'), false)
  const date = ajv.compile({ type: 'string', format: 'date', formatMaximum: '2024-12-31' })
  t.equal(date('2024-12-31'), true)
  t.equal(date('2025-01-01'), false)
  t.equal(conventionFormats['date-time'].compare?.('x', '2024-01-01T00:00:00Z'), undefined, 'an invalid value has no order')
  t.equal(conventionFormats.date.compare?.('2024-01-01', 'x'), undefined)
})

t.test('addConventionFormats may run twice on one Ajv and replaces the looser ajv-formats formats', async t => {
  const ajv = makeAjv()
  t.doesNotThrow(() => addConventionFormats(ajv), 'keywords are not added twice')
  const validate = ajv.compile({ type: 'string', format: 'date-time' })
  t.equal(validate('2024-05-01T12:00:00+01:00'), false, 'ajv-formats would accept an offset')
  t.ok(ajv.getKeyword('decimalDigits'), 'the decimal keywords are registered')
  const bare = addConventionFormats(new Ajv({ strict: true }))
  t.equal(bare.validate({ type: 'string', format: 'svc-ref', decimalMinimum: '1' }, 'svc:author::1'), true, 'works on an Ajv without ajv-formats')
  t.equal(bare.validate({ type: 'string', format: 'int64', decimalMinimum: '1' }, '0'), false)
})

t.test('conventionAjvPlugin works with Fastify\'s own Ajv and is not overridden by ajv-formats', async t => {
  t.equal(conventionAjvPlugin.name, 'formatsPlugin', '@fastify/ajv-compiler then skips adding ajv-formats after it')
  const app = Fastify({ ajv: { plugins: [conventionAjvPlugin] } })
  app.post('/x', {
    schema: {
      body: {
        type: 'object',
        properties: {
          at: { type: 'string', format: 'date-time' },
          span: { type: 'string', format: 'duration' },
          price: { type: 'string', format: 'decimal', decimalMaximum: '10' },
          email: { type: 'string', format: 'email' }
        }
      }
    }
  }, async () => ({ ok: true }))
  const ok = await app.inject({ method: 'POST', url: '/x', payload: { at: '2024-05-01T12:00:00Z', span: 'P2W', price: '9.99', email: 'a@example.com' } })
  t.equal(ok.statusCode, 200)
  for (const body of [{ at: '2024-05-01T12:00:00+01:00' }, { span: 'P1YT' }, { price: '10.01' }, { price: '1e1' }, { email: 'nope' }]) {
    const res = await app.inject({ method: 'POST', url: '/x', payload: body })
    t.equal(res.statusCode, 400, JSON.stringify(body))
  }
  await app.close()
})
