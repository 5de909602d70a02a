import t from 'tap'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../app.js'
import { DEV_SERVICE_ID, DEV_SERVICE_NAME, loadConfig } from '../../config.js'
import { tokenCommand } from '../../bin/token.js'

// SERVICE_ID / SERVICE_NAME (contract: "Running it"): the identity the service's outgoing calls carry.

t.test('SERVICE_ID and SERVICE_NAME: a fixed development identity by default; bad values are named', async t => {
  const { config } = loadConfig({})
  t.equal(config.serviceId, DEV_SERVICE_ID)
  t.match(DEV_SERVICE_ID, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  t.equal(config.serviceName, 'svc-reference')
  t.equal(DEV_SERVICE_NAME, 'svc-reference')
  const set = loadConfig({ SERVICE_ID: '0F8B2C4E-6A1D-4E3B-9C5F-7D2E1A0B3C4D', SERVICE_NAME: 'documents-eu' }).config
  t.equal(set.serviceId, '0F8B2C4E-6A1D-4E3B-9C5F-7D2E1A0B3C4D')
  t.equal(set.serviceName, 'documents-eu')
  const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ SERVICE_ID: 'svc-1' }, /^- SERVICE_ID: expected a UUID \(got "svc-1"\)$/m],
    [{ SERVICE_NAME: 'Reference Service' }, /^- SERVICE_NAME: expected 1 to 60 characters among a-z, 0-9 and - \(got "Reference Service"\)$/m],
    [{ SERVICE_NAME: 'x'.repeat(61) }, /^- SERVICE_NAME: expected 1 to 60 characters/m]
  ]
  for (const [env, message] of bad) t.throws(() => loadConfig(env), message, String(Object.keys(env)[0]))
})

t.test('the reference service calls out with its identity and the request\'s id and context', async t => {
  const received: IncomingHttpHeaders[] = []
  const other = createServer((req, res) => {
    received.push(req.headers)
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { other.closeAllConnections(); other.close() })
  const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1/ping`

  const env = { LOG_LEVEL: 'silent', DATA_DIR: 'memory', SERVICE_ID: '0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d', SERVICE_NAME: 'documents-eu' }
  const app = await buildApp(loadConfig(env).config)
  t.teardown(() => app.close())
  app.get('/v1/relay', { config: { auth: { scopes: ['authors:read'] } } }, async (request) => (await request.downstream.get(url)).body)
  const token = tokenCommand(['--scope', 'authors:read'], env)
  const res = await app.inject({ url: '/v1/relay', headers: { 'user-agent': 'identity-test/1', authorization: `Bearer ${token}`, 'x-request-id': 'req-77', 'svc-execution-context': 'preprod' } })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { ok: true })
  t.match(received[0], {
    'svc-service': 'id=0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d; name=documents-eu',
    'user-agent': 'documents-eu/1 (svc-conventions)',
    accept: 'application/json',
    'x-request-id': 'req-77',
    'svc-execution-context': 'preprod'
  })
  await app.downstream.get(url)
  t.equal(received[1]?.['x-request-id'], undefined, 'outside a request: no request id')
  t.equal(received[1]?.['svc-service'], 'id=0f8b2c4e-6a1d-4e3b-9c5f-7d2e1a0b3c4d; name=documents-eu')
})
