import t from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import webhooks, { WEBHOOK_PREFIX, registerWebhook, standardWebhooks, type WebhookDefinition, type WebhooksPluginOptions } from '../../plugins/webhooks/index.js'
import { webhookPath } from '../../plugins/webhooks/paths.js'
import { pglite } from '../support/databases.js'
import { SECRET } from './helper.js'

const verifier = standardWebhooks({ secrets: SECRET })
const handler = async (): Promise<void> => {}

t.test('paths: /_webhooks/<producer>/, /_webhooks/<producer>/<event-kind>, /_webhooks/<event-name>', async t => {
  t.equal(webhookPath('scanner', undefined), '/_webhooks/scanner/')
  t.equal(webhookPath('scanner', 'document-scanned'), '/_webhooks/scanner/document-scanned')
  t.equal(webhookPath(undefined, 'payment-received'), '/_webhooks/payment-received')
  t.equal(webhookPath('3d-scanner', 'v2'), '/_webhooks/3d-scanner/v2', 'digits are kebab-case too')
})

t.test('paths: every segment kebab-case, the error names the path', async t => {
  const table: Array<[unknown, unknown, RegExp]> = [
    [undefined, undefined, /producer or event is required, for \/_webhooks\/<producer>\/<event-kind> or \/_webhooks\/<event-name>/],
    ['Scanner', 'document-scanned', /the path \/_webhooks\/Scanner\/document-scanned has the segment "Scanner", which is not kebab-case/],
    ['scanner', 'document_scanned', /the path \/_webhooks\/scanner\/document_scanned has the segment "document_scanned"/],
    ['scanner', 'documentScanned', /segment "documentScanned"/],
    ['', 'document-scanned', /the path \/_webhooks\/\/document-scanned has the segment ""/],
    ['scanner', '', /the path \/_webhooks\/scanner\/ has the segment ""/],
    ['a--b', undefined, /segment "a--b"/],
    ['-scanner', undefined, /segment "-scanner"/],
    ['scanner-', undefined, /segment "scanner-"/],
    ['scan/ner', undefined, /segment "scan\/ner"/],
    [undefined, 'a b', /segment "a b"/],
    [undefined, ':id', /segment ":id"/],
    [42, undefined, /producer must be a kebab-case string, got 42/],
    ['scanner', null, /event must be a kebab-case string, got null/]
  ]
  for (const [producer, event, message] of table) {
    t.throws(() => webhookPath(producer, event), { name: 'TypeError', message }, `${String(producer)} / ${String(event)}`)
  }
})

t.test('paths, property: kebab-case segments give the path, any other character is refused', async t => {
  const word = fc.stringMatching(/^[a-z0-9]{1,8}$/)
  const kebab = fc.array(word, { minLength: 1, maxLength: 4 }).map(words => words.join('-'))
  fc.assert(fc.property(kebab, fc.option(kebab, { nil: undefined }), (producer, event) =>
    webhookPath(producer, event) === `${WEBHOOK_PREFIX}${producer}/${event ?? ''}`))
  const bad = fc.tuple(kebab, fc.string({ minLength: 1, maxLength: 3 }).filter(s => /[^a-z0-9-]/.test(s)), kebab).map(([a, b, c]) => a + b + c)
  fc.assert(fc.property(bad, (segment) => {
    try {
      webhookPath(undefined, segment)
      return false
    } catch (err) {
      return err instanceof TypeError && err.message.includes(`${WEBHOOK_PREFIX}${segment}`)
    }
  }))
})

t.test('definitions are checked at once, naming the path', async t => {
  const app = Fastify()
  const base = { producer: 'scanner', event: 'document-scanned', verifier, handler }
  const table: Array<[string, unknown, RegExp]> = [
    ['not an object', null, /registerWebhook: the definition must be an object, got null/],
    ['GET', { ...base, method: 'GET' }, /registerWebhook \/_webhooks\/scanner\/document-scanned: method must be POST, PUT, PATCH or absent, got "GET"/],
    ['no verifier', { ...base, verifier: undefined }, /verifier must be a function such as standardWebhooks\(\{ secrets \}\), got undefined/],
    ['verifier not a function', { ...base, verifier: { secrets: SECRET } }, /verifier must be a function/],
    ['handler not a function', { ...base, handler: 'apply' }, /handler must be an async function \(payload, tx, request\), or absent with apply, got "apply"/],
    ['neither handler nor apply', { ...base, handler: undefined }, /apply must be an async function \(payload, once, request\), or absent with handler, got undefined/],
    ['both handler and apply', { ...base, apply: handler }, /handler must be an async function \(payload, tx, request\), or absent with apply, got a function/],
    ['schema not an object', { ...base, schema: 'DocumentScanned' }, /schema must be a TypeBox schema, got "DocumentScanned"/],
    ['bodyLimit 0', { ...base, bodyLimit: 0 }, /bodyLimit must be a positive integer of bytes, got 0/],
    ['bodyLimit 1.5', { ...base, bodyLimit: 1.5 }, /bodyLimit must be .* got 1.5/],
    ['config an array', { ...base, config: [] }, /config must be an object, got /],
    ['bad path first', { ...base, producer: 'Scanner', handler: undefined }, /the path \/_webhooks\/Scanner\/document-scanned has the segment/]
  ]
  for (const [name, def, message] of table) {
    t.throws(() => registerWebhook(app, def as WebhookDefinition), { name: 'TypeError', message }, name)
  }
  t.throws(() => registerWebhook(app, { ...base, method: () => 'POST' } as unknown as WebhookDefinition), { message: /method must be .* got a function/ })
})

t.test('registerWebhook needs the webhooks plugin', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(problem)
  registerWebhook(app, { producer: 'scanner', verifier, handler })
  await t.rejects(async () => { await app.ready() }, { message: 'registerWebhook /_webhooks/scanner/: register the webhooks plugin first; it records the delivery ids in the store' })
})

t.test('plugin options are checked at registration', async t => {
  const store = await pglite.create(t)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /webhooks plugin: store must be a Store \(createStore\), got undefined/],
    [{ store: {} }, /store must be a Store/],
    [{ store, table: 'Deliveries' }, /table must be a lowercase SQL name of at most 58 characters, got "Deliveries"/],
    [{ store, table: 'd'.repeat(59) }, /table must be/],
    [{ store, allowHttp: 'yes' }, /allowHttp must be a boolean, got "yes"/],
    [{ store, bodyLimit: 0 }, /bodyLimit must be a positive integer of bytes, got 0/],
    [{ store, allowHTTP: true }, /^webhooks plugin: unknown option allowHTTP \(did you mean allowHttp\?\); the options are store, table, allowHttp, bodyLimit, retention, purgeInterval, now$/]
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await t.rejects(async () => { await app.register(webhooks, opts as unknown as WebhooksPluginOptions); await app.ready() }, { name: 'TypeError', message }, JSON.stringify(Object.keys(opts)))
  }
})

t.test('the deliveries table: created by migrate, under the name given, once', async t => {
  const store = await pglite.create(t)
  for (let i = 0; i < 2; i++) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(problem)
    await app.register(webhooks, { store, table: 'scanner_deliveries' })
    await app.ready()
  }
  const { rows } = await store.query<{ id: string }>('SELECT id FROM schema_migrations WHERE id LIKE $1', ['webhooks:%'])
  t.strictSame(rows.map((r) => r.id).sort(), ['webhooks:scanner_deliveries:v1', 'webhooks:scanner_deliveries:v2-received-at'])
  const columns = await store.query<{ column_name: string, data_type: string }>(
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'scanner_deliveries' ORDER BY ordinal_position")
  t.strictSame(columns.rows, [
    { column_name: 'producer', data_type: 'text' },
    { column_name: 'delivery_id', data_type: 'text' },
    { column_name: 'received_at', data_type: 'timestamp with time zone' }
  ])
})
