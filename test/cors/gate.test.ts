import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
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
