import t from 'tap'
import { createHash } from 'node:crypto'
import { databases } from '../support/databases.js'
import { SECRET, headers } from './helper.js'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import type { Store, Tx } from '../../store/types.js'

// The plans of the statements the reference service runs for its collections: the primary
// key and the indexes the resources declare serve the orderings, the keyset conditions and
// the filters, with no sort and no scan of the rows before a deep page. The planner is told
// not to sort or scan sequentially unless it cannot do otherwise (enable_* = off), so each
// check asks whether an index CAN serve the query, whatever the table's size; EXPLAIN
// ANALYZE then counts the rows the index scan read.

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Index Cond'?: string
  'Actual Rows'?: number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

interface Statement { text: string, params: unknown[] }

/** The store, noting the statements the service sends through `query`. */
function spying (store: Store, seen: Statement[]): Store {
  return {
    kind: store.kind,
    location: store.location,
    query: async (text, params, options) => {
      seen.push({ text, params: [...(params ?? [])] })
      return await store.query(text, params, options)
    },
    exec: async (sql) => { await store.exec(sql) },
    transaction: async <T>(fn: (tx: Tx) => Promise<T>, opts?: Parameters<Store['transaction']>[1]) => await store.transaction(fn, opts),
    ready: async () => { await store.ready() },
    listen: async (channel, onNotify) => await store.listen(channel, onNotify),
    close: async () => { await store.close() }
  }
}

const COUNT = 3000

// Two authors; status cycles every row, kind every third, and pageCount takes each value 0–999 three times.
const SEED = `
INSERT INTO authors (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, email, active)
  SELECT 'prod', 'a' || n, '"e"', now(), now(), 'Author ' || n, 'a' || n || '@example.com', true FROM generate_series(0, 1) AS n;
INSERT INTO documents (ctx, id, etag, "createdDateTime", "modifiedDateTime", name, "authorId", status, kind, "pageCount", tags, pages)
  SELECT 'prod', md5('d' || i), '"e"', timestamptz '2024-01-01 00:00:00Z' + i * interval '1 minute', now(),
    'doc ' || lpad(i::text, 5, '0'), 'a' || (i % 2), (ARRAY['DRAFT', 'PUBLISHED', 'ARCHIVED'])[1 + i % 3],
    (ARRAY['INVOICE', 'CONTRACT', 'PURCHASE_ORDER'])[1 + (i / 3) % 3], (i * 7919) % 1000, '{}', '[]'
  FROM generate_series(1, ${COUNT}) AS i;
ANALYZE authors;
ANALYZE documents`

function nodes (node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)]
}

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async t => {
    const store = await db.create(t)
    const seen: Statement[] = []
    const { config } = loadConfig({ LOG_LEVEL: 'silent', AUTH_JWT_SECRET: SECRET, DATA_DIR: 'memory' })
    // No delivery worker: its claims would pass through the spy between a page's statements.
    // The jobs worker and the purges query in the background too: a page's statement is the last
    // one on a resource table (below).
    const app = await buildApp(config, { store: spying(store, seen), events: { worker: false } })
    t.teardown(() => app.close())
    await app.ready()
    await store.exec(SEED)

    async function page (path: string): Promise<{ body: any, statement: Statement }> {
      seen.length = 0
      const res = await app.inject({ url: path, headers: headers() })
      t.equal(res.statusCode, 200, path)
      const mine = seen.filter(s => /FROM "(documents|authors)"/.test(s.text))
      return { body: res.json(), statement: mine[mine.length - 1] as Statement }
    }

    /** The cursor after `depth` items of the collection query `query`, paging through the service. */
    async function cursorAt (path: string, depth: number): Promise<string> {
      let cursor = ''
      for (let read = 0; read < depth; read += 100) {
        const { body } = await page(`${path}${path.includes('?') ? '&' : '?'}limit=100${cursor === '' ? '' : `&cursor=${cursor}`}`)
        cursor = body.paging.next.cursor
      }
      return cursor
    }

    async function explain (statement: Statement): Promise<PlanNode> {
      return await store.transaction(async tx => {
        await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off')
        const { rows } = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.params)
        return (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan as PlanNode
      })
    }

    /** The page of `path` is read through `index`, bounded by `cond`, reading at most `maxRead` rows. */
    async function served (path: string, index: string, cond: RegExp[], maxRead: number): Promise<any> {
      const { body, statement } = await page(path)
      const plan = nodes(await explain(statement))
      const types = plan.map(n => n['Node Type'])
      t.notOk(types.some(type => /Sort|Seq Scan|Bitmap/.test(type)), `${path}: no sort and no other scan (${types.join(' > ')})`)
      const scan = plan.find(n => n['Node Type'] === 'Index Scan') as PlanNode
      t.equal(scan?.['Index Name'], index, `${path}: ${index}`)
      for (const c of cond) t.match(scan?.['Index Cond'], c, `${path}: the index scan is bounded by ${String(c)}`)
      const read = (scan?.['Actual Rows'] ?? Infinity) + (scan?.['Rows Removed by Filter'] ?? 0)
      t.ok(read <= maxRead, `${path}: ${read} rows read for a page of ${body.results.length} (at most ${maxRead})`)
      return body
    }

    t.test('the default ordering, creation order: its own index, first page and deep pages alike', async t => {
      const first = await served('/v1/documents?limit=20', 'documents_by_createdDateTime', [/ctx = 'prod'/], 21)
      t.equal(first.results.length, 20)
      t.strictSame(first.results.map((d: any) => d.name), Array.from({ length: 20 }, (_, i) => `doc ${String(i + 1).padStart(5, '0')}`), 'oldest first, not in the order of the random ids')
      const cursor = await cursorAt('/v1/documents', COUNT / 2)
      const boundary = /ROW\("createdDateTime", id\) > ROW\('2024-01-0[^']+'::timestamp with time zone, '[0-9a-f]{32}'::text\)/
      const deep = await served(`/v1/documents?limit=20&cursor=${cursor}`, 'documents_by_createdDateTime', [boundary], 21)
      t.equal(deep.results.length, 20)
      t.equal(deep.results[0].name, `doc ${String(COUNT / 2 + 1).padStart(5, '0')}`, 'the keyset cursor goes on where the last page stopped')
      const before = await served(`/v1/documents?limit=20&cursor=${deep.paging.previous.cursor as string}`, 'documents_by_createdDateTime', [/ROW\("createdDateTime", id\) < ROW\(/], 21)
      t.equal(before.results[19].createdDateTime < deep.results[0].createdDateTime, true, 'a previous page reads the index backwards')
    })

    t.test('declared indexes serve the orderings, deep keyset pages included', async t => {
      const row = (field: string): RegExp => new RegExp(`ROW\\(${field}, id\\) > ROW\\('?[\\w ]+'?(::text)?, '[0-9a-f]{32}'::text\\)`)
      const cases: Array<[string, string, RegExp, number]> = [
        // One direction: the row comparison starts the scan right after the boundary.
        ['ordering=pageCount', 'documents_by_pageCount', row('"pageCount"'), 21],
        ['ordering=name', 'documents_by_name', row('name'), 21],
        // Descending then the ascending id: the scan starts among the rows tied with the boundary (here itself).
        ['ordering=-createdDateTime', 'documents_by_createdDateTime_desc', /"createdDateTime" <= '2024-01-0/, 22]
      ]
      for (const [query, index, bound, maxRead] of cases) {
        await served(`/v1/documents?limit=20&${query}`, index, [/ctx = 'prod'/], 21)
        const cursor = await cursorAt(`/v1/documents?${query}`, COUNT / 2)
        await served(`/v1/documents?limit=20&${query}&cursor=${cursor}`, index, [bound], maxRead)
      }
      await served('/v1/authors?ordering=name', 'authors_by_name', [/ctx = 'prod'/], 3)
    })

    t.test('filtered pages use the index that leads with their equality filters', async t => {
      const filtered = `kind=INVOICE&filter=${encodeURIComponent('pageCount=ge=100;status==PUBLISHED')}&ordering=-pageCount`
      // About one row in three passes the status filter the index does not hold.
      await served(`/v1/documents?limit=20&${filtered}`, 'documents_by_kind_pageCount_desc', [/kind = 'INVOICE'::text/, /"pageCount" >= 100/], 90)
      const cursor = await cursorAt(`/v1/documents?${filtered}`, 200)
      const deep = await served(`/v1/documents?limit=20&${filtered}&cursor=${cursor}`, 'documents_by_kind_pageCount_desc',
        [/kind = 'INVOICE'::text/, /"pageCount" >= 100/, /"pageCount" <= \d+/], 90)
      t.ok(deep.results.every((d: any) => d.kind === 'INVOICE' && d.status === 'PUBLISHED' && d.pageCount >= 100), 'the page matches the filter')
      await served('/v1/documents?limit=20&status=ARCHIVED', 'documents_by_status_createdDateTime', [/status = 'ARCHIVED'::text/], 21)
      const child = await served('/v1/authors/a1/documents?limit=20', 'documents_by_authorId_createdDateTime', [/"authorId" = 'a1'::text/], 21)
      t.ok(child.results.every((d: any) => d.authorId === 'a1'))
    })

    t.test('a ref compared for equality reads its id by the primary key', async t => {
      const id = (i: number): string => createHash('md5').update(`d${i}`).digest('hex')
      const ref = (i: number): string => encodeURIComponent(`svc:document::${id(i)}`)
      // [path, the ids the index scan is bounded by]: the page's one or two rows, its order sorted after.
      const cases: Array<[string, string]> = [
        [`/v1/documents?ref=${ref(7)}`, `id = '${id(7)}'::text`],
        [`/v1/documents?filter=${encodeURIComponent(`ref=in=(svc:document::${id(7)},svc:document::${id(9)},${id(11)})`)}`, `id = ANY ('{${id(7)},${id(9)}}'::text[])`],
        [`/v1/documents?ordering=name&refFilter=${encodeURIComponent(`ref==svc:document::${id(7)}`)}`, `id = '${id(7)}'::text`]
      ]
      for (const [path, bound] of cases) {
        const { body, statement } = await page(path)
        t.strictSame(body.results.map((d: any) => d.ref).sort(), [...bound.matchAll(/[0-9a-f]{32}/g)].map(m => `svc:document::${m[0]}`).sort(), `${path}: the documents named`)
        const plan = nodes(await store.transaction(async tx => {
          await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off')
          const { rows } = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.params)
          return (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan as PlanNode
        }))
        const scan = plan.find(n => n['Node Type'] === 'Index Scan')
        t.equal(scan?.['Index Name'], 'documents_pkey', `${path}: the primary key`)
        t.ok(String(scan?.['Index Cond']).includes(bound), `${path}: bounded by the id (${String(scan?.['Index Cond'])})`)
      }
    })
  })
}
