// Pages of the documents collection, seeded with BENCH_DOCUMENTS documents (run.js):
// - the first page, in the default order (creation), against the same query written by hand
//   (servers/pg-bare.js), and against it a page half the collection deep, by cursor (keyset paging);
// - a filtered page ordered as an index serves it, and a filtered page whose ordering no index
//   serves, each against the same query written by hand.
// Before the load, the bare routes are checked to answer the very documents the service does,
// field by field, and the deep page to start right after the row at that depth.
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { pairedRounds } from './lib/harness.js'
import { call, headers, startBare, startService } from './lib/service.js'

const query = (pairs) => new URLSearchParams(pairs).toString()

/** Served by the index (ctx, kind, "pageCount" DESC, id). */
export const ORDERED = query([['kind', 'INVOICE'], ['filter', 'pageCount=ge=100;status==PUBLISHED'], ['ordering', '-pageCount']])
/** No index has this order: PostgreSQL reads ("pageCount", id) backwards and sorts each run of equal page counts. */
export const UNINDEXED = query([['filter', 'status==PUBLISHED;pageCount=ge=100'], ['ordering', '-pageCount'], ['ordering', 'name']])
/** The first page, in the default order: creation, then id. The hand-written route's is the same path. */
const FIRST = 'limit=20'
// The same two queries in the hand-written route's parameters.
const BARE_ORDERED = query([['kind', 'INVOICE'], ['status', 'PUBLISHED'], ['minPageCount', '100'], ['ordering', '-pageCount']])
const BARE_UNINDEXED = query([['status', 'PUBLISHED'], ['minPageCount', '100'], ['ordering', '-pageCount,name']])

/**
 * The cursor a client holds after paging `depth` documents in the default order (by id): the
 * service's own, followed page by page, as only the service can seal one.
 */
async function cursorAt (service, depth, log) {
  let cursor = null
  for (let seen = 0; seen < depth;) {
    const limit = Math.min(100, depth - seen)
    const page = await call(service, 'GET', `/v1/documents?${query([['limit', String(limit)], ...(cursor === null ? [] : [['cursor', cursor]])])}`)
    seen += page.results.length
    cursor = page.paging.next.cursor
    if (seen % 100_000 === 0) log(`  followed the cursor ${seen.toLocaleString('en-US')} documents deep`)
  }
  return cursor
}

/** Runs the cases on the seeded database at `url`; returns their rounds and the depth. */
export async function runCollection ({ url, count, log }) {
  const depth = Math.floor(count / 2)
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  let deepPath
  try {
    const service = await startService(url)
    const bare = await startBare(url)
    try {
      const cursor = await cursorAt(service, depth, log)
      deepPath = `/v1/documents?${query([['limit', '20'], ['cursor', cursor]])}`
      // Collections come in creation order by default: createdDateTime, then id.
      const { rows } = await db.query(`SELECT id FROM documents WHERE ctx = 'prod' AND "deletedDateTime" IS NULL ORDER BY "createdDateTime", id OFFSET ${depth} LIMIT 1`)
      if ((await call(service, 'GET', deepPath)).results[0]?.id !== rows[0].id) throw new Error(`the page ${depth} deep does not start after the row at that depth`)
      for (const [mine, theirs] of [[FIRST, FIRST], [ORDERED, BARE_ORDERED], [UNINDEXED, BARE_UNINDEXED]]) {
        const expected = (await call(service, 'GET', `/v1/documents?${mine}`)).results
        const got = (await call(bare, 'GET', `/v1/documents?${theirs}`)).results
        if (expected.length === 0 || !isDeepStrictEqual(got, expected)) throw new Error(`the baseline's page for ${theirs} differs from the service's for ${mine}`)
      }
    } finally {
      await service.stop()
      await bare.stop()
    }
  } finally {
    await db.end()
  }
  const results = await pairedRounds({
    start: async () => ({ service: await startService(url), bare: await startBare(url) }),
    cases: {
      'first bare': { server: 'bare', path: `/v1/documents?${FIRST}`, headers },
      first: { server: 'service', path: `/v1/documents?${FIRST}`, headers },
      deep: { server: 'service', path: deepPath, headers },
      'ordered bare': { server: 'bare', path: `/v1/documents?${BARE_ORDERED}`, headers },
      ordered: { server: 'service', path: `/v1/documents?${ORDERED}`, headers },
      'unindexed bare': { server: 'bare', path: `/v1/documents?${BARE_UNINDEXED}`, headers },
      unindexed: { server: 'service', path: `/v1/documents?${UNINDEXED}`, headers }
    },
    log
  })
  return { results, depth }
}
