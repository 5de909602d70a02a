import t from 'tap'
import { build } from '../../examples/resource.js'
import { signToken } from '../../plugins/auth/sign.js'
import { postgres } from '../support/databases.js'

// README, "Running on PostgreSQL and scaling out": instances are stateless; what they share is
// the database, CURSOR_SECRET and the token keys. Two instances of the example on one server.
const jwtSecret = 'a test secret of at least thirty-two bytes'
const cursorSecret = 'a cursor secret of thirty-two bytes'
const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
  'user-agent': 'library-test/1.0',
  authorization: `Bearer ${signToken({ secret: jwtSecret, sub: 'alice', scope: 'books:read books:write' })}`,
  ...extra
})

t.test('two instances over one PostgreSQL server behave as one service', { skip: postgres.skip }, async (t) => {
  const storeA = await postgres.create(t)
  const storeB = await postgres.sibling?.(t, storeA)
  const a = await build({ jwtSecret, cursorSecret, store: storeA })
  const b = await build({ jwtSecret, cursorSecret, store: storeB })
  const foreign = await build({ jwtSecret, cursorSecret: 'another cursor secret, not shared', store: storeB })
  t.teardown(async () => { await Promise.all([a.close(), b.close(), foreign.close()]) })

  const ids: string[] = []
  for (const [isbn, pageCount] of [['9780000000201', 10], ['9780000000202', 20], ['9780000000203', 30]] as const) {
    const res = await a.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: { title: `Book ${pageCount}`, isbn, pageCount } })
    t.equal(res.statusCode, 201)
    ids.push(res.json().id)
  }
  const [first] = ids as [string]

  const duplicate = await b.inject({ method: 'POST', url: '/v1/books', headers: headers(), payload: { title: 'Copy', isbn: '9780000000201', pageCount: 1 } })
  t.equal(duplicate.statusCode, 409, 'uniqueness holds across instances: it is a database constraint')

  const page = (await a.inject({ url: '/v1/books?ordering=pageCount&limit=2', headers: headers() })).json()
  const next = new URL(page.paging.next.url)
  const rest = await b.inject({ url: next.pathname + next.search, headers: headers() })
  t.equal(rest.statusCode, 200, 'a cursor from one instance pages on another with the same CURSOR_SECRET')
  t.strictSame(rest.json().results.map((x: { pageCount: number }) => x.pageCount), [30])
  const refused = await foreign.inject({ url: next.pathname + next.search, headers: headers() })
  t.equal(refused.statusCode, 400, 'an instance with another CURSOR_SECRET refuses the cursor')

  // Compare-and-set ETags in the database: a write through B voids the ETag A handed out.
  const etag = (await a.inject({ url: `/v1/books/${first}`, headers: headers() })).headers.etag as string
  const patch = { 'content-type': 'application/merge-patch+json', 'if-match': etag }
  t.equal((await b.inject({ method: 'PATCH', url: `/v1/books/${first}`, headers: headers(patch), payload: { pageCount: 11 } })).statusCode, 204)
  t.equal((await a.inject({ method: 'PATCH', url: `/v1/books/${first}`, headers: headers(patch), payload: { pageCount: 12 } })).statusCode, 412)
  t.equal((await a.inject({ url: `/v1/books/${first}`, headers: headers() })).json().pageCount, 11)
})
