import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { registerBehindGate } from '../../plugins/cors/gate.js'

// registerBehindGate wraps the onRequest hooks a plugin adds while it registers, and nothing else.

t.test('onRequest hooks of the plugin run only when the gate says so; other hooks and later hooks are untouched', async t => {
  const app = Fastify()
  const calls = { onRequest: 0, onSend: 0, later: 0 }
  const plugin = fp(async (instance: FastifyInstance) => {
    instance.addHook('onRequest', function (_request, _reply, done) { calls.onRequest++; done() })
    instance.addHook('onSend', async (_request, _reply, payload) => { calls.onSend++; return payload })
  })
  const original = app.addHook
  await registerBehindGate(app, plugin, {}, (request, reply, done) => {
    if (request.headers['x-pass'] !== undefined) return true
    reply.header('x-gated', 'yes')
    done()
    return false
  })
  t.equal(app.addHook, original, 'addHook is restored once the plugin has registered')
  app.addHook('onRequest', async () => { calls.later++ })
  app.get('/', async () => ({ ok: true }))

  const gated = await app.inject({ url: '/' })
  t.equal(gated.headers['x-gated'], 'yes')
  t.same(calls, { onRequest: 0, onSend: 1, later: 1 })
  const passed = await app.inject({ url: '/', headers: { 'x-pass': '1' } })
  t.equal(passed.headers['x-gated'], undefined)
  t.same(calls, { onRequest: 1, onSend: 2, later: 2 })
  await app.close()
})

t.test('a plugin that fails to register leaves addHook restored and the error to the caller', async t => {
  const app = Fastify()
  const original = app.addHook
  const broken = fp(async () => { throw new Error('cannot register') })
  await t.rejects(registerBehindGate(app, broken, {}, (_request, _reply, done) => { done(); return false }), /cannot register/)
  t.equal(app.addHook, original)
})

t.test('a plain value the plugin decorates requests with is an accessor: read as declared, set per request, never copied onto each request', async t => {
  const app = Fastify()
  const kept = { object: { a: 1 } }
  const plugin = fp(async (instance: FastifyInstance) => {
    instance.decorateRequest('flagged', false)
    instance.decorateRequest('counted', 0)
    instance.decorateRequest('named', 'none')
    instance.decorateRequest('nothing', null)
    // Not plain values: passed through as given.
    instance.decorateRequest('shout', function (this: FastifyRequest) { return 'hey' })
    instance.decorateRequest('computed', { getter () { return kept.object } })
  })
  const original = app.decorateRequest
  await registerBehindGate(app, plugin, {}, () => true)
  t.equal(app.decorateRequest, original, 'decorateRequest is restored once the plugin has registered')
  app.decorateRequest('later', false)
  const seen: unknown[] = []
  app.get('/', async (request) => {
    const r = request as unknown as Record<string, unknown> & { shout: () => string }
    seen.push(['flagged', 'counted', 'named', 'nothing', 'later'].map((k) => Object.hasOwn(r, k)))
    seen.push([r.flagged, r.counted, r.named, r.nothing, r.shout(), r.computed === kept.object])
    if (request.headers['x-set'] !== undefined) { r.flagged = true; r.counted = 2; r.named = 'set' }
    return { flagged: r.flagged, counted: r.counted, named: r.named }
  })
  t.same((await app.inject({ url: '/', headers: { 'x-set': '1' } })).json(), { flagged: true, counted: 2, named: 'set' })
  t.same((await app.inject({ url: '/' })).json(), { flagged: false, counted: 0, named: 'none' }, 'another request reads the declared values')
  t.same(seen[0], [false, false, false, true, true], 'only null and the decorations added later are copied onto each request')
  t.same(seen[1], [false, 0, 'none', null, 'hey', true])
  await app.close()
})

t.test('a decoration the plugin cannot add leaves decorateRequest restored and the error to the caller', async t => {
  const app = Fastify()
  app.decorateRequest('taken', false)
  const original = app.decorateRequest
  const clash = fp(async (instance: FastifyInstance) => { instance.decorateRequest('taken', false) })
  await t.rejects(registerBehindGate(app, clash, {}, () => true), /taken/)
  t.equal(app.decorateRequest, original)
})
