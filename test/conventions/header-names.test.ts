import t from 'tap'
import fc from 'fast-check'
import { checkCustomHeaderName, STANDARD_HEADERS } from '../../plugins/conventions/index.js'
import { build, headers } from './app.js'

t.test('checkCustomHeaderName', async t => {
  const fine = ['Svc-Trace-Token', 'svc-execution-context', 'Authorization', 'content-type', 'X-Request-ID', 'X-Forwarded-For', 'x-forwarded-proto', 'Svc-' + 'a'.repeat(46), 'traceparent']
  for (const name of fine) t.equal(checkCustomHeaderName(name), null, name)
  const refused: Array<[string, string]> = [
    ['X-Custom', 'a custom header starts with Svc-, never X-'],
    ['Tenant', 'a header that is not a standard HTTP header is a custom header, and starts with Svc-'],
    ['Svc-' + 'a'.repeat(47), 'a custom header name has at most 50 characters, this one 51'],
    ['Svc-Trace_Token', 'a custom header name uses only the characters a-z, A-Z, 0-9 and -'],
    ['Svc-', 'a custom header name says what it carries after Svc-'],
    ['Svc-Authorization', 'a custom header must not duplicate the standard header Authorization']
  ]
  for (const [name, reason] of refused) t.equal(checkCustomHeaderName(name), reason, name)
  t.equal(checkCustomHeaderName('X-Hub-Signature', new Set(['x-hub-signature'])), null, 'allowed names pass')
})

t.test('property: Svc- names of the allowed characters up to 50 pass unless they copy a standard header', async t => {
  fc.assert(fc.property(fc.stringMatching(/^[a-zA-Z0-9-]{1,46}$/), rest => {
    const reason = checkCustomHeaderName(`Svc-${rest}`)
    return STANDARD_HEADERS.has(rest.toLowerCase()) ? reason !== null : reason === null
  }))
  fc.assert(fc.property(fc.string({ minLength: 47, maxLength: 80 }), rest => checkCustomHeaderName(`Svc-${rest}`) !== null))
})

t.test('routes declaring a bad custom header name fail to register', async t => {
  await t.rejects(build(t, {}, app => {
    app.get('/bad', { schema: { headers: { type: 'object', properties: { 'x-tenant': { type: 'string' } } } } }, async () => ({}))
  }), { message: 'conventions plugin: route GET /bad declares the header x-tenant: a custom header starts with Svc-, never X- (conventions: Headers, Custom headers)' })
  await t.rejects(build(t, {}, app => {
    app.post('/bad', { schema: { response: { 201: { headers: { 'Svc-Location': { type: 'string' } } } } } }, async () => ({}))
  }), { message: /route POST \/bad declares the header Svc-Location: a custom header must not duplicate the standard header Location/ })
})

t.test('standard, allowed and Svc- names register', async t => {
  const app = await build(t, { headerNames: { allow: ['X-Hub-Signature'] } }, app => {
    app.get('/good', {
      schema: {
        headers: { type: 'object', properties: { 'svc-trace-token': { type: 'string' }, authorization: { type: 'string' }, 'x-request-id': { type: 'string' }, 'x-forwarded-for': { type: 'string' }, 'x-hub-signature': { type: 'string' } } },
        response: { 200: { type: 'object', headers: { ETag: { type: 'string' }, 'Svc-Execution-Context': { type: 'string' } } } }
      }
    }, async () => ({}))
    app.get('/no-props', { schema: { headers: { type: 'object' } } }, async () => ({}))
  })
  t.equal((await app.inject({ method: 'GET', url: '/good', headers: headers() })).statusCode, 200)
})

t.test('the check can be switched off globally, per route, or with every rule', async t => {
  const bad = { schema: { headers: { type: 'object', properties: { 'x-tenant': { type: 'string' } } } } }
  await build(t, { headerNames: false }, app => { app.get('/bad', bad, async () => ({})) })
  await build(t, {}, app => {
    app.get('/a', { ...bad, config: { conventions: { headerNames: false } } }, async () => ({}))
    app.get('/b', { ...bad, config: { conventions: false } }, async () => ({}))
  })
  t.pass('registered')
})
