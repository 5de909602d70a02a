import t from 'tap'
import { build, headers } from './app.js'

t.test('en-US on every response by default, problems included', async t => {
  const app = await build(t)
  for (const [url, ua, status] of [['/echo', undefined, 200], ['/nowhere', undefined, 404], ['/echo', 'bad', 403]] as const) {
    const res = await app.inject({ method: 'GET', url, headers: ua === undefined ? headers() : headers({ 'user-agent': ua }) })
    t.equal(res.statusCode, status)
    t.equal(res.headers['content-language'], 'en-US', `${url} ${status}`)
  }
})

t.test('a handler value is never overridden; a route can change or drop it', async t => {
  const app = await build(t, { contentLanguage: 'fr-FR' }, app => {
    app.get('/own', async (_request, reply) => reply.header('Content-Language', 'de').send({}))
    app.get('/de', { config: { conventions: { contentLanguage: 'de-DE' } } }, async () => ({}))
    app.get('/none', { config: { conventions: { contentLanguage: false } } }, async () => ({}))
  })
  const cases: Array<[string, string | undefined]> = [['/echo', 'fr-FR'], ['/own', 'de'], ['/de', 'de-DE'], ['/none', undefined], ['/health', undefined]]
  for (const [url, language] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: headers() })
    t.equal(res.headers['content-language'], language, url)
  }
})

t.test('false sends none, though a route may still name one', async t => {
  const app = await build(t, { contentLanguage: false }, app => {
    app.get('/de', { config: { conventions: { contentLanguage: 'de-DE' } } }, async () => ({}))
  })
  t.notOk('content-language' in (await app.inject({ method: 'GET', url: '/echo', headers: headers() })).headers)
  t.equal((await app.inject({ method: 'GET', url: '/de', headers: headers() })).headers['content-language'], 'de-DE')
})

t.test('a refusal by a later hook, or a thrown handler, still carries it', async t => {
  const app = await build(t, {}, app => {
    app.get('/locked', { onRequest: (_request, _reply, done) => { done(Object.assign(new Error('locked'), { statusCode: 423 })) } }, async () => ({}))
    app.get('/boom', async () => { throw new Error('internal detail') })
  })
  for (const [url, status] of [['/locked', 423], ['/boom', 500]] as const) {
    const res = await app.inject({ method: 'GET', url, headers: headers() })
    t.equal(res.statusCode, status, url)
    t.equal(res.headers['content-language'], 'en-US', url)
  }
})

t.test('a refusal by an earlier hook (the problem plugin\'s X-Request-ID check) carries the headers every answer carries', async t => {
  const self = { id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'conventions-test' }
  const app = await build(t, { serviceHeader: { self } })
  const cases: Array<[string, Record<string, string>]> = [
    ['an X-Request-ID that is not ASCII', { 'x-request-id': 'é' }],
    ['an X-Request-ID too long', { 'x-request-id': 'r'.repeat(201) }]
  ]
  for (const [name, sent] of cases) {
    const res = await app.inject({ method: 'GET', url: '/echo', headers: headers({ ...sent, 'svc-execution-context': 'preprod' }) })
    t.equal(res.statusCode, 400, name)
    t.equal(res.headers['content-language'], 'en-US', `${name}: Content-Language`)
    t.equal(res.headers['svc-execution-context'], 'preprod', `${name}: the execution context sent, echoed (conventions: Svc-Execution-Context)`)
    t.equal(res.headers['svc-service'], `id=${self.id}; name=${self.name}`, `${name}: the service's own Svc-Service`)
  }
  const off = await app.inject({ method: 'GET', url: '/health', headers: headers({ 'x-request-id': 'é', 'svc-execution-context': 'preprod' }) })
  t.equal(off.statusCode, 400)
  t.notOk('content-language' in off.headers, 'a route with the rules off gets none')
  t.notOk('svc-execution-context' in off.headers, 'nor the echo')
})
