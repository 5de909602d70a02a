import t from 'tap'
import { Redis } from 'ioredis'
import { bearer, bodyOf, build } from './helper.js'
import { freePort, skipRedis, startRedis } from './redis.js'

const ALICE = bearer('alice')

t.test('Redis: the limit holds across instances', { skip: skipRedis }, async t => {
  const url = await startRedis(t)

  t.test('two apps opening their own clients from the URL', async t => {
    const nameSpace = 'svc-test-url:'
    const a = await build(t, { max: 3, redis: url, nameSpace })
    const b = await build(t, { max: 3, redis: url, nameSpace })
    const statuses: number[] = []
    for (const app of [a, b, a, b, a]) statuses.push((await app.inject({ url: '/things', headers: { authorization: ALICE } })).statusCode)
    t.same(statuses, [200, 200, 200, 429, 429])
    const res = await b.inject({ url: '/things', headers: { authorization: ALICE } })
    t.match(bodyOf(res), { status: 429, detail: /^The limit of 3 requests per 1 minute is used up; retry after \d+ seconds\.$/ })
    t.equal((await b.inject({ url: '/things', headers: { authorization: bearer('bob') } })).statusCode, 200, 'another subject')
    const client = new Redis(url)
    t.teardown(() => client.disconnect())
    const keys = await client.keys(`${nameSpace}*`)
    t.ok(keys.includes(`${nameSpace}sub:alice`), 'kept under the name space, keyed by subject')
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

t.test('Redis unreachable: 500 by default, requests let through with skipOnError', async t => {
  const url = `redis://127.0.0.1:${await freePort()}`
  const closed = await build(t, { redis: url })
  const res = await closed.inject({ url: '/things' })
  t.equal(res.statusCode, 500)
  t.equal(bodyOf(res).title, 'Internal Server Error')
  const open = await build(t, { redis: url, skipOnError: true })
  t.equal((await open.inject({ url: '/things' })).statusCode, 200)
})
