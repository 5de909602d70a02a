import t from 'tap'
import Fastify from 'fastify'
import conventions, { type ConventionsOptions } from '../../plugins/conventions/index.js'
import problem from '../../plugins/problem/index.js'
import { build, headers } from './app.js'

const id = '0b7c4f3e-2a1d-4e5f-8a9b-0c1d2e3f4a5b'
const mediaRule = 'must be a non-empty array of media types such as "application/json", without wildcards'
const requestRule = 'must be an array of media types without parameters (charset=utf-8 aside): a request body is matched by its type, and is UTF-8'
const namesRule = 'must be an array of names of 1 to 100 characters among a-z, 0-9, _ and -'
const selfRule = 'must be a service { id: UUID, name?: [a-z0-9-]{1,60}, attributes?: { camelCaseKey: value } }'
const optionNames = 'httpVersion, userAgent, accept, produces, contentType, contentTypes, jsonTypes, executionContext, serviceHeader, idempotencyKey, contentLanguage, headerNames'

t.test('invalid options throw a TypeError at registration naming the option and its value', async t => {
  const cases: Array<[unknown, string]> = [
    [{ httpVersion: 'yes' }, 'httpVersion must be a boolean, got "yes"'],
    [{ userAgent: 'strict' }, 'userAgent must be a boolean or an object, got "strict"'],
    [{ userAgent: [] }, 'userAgent must be a boolean or an object, got []'],
    [{ userAgent: { strictVersion: 1 } }, 'userAgent.strictVersion must be a boolean, got 1'],
    [{ userAgent: { requireComment: 'no' } }, 'userAgent.requireComment must be a boolean, got "no"'],
    [{ userAgent: { validate: true } }, 'userAgent.validate must be a function, got true'],
    [{ accept: 1 }, 'accept must be a boolean, got 1'],
    [{ produces: [] }, `produces ${mediaRule}, got []`],
    [{ produces: 'application/json' }, `produces ${mediaRule}, got "application/json"`],
    [{ produces: ['*/*'] }, `produces ${mediaRule}, got ["*/*"]`],
    [{ produces: ['application/*'] }, `produces ${mediaRule}, got ["application/*"]`],
    [{ produces: [42] }, `produces ${mediaRule}, got [42]`],
    [{ produces: () => [] }, `produces ${mediaRule}, got a function`],
    [{ contentType: null }, 'contentType must be a boolean, got null'],
    [{ contentTypes: ['text'] }, `contentTypes ${mediaRule}, got ["text"]`],
    // Matched by type and read as UTF-8: a parameter would be ignored without a word.
    [{ contentTypes: ['application/json; charset=latin1'] }, `contentTypes ${requestRule}, got ["application/json; charset=latin1"]`],
    [{ contentTypes: ['application/json', 'application/vnd.svc-note+json; version=2'] }, `contentTypes ${requestRule}, got ["application/json","application/vnd.svc-note+json; version=2"]`],
    [{ jsonTypes: ['application/merge-patch+json; charset=utf-16'] }, `jsonTypes ${requestRule}, got ["application/merge-patch+json; charset=utf-16"]`],
    [{ jsonTypes: ['application/json'] }, 'jsonTypes must be an array of +json media types, got ["application/json"]'],
    [{ jsonTypes: [] }, `jsonTypes ${mediaRule}, got []`],
    [{ executionContext: 5 }, 'executionContext must be a boolean or an object, got 5'],
    [{ executionContext: { supported: 'prod' } }, `executionContext.supported ${namesRule}, got "prod"`],
    [{ executionContext: { supported: ['PROD'] } }, `executionContext.supported ${namesRule}, got ["PROD"]`],
    [{ executionContext: { extra: ['ok', 1] } }, `executionContext.extra ${namesRule}, got ["ok",1]`],
    [{ executionContext: { default: 'staging' } }, 'executionContext.default must be a supported execution context name, got "staging"'],
    [{ executionContext: { default: 'BAD', supported: () => true } }, 'executionContext.default must be a supported execution context name, got "BAD"'],
    [{ executionContext: { default: 7 } }, 'executionContext.default must be a supported execution context name, got 7'],
    [{ serviceHeader: 'x' }, 'serviceHeader must be a boolean or an object, got "x"'],
    [{ serviceHeader: { registry: 'x' } }, 'serviceHeader.registry must be a function, got "x"'],
    [{ serviceHeader: { self: 'x' } }, `serviceHeader.self ${selfRule}, got "x"`],
    [{ serviceHeader: { self: { id: 'nope' } } }, `serviceHeader.self ${selfRule}, got {"id":"nope"}`],
    [{ serviceHeader: { self: { name: 'x' } } }, `serviceHeader.self ${selfRule}, got {"name":"x"}`],
    [{ serviceHeader: { self: { id, attributes: 'x' } } }, `serviceHeader.self ${selfRule}, got {"id":"${id}","attributes":"x"}`],
    [{ serviceHeader: { self: { id, attributes: { id: 'x' } } } }, `serviceHeader.self ${selfRule}, got {"id":"${id}","attributes":{"id":"x"}}`],
    [{ serviceHeader: { self: { id, name: 'Bad Name' } } }, `serviceHeader.self ${selfRule}, got {"id":"${id}","name":"Bad Name"}`],
    [{ idempotencyKey: 'no' }, 'idempotencyKey must be a boolean, got "no"'],
    [{ contentLanguage: 'en US' }, 'contentLanguage must be false or a language tag such as "en-US", got "en US"'],
    [{ contentLanguage: true }, 'contentLanguage must be false or a language tag such as "en-US", got true'],
    [{ headerNames: 'x' }, 'headerNames must be a boolean or an object, got "x"'],
    [{ headerNames: { allow: 'x' } }, 'headerNames.allow must be an array of header names, got "x"'],
    [{ headerNames: { allow: [1] } }, 'headerNames.allow must be an array of header names, got [1]'],
    // A misspelt option would leave its rule at the default: the opposite of what was asked.
    [{ userAgnt: false }, `unknown option userAgnt (did you mean userAgent?); the options are ${optionNames}`],
    [{ contenttypes: ['application/json'] }, `unknown option contenttypes (did you mean contentTypes?); the options are ${optionNames}`],
    [{ somethingElse: true }, `unknown option somethingElse; the options are ${optionNames}`],
    [{ userAgent: { strictVersoin: true } }, 'unknown option userAgent.strictVersoin (did you mean userAgent.strictVersion?); userAgent takes strictVersion, requireComment, validate'],
    [{ executionContext: { defaults: 'prod' } }, 'unknown option executionContext.defaults (did you mean executionContext.default?); executionContext takes supported, extra, default'],
    [{ serviceHeader: { slef: {} } }, 'unknown option serviceHeader.slef (did you mean serviceHeader.self?); serviceHeader takes registry, self'],
    [{ headerNames: { allowed: [] } }, 'unknown option headerNames.allowed (did you mean headerNames.allow?); headerNames takes allow']
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    await app.register(problem)
    await t.rejects(async () => { await app.register(conventions, opts as ConventionsOptions) }, new TypeError(`conventions plugin: ${message}`), message)
    await app.close()
  }
})

t.test('true and full option objects are accepted', async t => {
  const app = await build(t, {
    httpVersion: true,
    userAgent: true,
    accept: true,
    contentType: true,
    executionContext: true,
    serviceHeader: true,
    idempotencyKey: true,
    headerNames: true,
    contentLanguage: 'en-GB',
    // The one parameter a request type may name: its charset, UTF-8.
    contentTypes: ['application/json; charset=utf-8'],
    jsonTypes: ['application/merge-patch+json; charset=UTF-8']
  })
  const res = await app.inject({ method: 'GET', url: '/echo', headers: headers() })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-language'], 'en-GB')
})

t.test('invalid route configs stop the registration, naming the route', async t => {
  const cases: Array<[unknown, string]> = [
    ['off', 'route GET /r: config.conventions must be false or an object, got "off"'],
    [true, 'route GET /r: config.conventions must be false or an object, got true'],
    [{ userAgent: true }, 'route GET /r: config.conventions.userAgent must be false (a route can only switch a rule off), got true'],
    [{ userAgnt: false }, 'route GET /r: config.conventions.userAgnt must be one of httpVersion, userAgent, accept, produces, contentType, contentTypes, executionContext, serviceHeader, idempotencyKey, contentLanguage, headerNames (unknown key), got false'],
    [{ produces: [] }, `route GET /r: config.conventions.produces ${mediaRule}, got []`],
    [{ produces: undefined }, `route GET /r: config.conventions.produces ${mediaRule}, got undefined`],
    [{ contentTypes: ['*/*'] }, `route GET /r: config.conventions.contentTypes ${mediaRule}, got ["*/*"]`],
    [{ contentTypes: ['text/csv; header=present'] }, `route GET /r: config.conventions.contentTypes ${requestRule}, got ["text/csv; header=present"]`],
    [{ contentLanguage: 'x y' }, 'route GET /r: config.conventions.contentLanguage must be false or a language tag such as "en-US", got "x y"']
  ]
  for (const [conventionsConfig, message] of cases) {
    await t.rejects(build(t, {}, app => {
      app.get('/r', { config: { conventions: conventionsConfig as false } }, async () => ({}))
    }), new TypeError(`conventions plugin: ${message}`), message)
  }
})

t.test('a route config switched off globally stays off, and is still validated', async t => {
  await t.rejects(build(t, { contentType: false }, app => {
    app.post('/r', { config: { conventions: { contentTypes: ['bad'] } } }, async () => ({}))
  }), TypeError)
  const app = await build(t, { contentType: false }, app => {
    app.post('/r', { config: { conventions: { contentTypes: ['application/json'] } } }, async () => ({}))
  })
  t.equal((await app.inject({ method: 'POST', url: '/r', headers: headers({ 'content-type': 'text/plain' }), payload: 'x' })).statusCode, 200)
})

t.test('routes declared before the plugin are resolved on their first request', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  const config = { conventions: { userAgent: false as const } }
  app.get('/early', { config }, async request => ({ executionContext: request.executionContext }))
  app.get('/plain', async () => ({}))
  await app.register(conventions)
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ method: 'GET', url: '/early', headers: { 'user-agent': undefined } })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), { executionContext: 'prod' })
  }
  t.equal((await app.inject({ method: 'GET', url: '/plain', headers: { 'user-agent': undefined } })).statusCode, 403)
})
