import t from 'tap'
import { databases } from '../support/databases.js'
import { SECRET, headers } from './helper.js'
import { buildApp } from '../../app.js'
import { DEV_WEBHOOK_SECRET, loadConfig } from '../../config.js'
import { signStandardWebhook } from '../../plugins/webhooks/index.js'
import { ConnectionTimeout, StatementTimeout, Unavailable } from '../../store/errors.js'

// One store for the file: each test puts back what it replaced on it.
const store = await databases[0]!.create(t)

t.test('collection reads: a database that is away is a 503, any other failure a 500, neither leaks', async t => {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
  const app = await buildApp(config, { store })
  t.teardown(() => app.close())
  const author = JSON.parse((await app.inject({ method: 'POST', url: '/v1/authors', headers: { ...headers(), 'content-type': 'application/json' }, payload: { name: 'A', email: 'a@example.com' } })).body)
  const real = store.query.bind(store)
  t.teardown(() => { store.query = real })

  store.query = async () => { throw new Unavailable('The database cannot be reached.', { cause: new Error('ECONNREFUSED 10.1.2.3:5432') }) }
  for (const url of ['/v1/documents', `/v1/authors/${author.id as string}/documents`]) {
    const res = await app.inject({ url, headers: headers() })
    t.equal(res.statusCode, 503, url)
    t.equal(res.headers['retry-after'], '1')
    t.notMatch(res.body, /ECONNREFUSED|10\.1\.2\.3/)
  }

  store.query = async () => { throw new Error('syntax error at or near "SELEKT"') }
  const broken = await app.inject({ url: '/v1/documents', headers: headers() })
  t.equal(broken.statusCode, 500)
  t.notMatch(broken.body, /SELEKT|syntax/)
})

t.test('item and page reads: a database that is away is a 503', async t => {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
  const app = await buildApp(config, { store })
  t.teardown(() => app.close())
  const real = store.query.bind(store)
  t.teardown(() => { store.query = real })
  store.query = async () => { throw new Unavailable('The database cannot be reached.', { cause: new Error('ECONNREFUSED 10.1.2.3:5432') }) }
  for (const url of ['/v1/documents/some-id', '/v1/documents/some-id/pages', '/v1/authors/some-id']) {
    const res = await app.inject({ url, headers: headers() })
    t.equal(res.statusCode, 503, url)
    t.notMatch(res.body, /ECONNREFUSED|10\.1\.2\.3/)
  }
})

t.test('/health answers 503 while the store is not ready', async t => {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
  const app = await buildApp(config, { store })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  const real = store.ready.bind(store)
  store.ready = async () => { throw new Unavailable('The database cannot be reached.') }
  t.teardown(() => { store.ready = real })
  const res = await app.inject({ url: '/health' })
  t.equal(res.statusCode, 503)
  t.equal(JSON.parse(res.body).title, 'Service Unavailable')
})

t.test('a database that does not answer in time: 503 with CONNECTION_TIMEOUT, on reads, writes and webhook deliveries', async t => {
  const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory', TRUST_PROXY: 'true' })
  const app = await buildApp(config, { store })
  t.teardown(() => app.close())
  const realQuery = store.query.bind(store)
  const realTransaction = store.transaction.bind(store)
  t.teardown(() => { store.query = realQuery; store.transaction = realTransaction })
  // A statement the database did not answer, or a connection it did not open, in time.
  for (const timeout of [new StatementTimeout(30_000), new ConnectionTimeout('No connection to the PostgreSQL server at db:5432 within 5000 ms.')]) {
    store.query = async () => { throw timeout }
    store.transaction = async () => { throw timeout }

    const body = JSON.stringify({ documentId: 'd-1', pageCount: 3, fingerprint: 'f' })
    const id = `msg-${timeout.name}`
    const now = Math.floor(Date.now() / 1000)
    const answers = {
      read: await app.inject({ url: '/v1/documents', headers: headers() }),
      write: await app.inject({ method: 'POST', url: '/v1/authors', headers: { ...headers(), 'content-type': 'application/json' }, payload: { name: 'A', email: 'a@example.com' } }),
      webhook: await app.inject({
        method: 'POST',
        url: '/_webhooks/scanner/document-scanned',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signStandardWebhook(DEV_WEBHOOK_SECRET, id, now, body) },
        payload: body
      })
    }
    for (const [what, res] of Object.entries(answers)) {
      t.equal(res.statusCode, 503, what)
      t.equal(res.headers['retry-after'], '1', what)
      t.match(JSON.parse(res.body), { title: 'Service Unavailable', status: 503, context: [{ code: 'CONNECTION_TIMEOUT' }] }, what)
      t.notMatch(res.body, /30000|30 000|5000|db:5432|ms\b/, `${what}: nothing of the store's message`)
    }
  }
})
