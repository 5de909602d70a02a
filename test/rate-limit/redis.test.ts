import t from 'tap'
import { Redis, type RedisOptions } from 'ioredis'
import { bearer, bodyOf, build } from './helper.js'
import { answerOf, freePort, silentRedis, skipRedis, startRedis } from './redis.js'

const ALICE = bearer('alice')

t.test('Redis: the limit holds across instances', { skip: skipRedis }, async t => {
  const url = await startRedis(t)

  t.test('two apps opening their own clients from the URL', async t => {
    // The plugin's short Redis timeouts would make a stall of this process a 503: its clients are
    // opened as it opens them, with generous timeouts instead.
    type Options = RedisOptions & { replyMapping?: 'legacy' }
    const opened: string[] = []
    class PatientRedis extends Redis {
      constructor (url: string, options: Options) {
        opened.push(url)
        super(url, { ...options, connectTimeout: 10_000, commandTimeout: 10_000 })
      }
    }
    const { build } = await t.mockImport<typeof import('./helper.js')>('./helper.js', { ioredis: { Redis: PatientRedis } })
    const nameSpace = 'svc-test-url:'
    const a = await build(t, { max: 3, redis: url, nameSpace })
    const b = await build(t, { max: 3, redis: url, nameSpace })
    t.strictSame(opened, [url, url], 'each app opened its own client from the URL')
    const statuses: number[] = []
    for (const app of [a, b, a, b, a]) statuses.push((await app.inject({ url: '/things', headers: { authorization: ALICE } })).statusCode)
    t.strictSame(statuses, [200, 200, 200, 429, 429])
    const res = await b.inject({ url: '/things', headers: { authorization: ALICE } })
    t.match(bodyOf(res), { status: 429, detail: /^The limit of 3 requests per 1 minute is used up; retry after \d+ seconds\.$/ })
    t.equal((await b.inject({ url: '/things', headers: { authorization: bearer('bob') } })).statusCode, 200, 'another subject')
    const client = new Redis(url)
    t.teardown(() => client.disconnect())
    const keys = await client.keys(`${nameSpace}*`)
    t.ok(keys.includes(`${nameSpace}sub:alice`), 'kept under the name space, keyed by subject')
    const ttl = await client.pttl(`${nameSpace}sub:alice`)
    t.ok(ttl > 0 && ttl <= 60_000, `the count expires with its window (${ttl} ms left)`)
  })

  t.test('a client of yours, left open when the apps close', async t => {
    const client = new Redis(url)
    t.teardown(() => client.disconnect())
    const a = await build(t, { max: 1, redis: client, nameSpace: 'svc-test-client:' })
    const b = await build(t, { max: 1, redis: client, nameSpace: 'svc-test-client:' })
    t.equal((await a.inject({ url: '/things', headers: { 'x-forwarded-for': '198.51.100.4' } })).statusCode, 200)
    t.equal((await b.inject({ url: '/things', headers: { 'x-forwarded-for': '198.51.100.4' } })).statusCode, 429, 'by address, across apps')
    await a.close()
    t.equal(await client.ping(), 'PONG', 'still usable')
  })
})

t.test('Redis unreachable: a 503 saying so by default, requests let through with skipOnError', async t => {
  const url = `redis://127.0.0.1:${await freePort()}`
  const closed = await build(t, { redis: url }, {
    routes: (app) => { app.get('/own', { config: { rateLimit: { max: 5 } } }, async () => ({ own: true })) }
  })
  for (const path of ['/things', '/own']) {
    const res = await closed.inject({ url: path })
    t.equal(res.statusCode, 503, `${path}: the limit cannot be checked, which a client may retry`)
    t.equal(res.headers['retry-after'], '1')
    t.match(bodyOf(res), { title: 'Service Unavailable', status: 503, detail: 'The rate limit cannot be checked now; retry later.' })
    t.notMatch(res.body, /ECONNREFUSED|127\.0\.0\.1|redis/i, 'nothing of the connection')
  }
  const open = await build(t, { redis: url, skipOnError: true })
  t.equal((await open.inject({ url: '/things' })).statusCode, 200)
})

t.test('a Redis that connects and never answers: a 503 within the command timeout, not a request held for ever', async t => {
  const app = await build(t, { redis: await silentRedis(t) })
  for (const headers of [{}, { authorization: ALICE }]) {
    const res = await answerOf(app.inject({ url: '/things', headers }))
    if (res === 'no answer') return t.fail('no answer: the request waits for Redis for ever')
    t.equal(res.statusCode, 503)
    t.equal(res.headers['retry-after'], '1')
    t.match(bodyOf(res), { status: 503, detail: 'The rate limit cannot be checked now; retry later.' })
  }
})
