import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from '../../examples/downstream.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { tokenCommand } from '../../bin/token.js'

// docs/plugins/downstream.md: an adopter's service calling the reference service, both over real HTTP.
const UA = { 'user-agent': 'reviews-test/1' }
const SERVICE_ID = '7e0c1d1e-3c1e-4f7a-8d0a-2b5e8f9a1c3d'

t.test('the example calls the reference service with the convention\'s headers, and maps its problems', async t => {
  const env = { LOG_LEVEL: 'silent', DATA_DIR: 'memory', EXECUTION_CONTEXTS: 'sandbox' }
  const reference = await buildApp(loadConfig(env).config)
  const seen: IncomingHttpHeaders[] = []
  reference.addHook('onRequest', async (request) => { seen.push(request.headers) })
  await reference.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => reference.close())
  const referenceUrl = `http://127.0.0.1:${(reference.server.address() as AddressInfo).port}/`
  const token = tokenCommand(['--scope', 'authors:read authors:write'], env)
  const app = await build({ referenceUrl, token, serviceId: SERVICE_ID })
  t.teardown(() => app.close())

  const created = await app.inject({ method: 'POST', url: '/v1/reviewers', headers: { ...UA, 'x-request-id': 'req-1' }, payload: { name: 'Ann', email: 'ann@example.com' } })
  t.equal(created.statusCode, 201)
  const { id } = created.json()
  t.match(seen.at(-1), {
    'user-agent': 'reviews/1',
    'svc-service': `id=${SERVICE_ID}; name=reviews`,
    'x-request-id': 'req-1',
    'svc-idempotency-key': /^[0-9a-f-]{36}$/
  })

  const read = await app.inject({ url: `/v1/reviewers/${id as string}`, headers: { ...UA, 'x-request-id': 'req-2' } })
  t.equal(read.statusCode, 200)
  t.strictSame(read.json(), { id, name: 'Ann' })
  const sandbox = await app.inject({ url: `/v1/reviewers/${id as string}`, headers: { ...UA, 'x-request-id': 'req-4', 'svc-execution-context': 'sandbox' } })
  t.equal(sandbox.statusCode, 404, 'the reference service keeps each context\'s data apart: the context travelled')
  t.match(seen.at(-1), { 'x-request-id': 'req-4', 'svc-execution-context': 'sandbox' })

  const missing = await app.inject({ url: '/v1/reviewers/nobody', headers: { ...UA, 'x-request-id': 'req-3' } })
  t.equal(missing.statusCode, 404)
  t.match(missing.json(), { title: 'Not Found', detail: 'There is no reviewer nobody.', requestId: 'req-3' })
  t.equal(seen.at(-1)?.['svc-execution-context'], undefined, 'production is not sent')

  const invalid = await app.inject({ method: 'POST', url: '/v1/reviewers', headers: UA, payload: { name: 'Bo', email: 'not an email' } })
  t.equal(invalid.statusCode, 400, 'the reference service\'s field errors are the caller\'s')
  t.match(invalid.json(), { title: 'Invalid Data', context: [{ field: 'email', source: 'body' }] })

  await reference.close()
  const down = await app.inject({ url: `/v1/reviewers/${id as string}`, headers: UA })
  t.equal(down.statusCode, 502, 'a service that cannot be reached is this service\'s 502')
  t.match(down.json(), { title: 'Bad Gateway', detail: /SVC_ERR_DOWNSTREAM_CONNECTION/ })
})
