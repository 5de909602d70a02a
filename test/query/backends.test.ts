import t from 'tap'
import fc from 'fast-check'
import { fields, STATUSES } from './fixtures.js'
import { POOLS, filterArbitrary, orderingArbitrary, pooledValues } from './arbitraries.js'
import { DocTable, type Doc } from './pglite-helper.js'
import { databases } from '../support/databases.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'
import { buildFilter } from '../../plugins/query/filter.js'
import { orderingResolver } from '../../plugins/query/ordering.js'
import { createCursorCodec, queryFingerprint } from '../../plugins/query/cursor.js'
import { printFiql } from '../../plugins/query/fiql-print.js'
import { queryMemory } from '../../store/memory-query.js'
import { caseFoldingOf, FOLD_COLLATION_SQL, foldCollation, type CaseFolding } from '../../store/case-folding.js'
import type { RowSource } from '../../store/read-page.js'
import type { Store } from '../../store/types.js'
import type { Comparison, Filter, Keyset, OrderingTerm, Page } from '../../model/query.js'

/*
 * The SQL back end (on PGlite and on a server) and the in-memory evaluator must return the
 * same items in the same order, page by page, for any data, filter and ordering; with the
 * store's own fold collation, and with "C" as a database without a UTF-8 one would give.
 */

const codec = createCursorCodec({ secret: 'backends test secret, 32 bytes..' })
const ids = (page: Page<Doc>): string[] => page.items.map((doc) => doc.id)

function doc (id: string, init: Partial<Doc>): Doc {
  return {
    id,
    name: id,
    description: null,
    status: 'DRAFT',
    pageCount: null,
    byteCount: null,
    amount: null,
    effectiveDate: null,
    publishedDateTime: null,
    active: true,
    flagged: null,
    tags: [],
    metadata: null,
    ...init
  }
}

const examples: Doc[] = [
  doc('d1', { name: 'Alpha', description: 'first', pageCount: 1, amount: '10.5', tags: ['x', 'y'], flagged: true, metadata: { source: { system: 'erp', region: 'eu' } } }),
  doc('d2', { name: 'alpha', description: '', pageCount: 2, amount: '10.50', tags: ['y'], active: false, metadata: { source: { system: 'crm', region: null } } }),
  doc('d3', { name: 'Beta 50%', pageCount: null, amount: '-1', status: 'PUBLISHED', byteCount: '9223372036854775807', metadata: { source: null } }),
  doc('d4', { name: 'béta_x', description: 'x', pageCount: 3, byteCount: '-5', effectiveDate: '2024-02-29', publishedDateTime: '2024-01-01T00:00:00.000Z' }),
  doc('d5', { name: 'BÉTA', pageCount: 3, effectiveDate: '1999-12-31', publishedDateTime: '2024-01-01T00:00:00.001Z', flagged: false, status: 'ARCHIVED' }),
  doc('d6', { name: 'a*b\\c', tags: ['x'], metadata: { source: { system: 'ERP', region: 'us' }, score: 7 } }),
  doc('d7', { name: 'zeta 😀', amount: '0.001', status: 'PUBLISHED' }),
  doc('d8', { name: 'Zeta\uFFFD', amount: '99999999999999.9999', byteCount: '10' })
]

/** Letters beyond ASCII, each with one lower case the same in every Unicode version. */
const letters: Doc[] = [
  doc('u01', { name: 'Émile' }),
  doc('u02', { name: 'ÉMILE ZOË' }),
  doc('u03', { name: 'Zoë Ünïcode' }),
  doc('u04', { name: 'Ωμέγα' }),
  doc('u05', { name: 'ЖУК' }),
  doc('u06', { name: 'Straße' }),
  doc('u07', { name: 'STRASSE' }),
  doc('u08', { name: 'İstanbul' }),
  doc('u09', { name: 'istanbul' }),
  doc('u10', { name: 'ıstanbul' }),
  doc('u11', { name: 'ΟΔΥΣΣΕΥΣ' })
]
const all = letters.map((d) => d.id)

/** What a server with no UTF-8 collation to fold under answers: none, so the store folds under "C". */
function asciiOnly (store: Store): RowSource {
  return { query: async <R extends object>(sql: string, params: unknown[]) => sql === FOLD_COLLATION_SQL ? { rows: [] as R[] } : await store.query<R>(sql, params) }
}

const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null, freq: 3 })
const docArbitrary: fc.Arbitrary<Omit<Doc, 'id'>> = fc.record({
  name: fc.constantFrom(...POOLS.string),
  description: maybe(fc.constantFrom(...POOLS.string)),
  status: fc.constantFrom(...STATUSES),
  pageCount: maybe(fc.constantFrom(...POOLS.int32)),
  byteCount: maybe(fc.constantFrom(...POOLS.int64)),
  amount: maybe(fc.constantFrom(...POOLS.decimal)),
  effectiveDate: maybe(fc.constantFrom(...POOLS.date)),
  publishedDateTime: maybe(fc.constantFrom(...POOLS['date-time'])),
  active: fc.boolean(),
  flagged: maybe(fc.boolean()),
  tags: fc.uniqueArray(fc.constantFrom(...POOLS.tags), { maxLength: 3 }),
  metadata: maybe(fc.record({
    source: maybe(fc.record({ system: fc.constantFrom(...POOLS.string), region: maybe(fc.constantFrom(...POOLS.string)) })),
    score: fc.constantFrom(...POOLS.int32)
  }, { requiredKeys: ['source'] }))
})
const idArbitrary = fc.string({ unit: fc.constantFrom('a', 'B', 'é', '😀', '\uFFFD', '1', '_'), minLength: 1, maxLength: 3 })
const dataArbitrary = fc.uniqueArray(fc.tuple(idArbitrary, docArbitrary).map(([id, rest]) => ({ id, ...rest })), { selector: (d) => d.id, minLength: 3, maxLength: 24, size: 'max' })

for (const db of databases) {
  t.test(db.label, { skip: db.skip }, async (t) => {
    const store = await db.create(t)
    const table = new DocTable(store)
    const folding = caseFoldingOf(await foldCollation(store))
    const ascii = asciiOnly(store)
    const ordering: OrderingTerm[] = [{ field: 'id', direction: 'asc' }]
    const paging = { kind: 'cursor' as const, limit: 100 }

    t.test('documented behaviour, the same in both back ends', async (t) => {
      await table.load(examples)
      // [filter, expected, expected when the store folds ASCII letters only (if other)]
      const cases: Array<[string, string[], string[]?]> = [
        ['name==Alpha', ['d1']],
        ['name==alpha', ['d2']],
        ['name==*eta*', ['d3', 'd7', 'd8']],
        ['name=="a\\*b*"', ['d6']],
        ['name==*%', ['d3']],
        ['name=like=b_ta*', []],
        ['name=like=b*ta*', ['d4']],
        ['name=containsic=ALPHA', ['d1', 'd2']],
        // the case-insensitive operators fold every letter, or only A–Z under "C": É is é, or not
        ['name=startswithic=bé', ['d4', 'd5'], ['d4']],
        ['name=startswithic=BÉ', ['d4', 'd5'], ['d5']],
        ['name=endswith=\\\\c', ['d6']],
        ['name=notlikeic=*ALPHA*', ['d3', 'd4', 'd5', 'd6', 'd7', 'd8']],
        // every operator but isnull excludes nulls: != and =out= never return null rows
        ['description!=first', ['d2', 'd4']],
        ['pageCount=out=(1,2)', ['d4', 'd5']],
        ['pageCount!=3', ['d1', 'd2']],
        ['description=notlike=x', ['d1', 'd2']],
        ['pageCount=isnull=true', ['d3', 'd6', 'd7', 'd8']],
        ['amount==10.5', ['d1', 'd2']],
        ['amount=gt=10', ['d1', 'd2', 'd8']],
        ['amount=in=(0.0010,-1.0)', ['d3', 'd7']],
        ['byteCount=gt=9', ['d3', 'd8']],
        ['byteCount=lt=0', ['d4']],
        ['effectiveDate=ge=2000-01-01', ['d4']],
        ['publishedDateTime=gt=2024-01-01T00:00:00Z', ['d5']],
        ['publishedDateTime==2024-01-01T00:00:00Z', ['d4']],
        ['active==false', ['d2']],
        ['flagged!=true', ['d5']],
        ['status=in=(PUBLISHED,ARCHIVED);pageCount=isnull=false', ['d5']],
        ['tags==x', ['d1', 'd6']],
        ['tags!=x', ['d2', 'd3', 'd4', 'd5', 'd7', 'd8']],
        ['tags=in=(y,z)', ['d1', 'd2']],
        ['tags=out=(y)', ['d3', 'd4', 'd5', 'd6', 'd7', 'd8']],
        ['metadata.source.system==erp', ['d1']],
        ['metadata.source.system=containsic=erp', ['d1', 'd6']],
        ['metadata.source.region=isnull=true', ['d2', 'd3', 'd4', 'd5', 'd7', 'd8']],
        ['metadata.source.region!=eu', ['d6']],
        ['metadata.score=ge=7', ['d6']],
        ['name==Alpha,pageCount=ge=3;status==ARCHIVED', ['d1', 'd5']],
        ['(name==Alpha,pageCount=ge=3);status==DRAFT', ['d1', 'd4']]
      ]
      for (const [text, expected, asciiExpected = expected] of cases) {
        const filter = parseFilter(text, fields)
        t.strictSame(ids(await table.page(filter, ordering, paging)), folding === 'unicode' ? expected : asciiExpected, `sql: ${text}`)
        t.strictSame(ids(queryMemory(examples, { filter, ordering, paging }, fields, { folding })), folding === 'unicode' ? expected : asciiExpected, `memory: ${text}`)
        t.strictSame(ids(await table.page(filter, ordering, paging, ascii)), asciiExpected, `sql, folding under "C": ${text}`)
        t.strictSame(ids(queryMemory(examples, { filter, ordering, paging }, fields, { folding: 'ascii' })), asciiExpected, `memory, ASCII folding: ${text}`)
      }

      const simple = buildFilter({ simple: { description: '', name: ['*ha', 'a*'] } }, fields)
      t.strictSame(ids(await table.page(simple, ordering, paging)), ['d2', 'd6'], 'simple filters: empty means null or ""')
      t.strictSame(ids(queryMemory(examples, { filter: simple, ordering, paging }, fields)), ['d2', 'd6'])
    })

    t.test('case-insensitive operators over letters beyond ASCII', async (t) => {
      await table.load(letters)
      // [filter, expected with Unicode folding, expected with ASCII folding]
      const cases: Array<[string, string[], string[]]> = [
        ['name=startswithic=émile', ['u01', 'u02'], []],
        ['name=startswithic=ÉMILE', ['u01', 'u02'], ['u01', 'u02']],
        ['name=containsic=ünï', ['u03'], []],
        ['name=containsic=ZOË', ['u02', 'u03'], ['u02']],
        ['name=containsic=ω', ['u04'], []],
        ['name=endswithic=ΜΈΓΑ', ['u04'], []],
        ['name=startswithic=жук', ['u05'], []],
        // ß is its own lower case: no ss, as lower() has it
        ['name=containsic=ß', ['u06'], ['u06']],
        ['name=containsic=SS', ['u07'], ['u07']],
        // İ's simple lower case is i (its full one adds a combining dot); ı is only itself
        ['name=startswithic=İSTANBUL', ['u08', 'u09'], ['u08']],
        ['name=startswithic=ISTANBUL', ['u08', 'u09'], ['u09']],
        // each Σ is σ, at the end of a word too (no final ς)
        ['name=endswithic=ευσ', ['u11'], []],
        ['name=endswithic=ευς', [], []],
        ['name=notlikeic=*é*', all.filter((id) => id !== 'u01' && id !== 'u02'), all],
        ['name=likeic=*ЖУ*', ['u05'], ['u05']]
      ]
      for (const [text, unicode, asciiExpected] of cases) {
        const filter = parseFilter(text, fields)
        t.strictSame(ids(await table.page(filter, ordering, paging)), folding === 'unicode' ? unicode : asciiExpected, `sql: ${text}`)
        t.strictSame(ids(queryMemory(letters, { filter, ordering, paging }, fields)), unicode, `memory: ${text}`)
        t.strictSame(ids(await table.page(filter, ordering, paging, ascii)), asciiExpected, `sql, folding under "C": ${text}`)
        t.strictSame(ids(queryMemory(letters, { filter, ordering, paging }, fields, { folding: 'ascii' })), asciiExpected, `memory, ASCII folding: ${text}`)
      }
    })

    t.test('property: the case-insensitive operators agree on letters beyond ASCII', async (t) => {
      // Latin-1, Latin Extended-A, Greek (no final sigma) and Cyrillic letters with one lower case in every Unicode version.
      const unit = fc.constantFrom('a', 'A', 'I', 'ı', 'é', 'É', 'ÿ', 'Ÿ', 'ß', 'ł', 'Ł', 'ω', 'Ω', 'σ', 'Σ', 'ά', 'Ά', 'ж', 'Ж', 'ё', 'Ё', '%', '_')
      const value = fc.string({ unit, minLength: 1, maxLength: 2 })
      const filterOf = fc.oneof(
        fc.tuple(fc.constantFrom('contains', 'startswith', 'endswith') as fc.Arbitrary<Comparison['op']>, value).map(([op, v]): Filter => ({ kind: 'cmp', field: 'name', op, values: [v], ci: true })),
        fc.tuple(fc.constantFrom('like', 'notlike') as fc.Arbitrary<Comparison['op']>, fc.array(fc.string({ unit, maxLength: 1 }), { minLength: 2, maxLength: 4 }))
          .map(([op, wildcard]): Filter => ({ kind: 'cmp', field: 'name', op, values: [{ wildcard }], ci: true }))
      )
      let differing = 0
      await fc.assert(fc.asyncProperty(fc.array(fc.string({ unit, maxLength: 6, size: 'max' }), { minLength: 4, maxLength: 16, size: 'max' }), filterOf, fc.boolean(), async (names, filter, foldsAscii) => {
        const data = names.map((name, i) => doc(`n${String(i).padStart(2, '0')}`, { name }))
        await table.load(data)
        const sql = ids(await table.page(filter, ordering, paging, foldsAscii ? ascii : store))
        const memory = ids(queryMemory(data, { filter, ordering, paging }, fields, { folding: foldsAscii ? 'ascii' : folding }))
        if (JSON.stringify(sql) !== JSON.stringify(memory)) t.strictSame(sql, memory, `${printFiql(filter)} over ${JSON.stringify(names)}${foldsAscii ? ', ASCII folding' : ''}`)
        if (JSON.stringify(ids(queryMemory(data, { filter, ordering, paging }, fields, { folding: 'ascii' }))) !== JSON.stringify(ids(queryMemory(data, { filter, ordering, paging }, fields)))) differing++
      }), { numRuns: 200 })
      t.ok(differing >= 10, `${differing} filters where the two foldings differ`)
    })

    t.test('ordering: code points, numbers exactly, nulls greater than every value', async (t) => {
      await table.load(examples)
      const resolve = orderingResolver(fields)
      const cases: Array<[string[], string[]]> = [
        [['name'], ['d1', 'd3', 'd5', 'd8', 'd6', 'd2', 'd4', 'd7']],
        [['-name'], ['d7', 'd4', 'd2', 'd6', 'd8', 'd5', 'd3', 'd1']],
        [['amount'], ['d3', 'd7', 'd1', 'd2', 'd8', 'd4', 'd5', 'd6']],
        [['-amount'], ['d4', 'd5', 'd6', 'd8', 'd1', 'd2', 'd7', 'd3']],
        [['pageCount', '-id'], ['d1', 'd2', 'd5', 'd4', 'd8', 'd7', 'd6', 'd3']],
        [['-byteCount'], ['d1', 'd2', 'd5', 'd6', 'd7', 'd3', 'd8', 'd4']],
        [['-flagged', 'active'], ['d2', 'd3', 'd4', 'd6', 'd7', 'd8', 'd1', 'd5']],
        [['metadata.source.system'], ['d6', 'd2', 'd1', 'd3', 'd4', 'd5', 'd7', 'd8']]
      ]
      for (const [values, expected] of cases) {
        const ordering = resolve(values)
        t.strictSame(ids(await table.page(null, ordering, paging)), expected, `sql: ${values.join(',')}`)
        t.strictSame(ids(queryMemory(examples, { filter: null, ordering, paging }, fields)), expected, `memory: ${values.join(',')}`)
      }
    })

    t.test('property: both back ends agree page by page, forwards and backwards, with no skip or repeat', async (t) => {
      let pagesSeen = 0
      let rowsSeen = 0
      await fc.assert(fc.asyncProperty(
        dataArbitrary,
        fc.option(filterArbitrary(fields, pooledValues, 2), { nil: null, freq: 3 }),
        orderingArbitrary(fields),
        fc.integer({ min: 1, max: 4 }),
        // Past the end as often as not: the count still comes, with an empty page.
        fc.integer({ min: 0, max: 30 }),
        // The store's own fold collation, or "C" as a database without a UTF-8 one gives.
        fc.boolean(),
        async (data, filter, ordering, limit, offset, foldsAscii) => {
          await table.load(data)
          const via = foldsAscii ? ascii : store
          const options: { folding: CaseFolding } = { folding: foldsAscii ? 'ascii' : folding }
          const label = `${filter === null ? '' : printFiql(filter)} | ${ordering.map((o) => (o.direction === 'desc' ? '-' : '') + o.field).join(',')} | limit ${limit}${foldsAscii ? ' | ASCII folding' : ''}`
          const fingerprint = queryFingerprint('/docs', ordering, filter)
          const all = queryMemory(data, { filter, ordering, paging: { kind: 'cursor', limit: 1000 } }, fields, options)
          const allSql = await table.page(filter, ordering, { kind: 'cursor', limit: 1000 }, via)
          t.strictSame(ids(allSql), ids(all), `whole result: ${label}`)
          rowsSeen += all.items.length

          async function step (cursor: Keyset | undefined): Promise<Page<Doc>> {
            // Through a real cursor string, as a client would send it back.
            const decoded = cursor === undefined ? undefined : codec.decode(codec.encode(cursor, fingerprint), fingerprint)
            const paging = decoded === undefined ? { kind: 'cursor' as const, limit } : { kind: 'cursor' as const, limit, cursor: decoded }
            const sql = await table.page(filter, ordering, paging, via)
            const memory = queryMemory(data, { filter, ordering, paging }, fields, options)
            if (JSON.stringify(sql) !== JSON.stringify(memory)) t.strictSame(sql, memory, `page after ${JSON.stringify(cursor)}: ${label}`)
            pagesSeen++
            return memory
          }

          // A cursor with no boundary (an empty page's link back): the first or the last items.
          const fromStart = ids(await step({ direction: 'next', values: [] }))
          if (JSON.stringify(fromStart) !== JSON.stringify(ids(all).slice(0, limit))) t.strictSame(fromStart, ids(all).slice(0, limit), `from the start: ${label}`)
          const fromEnd = ids(await step({ direction: 'previous', values: [] }))
          const lastItems = ids(all).slice(Math.max(0, all.items.length - limit))
          if (JSON.stringify(fromEnd) !== JSON.stringify(lastItems)) t.strictSame(fromEnd, lastItems, `from the end: ${label}`)

          const forward: Array<Page<Doc>> = [await step(undefined)]
          while ((forward.at(-1) as Page<Doc>).next !== null && forward.length <= data.length) forward.push(await step(forward.at(-1)?.next ?? undefined))
          const walked = forward.flatMap(ids)
          if (JSON.stringify(walked) !== JSON.stringify(ids(all))) t.strictSame(walked, ids(all), `forward walk: ${label}`)
          if (forward.slice(0, -1).some((page) => page.items.length !== limit)) t.fail(`short page before the end: ${label}`)

          const backward: Array<Page<Doc>> = [forward.at(-1) as Page<Doc>]
          while ((backward.at(-1) as Page<Doc>).previous !== null && backward.length <= data.length + 1) backward.push(await step(backward.at(-1)?.previous ?? undefined))
          const back = backward.reverse().map(ids)
          if (JSON.stringify(back) !== JSON.stringify(forward.map(ids))) t.strictSame(back, forward.map(ids), `backward walk: ${label}`)

          const paging = { kind: 'offset' as const, limit, offset, totalCount: true }
          const sqlOffset = await table.page(filter, ordering, paging, via)
          const memoryOffset = queryMemory(data, { filter, ordering, paging }, fields, options)
          if (JSON.stringify(sqlOffset) !== JSON.stringify(memoryOffset)) t.strictSame(sqlOffset, memoryOffset, `offset page: ${label}`)
          if (memoryOffset.totalCount !== all.items.length) t.fail(`total count: ${label}`)
        }
      ), { numRuns: 150 })
      t.ok(pagesSeen > 150, `${pagesSeen} pages compared, ${rowsSeen} rows matched`)
    })
  })
}
