import t from 'tap'
import { collectionQueryOf } from '../../plugins/query/index.js'
import { DocTable } from '../query/pglite-helper.js'
import { build, docs, get, local, PATH, search } from './helper.js'

/*
 * The connection a resource makes: its handler takes the request's collection query,
 * runs compileSql against its table (DocTable: compile → select → finishPage → count)
 * and hands the page to reply.sendCollection. Over PGlite it must answer exactly what
 * the in-memory evaluator answers, links and cursors included.
 */

t.test('a collection over SQL answers exactly like the one over memory', async (t) => {
  const table = new DocTable()
  t.teardown(() => table.close())
  await table.load(docs)
  const sql = await build(t, {
    handler: async (request, reply) => {
      const { filter, ordering, paging } = collectionQueryOf(request)
      return reply.sendCollection(await table.page(filter, ordering, paging))
    }
  })
  const memory = await build(t)

  const queries = [
    'limit=4',
    'limit=3&ordering=-pageCount&ordering=name',
    'limit=5&status=DRAFT&status=ARCHIVED&ordering=metadata.source.system',
    `limit=2&filter=${encodeURIComponent('pageCount=ge=3,amount=isnull=true')}&ordering=-amount`,
    `limit=3&metadataFilter=${encodeURIComponent('source.system==erp')}&ordering=publishedDateTime`,
    'limit=4&offset=3&totalCount=true&tags=a',
    'limit=3&name=Doc*&ordering=flagged'
  ]
  for (const q of queries) {
    let a = await get(sql, `${PATH}?${q}`)
    let b = await get(memory, `${PATH}?${q}`)
    t.equal(a.status, 200, q)
    t.strictSame(a.body, b.body, `${q}: page 1`)
    let pages = 1
    while (a.body.paging.next !== null && pages < 20) {
      a = await get(sql, local(a.body.paging.next.url))
      b = await get(memory, local(b.body.paging.next.url))
      pages++
      t.strictSame(a.body, b.body, `${q}: page ${pages}`)
    }
    t.ok(pages > 1, `${q}: several pages`)
    const back = await get(sql, local(a.body.paging.previous.url))
    t.strictSame(back.body, (await get(memory, local(b.body.paging.previous.url))).body, `${q}: back one page`)
  }
  const posted = await search(sql, { status: 'DRAFT', ordering: '-name', paging: { limit: 2 } })
  t.strictSame(posted.body, (await search(memory, { status: 'DRAFT', ordering: '-name', paging: { limit: 2 } })).body, 'the search too')
})
