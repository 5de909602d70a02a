import t from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import { loadConfig } from '../../config.js'
import { problem, query } from 'svc-conventions'
import { signToken } from 'svc-conventions/auth'
import { signStandardWebhook } from 'svc-conventions/webhooks'

// The configuration checks each secret as the plugin that uses it does, so that a secret the
// plugin would refuse at start is refused first, naming its variable, and no secret the plugin
// takes is refused. Bytes count, not characters.

function configTakes (name: string, value: string): boolean {
  try {
    loadConfig({ [name]: value })
    return true
  } catch (err) {
    if (!new RegExp(`^- ${name}: `, 'm').test((err as Error).message)) throw err
    return false
  }
}

const signs = (f: () => unknown): boolean => {
  try {
    f()
    return true
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    return false
  }
}

async function queryTakes (secret: string): Promise<boolean> {
  const app = Fastify()
  await app.register(problem)
  try {
    await app.register(query, { cursorSecret: secret })
    await app.ready()
    return true
  } catch (err) {
    if (!/^query plugin: cursorSecret: /.test((err as Error).message)) throw err
    return false
  } finally {
    await app.close()
  }
}

// Text around each limit: ASCII and characters of 2, 3 and 4 bytes in UTF-8, no comma (CURSOR_SECRET splits on it), no space at the ends (trimmed).
const secretText = fc.array(fc.constantFrom('a', 'Z', '7', '-', 'é', '€', '😀'), { minLength: 1, maxLength: 40 }).map(cs => cs.join(''))

t.test('AUTH_JWT_SECRET: the configuration takes what the auth plugin takes', async t => {
  fc.assert(fc.property(secretText, secret => {
    t.equal(configTakes('AUTH_JWT_SECRET', secret), signs(() => signToken({ secret, sub: 'someone' })), `${Buffer.byteLength(secret)} bytes`)
  }), { numRuns: 300 })
  t.ok(configTakes('AUTH_JWT_SECRET', '€'.repeat(11)), '11 characters of 3 bytes are 33 bytes: enough')
  t.throws(() => loadConfig({ AUTH_JWT_SECRET: 'é'.repeat(15) }), { message: 'Invalid configuration:\n- AUTH_JWT_SECRET: expected at least 32 bytes (got 30 bytes, not shown)' })
})

t.test('CURSOR_SECRET: every key, as the query plugin takes it', async t => {
  await fc.assert(fc.asyncProperty(secretText, async secret => {
    t.equal(configTakes('CURSOR_SECRET', secret), await queryTakes(secret), `${Buffer.byteLength(secret)} bytes`)
  }), { numRuns: 150 })
  t.ok(configTakes('CURSOR_SECRET', 'é'.repeat(8)), '8 characters of 2 bytes are 16 bytes: enough')
  t.throws(() => loadConfig({ CURSOR_SECRET: 'a-cursor-secret-long-enough,short' }), { message: 'Invalid configuration:\n- CURSOR_SECRET: expected at least 16 bytes (got 5 bytes, not shown)' }, 'a short key after a good one')
})

t.test('WEBHOOK_SECRET_SCANNER: whsec_ and a key the Standard Webhooks verifier takes', async t => {
  const base64ish = fc.array(fc.constantFrom('A', 'b', '9', '+', '/', '='), { minLength: 0, maxLength: 40 }).map(cs => cs.join(''))
  const keys = fc.uint8Array({ minLength: 0, maxLength: 40 }).map(bytes => Buffer.from(bytes).toString('base64'))
  fc.assert(fc.property(fc.oneof(base64ish, keys), body => {
    const secret = `whsec_${body}`
    t.equal(configTakes('WEBHOOK_SECRET_SCANNER', secret), signs(() => signStandardWebhook(secret, 'msg_1', 1, '{}')), secret.length > 60 ? 'long' : `${body.length} characters of base64`)
  }), { numRuns: 300 })
  const cases: Array<[string, string]> = [
    ['whsec_AAAA', 'expected a key of at least 16 bytes (got 3 bytes, not shown)'],
    ['whsec_abc', 'expected whsec_ and the base64 of the key (got 9 characters, not shown)'],
    [Buffer.alloc(24, 1).toString('base64'), 'expected whsec_ and the base64 of the key (got 32 characters, not shown)']
  ]
  for (const [secret, message] of cases) {
    t.throws(() => loadConfig({ WEBHOOK_SECRET_SCANNER: secret }), { message: `Invalid configuration:\n- WEBHOOK_SECRET_SCANNER: ${message}` }, secret.slice(0, 12))
  }
})
