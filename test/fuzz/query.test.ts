import t from 'tap'
import fc from 'fast-check'
import { POOLS, filterArbitrary, orderingArbitrary, pooledValues } from '../query/arbitraries.js'
import { printFiql } from '../../plugins/query/fiql-print.js'
import type { FieldMap } from '../../model/query.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'
import { Tally, afterwards, good, judge, send, startFuzzService, type Reply, report } from './support.js'

/*
 * Bad input, query strings (issue 7): the collection routes of the reference service over
 * real HTTP and its store. test/query-plugin/fuzz.test.ts fuzzes the query plugin alone over
 * an array; here the printed filters of test/query/arbitraries.ts over the service's own field
 * maps, mutated, mis-encoded, repeated and oversized, reach the SQL compiler and the store.
 */

const docFields = documents.storage.fields
const authorFields = authors.storage.fields

const only = (fields: FieldMap, keep: (path: string) => boolean): FieldMap => new Map([...fields].filter(([path]) => keep(path)))

/** A valid FIQL text, or the same with a token dropped, doubled or replaced. */
function fiqlOf (fields: FieldMap, prefix?: string): fc.Arbitrary<string> {
  const valid = filterArbitrary(fields, pooledValues, 3).map((f) => printFiql(f, prefix))
  const mutated = fc.tuple(valid, fc.nat(), fc.constantFrom('', ';', ',', '(', ')', '==', '=gt=', '=in=(', '"', "'", '\\', '*', '=bogus=', '%', 'é', '\u0000', ' '))
    .map(([text, at, token]) => {
      const i = text.length === 0 ? 0 : at % text.length
      return at % 3 === 0 ? text.slice(0, i) + token + text.slice(i + 1) : text.slice(0, i) + token + text.slice(i)
    })
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: mutated })
}

const SAFE = /^[A-Za-z0-9\-._~!$'()*,;:@/?]$/

/** Encodes text the way some client might: characters raw or %XX, spaces as + or %20. */
const encoded = (text: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.tuple(text, fc.nat()).map(([value, seed]) => {
  let out = ''
  let state = seed >>> 0
  for (const ch of value) {
    state = (state * 1103515245 + 12345) >>> 0
    const pick = state % 4
    if (ch === ' ') out += pick < 2 ? '+' : '%20'
    else if (SAFE.test(ch) && pick !== 0) out += ch
    else out += percent(ch)
  }
  return out
})

/** %XX of the UTF-8 bytes; a lone surrogate (a mutation may split a pair) as the bytes CESU-8 would give it. */
function percent (ch: string): string {
  try {
    return encodeURIComponent(ch)
  } catch {
    return '%ED%A0%80'
  }
}

/** Byte sequences no decoder accepts, lone percent signs and overlong UTF-8. */
const BAD_ESCAPES = ['%', '%Z', '%ZZ', '%E0%A4', '%C0%AF', '%ED%A0%80', '%FF', '%00', '%0A%0D', '%25%', '%%', '%u0041', '%F0%9F']

function scalarOf (fields: FieldMap): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...POOLS.string, ...POOLS.decimal, ...POOLS.date, ...POOLS['date-time'], ...POOLS.int64, 'DRAFT', 'INVOICE', 'true', 'false', 'null', ''),
    fc.constantFrom(...POOLS.fragments).map((s) => `${s}*`),
    fc.string({ maxLength: 12 }),
    fc.constantFrom('9'.repeat(400), '1e400', '-0', 'NaN', '0x1F', '2024-13-45', 'P1Y', '[1,2]', '{"a":1}', 'a'.repeat(3000)),
    fc.constantFrom(...[...fields.keys()])
  )
}

/** One query string over a collection with these fields, valid or not, with cursors it has seen. */
function queryOf (fields: FieldMap, cursors: string[]): fc.Arbitrary<string> {
  const paths = [...fields.values()].filter((f) => f.filterable).map((f) => f.path)
  const objectPrefixes = [...new Set(paths.filter((p) => p.includes('.')).map((p) => p.split('.')[0] as string))]
  const hybrid = fc.oneof(
    fc.constantFrom(...paths.filter((p) => !p.includes('.'))).chain((path) => fiqlOf(only(fields, (p) => p === path)).map((v) => [`${path}Filter`, v] as const)),
    ...objectPrefixes.map((prefix) => fiqlOf(only(fields, (p) => p.startsWith(`${prefix}.`)), prefix).map((v) => [`${prefix}Filter`, v] as const))
  )
  const cursor = fc.oneof(
    fc.constantFrom(...cursors),
    fc.tuple(fc.constantFrom(...cursors), fc.nat(), fc.constantFrom('A', '_', '-', '=', '%2B', '')).map(([c, at, ch]) => c.slice(0, at % c.length) + ch + c.slice(at % c.length + 1)),
    fc.base64String({ maxLength: 60 })
  )
  const sortable = [...fields.values()].filter((f) => f.sortable).map((f) => f.path)
  const pair: fc.Arbitrary<readonly [string, string]> = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...paths), scalarOf(fields)) },
    { weight: 3, arbitrary: fiqlOf(fields).map((v) => ['filter', v] as const) },
    { weight: 2, arbitrary: hybrid },
    { weight: 2, arbitrary: fc.oneof(orderingArbitrary(fields).map((terms) => (terms[0] === undefined || terms[0].field === 'id' ? 'id' : `${terms[0].direction === 'desc' ? '-' : ''}${terms[0].field}`)), fc.constantFrom(...sortable, 'tags', 'pages', '--name', '+name', '-', '')).map((v) => ['ordering', v] as const) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('limit', 'offset', 'totalCount'), fc.oneof(fc.integer({ min: -5, max: 150 }).map(String), fc.constantFrom('', '1.5', '1e2', '0x10', ' 5', '9'.repeat(30), 'true', 'null'))) },
    { weight: 1, arbitrary: cursor.map((c) => ['cursor', c] as const) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'Filter', 'filterFilter', 'a.b.c.d', 'metadata', 'pages.number', 'ref', 'etag')), fc.string({ maxLength: 10 })) }
  )
  const part = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(encoded(pair.map(([k]) => k)), encoded(pair.map(([, v]) => v))).map(([k, v]) => `${k}=${v}`) },
    { weight: 8, arbitrary: pair.chain(([k, v]) => encoded(fc.constant(v)).map((ev) => `${percent(k)}=${ev}`)) },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_ESCAPES).chain((bad) => fc.constantFrom(`name=${bad}`, `${bad}=1`, `filter=name==${bad}`, bad)) },
    { weight: 1, arbitrary: fc.constantFrom('', '&', '=', 'limit', 'limit=1&limit=2', 'cursor=a&offset=1', 'filter=name==a&nameFilter=name==a', 'filter=a&filter=b', `name=${'x'.repeat(20000)}`, Array(300).fill('name=a').join('&')) }
  )
  return fc.array(part, { maxLength: 6 }).map((parts) => parts.join('&'))
}

/** What a 200 of a collection carries (conventions.md, Collection response envelope). */
function envelopeOk (reply: Reply): boolean {
  const body = JSON.parse(reply.text)
  return Array.isArray(body.results) && typeof body.paging === 'object' && body.paging !== null && body.paging.limit >= 1 && body.paging.limit <= 100
}

// The decimal format refuses a negative zero ("-0.00"), which the pool keeps for filters.
const DECIMALS = POOLS.decimal.filter((d) => !d.startsWith('-0'))

t.test('query strings and search bodies over the collection routes', async (t) => {
  const { base, errors } = await startFuzzService(t)
  const post = async (path: string, body: unknown): Promise<any> => JSON.parse((await send(base, 'POST', path, good({ 'content-type': 'application/json' }), JSON.stringify(body))).text)
  const people = [await post('/v1/authors', { name: 'Ann', email: 'ann@example.com' }), await post('/v1/authors', { name: 'Bob', email: 'bob@example.com', active: false })]
  for (const [i, name] of POOLS.string.entries()) {
    const doc = await post('/v1/documents', {
      name: `${name}-${i}`,
      authorId: people[i % 2].id,
      kind: ['INVOICE', 'CONTRACT', 'PURCHASE_ORDER'][i % 3],
      status: ['DRAFT', 'PUBLISHED'][i % 2],
      pageCount: [0, 1, 2, 100, 5, 99999][i % 6],
      amount: i % 3 === 0 ? null : DECIMALS[i % DECIMALS.length],
      tags: POOLS.tags.slice(0, i % 4),
      effectiveDate: i % 2 === 0 ? POOLS.date[i % POOLS.date.length] : null,
      metadata: i % 3 === 0 ? null : { source: { system: name === '' ? 'erp' : name, region: i % 2 === 0 ? null : 'eu' } }
    })
    t.ok(typeof doc.id === 'string', `document ${i} created`, { body: doc })
  }
  const child = `/v1/authors/${people[0].id as string}/documents`
  const cursorsOf = async (path: string): Promise<string[]> => {
    const out: string[] = []
    for (const q of ['limit=1', 'limit=1&ordering=-name', 'limit=1&ordering=name&ordering=-createdDateTime']) {
      const res = JSON.parse((await send(base, 'GET', `${path}?${q}`, good())).text)
      out.push(res.paging.next.cursor)
    }
    return out
  }
  const docCursors = await cursorsOf('/v1/documents')
  const authorCursors = [...await cursorsOf('/v1/authors'), ...docCursors]

  const collections = fc.oneof(
    fc.tuple(fc.constantFrom('/v1/documents', child, '/v1/authors/nobody/documents'), queryOf(docFields, docCursors)),
    fc.tuple(fc.constant('/v1/authors'), queryOf(authorFields, authorCursors))
  )

  t.test('GET with arbitrary query strings', async (t) => {
    const tally = new Tally()
    await fc.assert(fc.asyncProperty(collections, async ([path, qs]) => {
      const reply = await send(base, 'GET', `${path}?${qs}`, good())
      const problem = judge({ method: 'GET' }, reply, tally)
      if (reply.status === 200 && !envelopeOk(reply)) throw new Error(`not a collection envelope: ${reply.text.slice(0, 300)}`)
      if (reply.status === 400 && problem !== undefined && !Array.isArray(problem.context) && problem.title === 'Invalid Data') throw new Error(`Invalid Data without context: ${reply.text}`)
    }), { numRuns: 1500 })
    report(t, 'GET query strings', tally)
    t.ok((tally.statuses.get(200) ?? 0) > 200, 'many queries are valid and answered')
    t.ok((tally.statuses.get(400) ?? 0) > 200, 'many are refused')
  })

  t.test('POST search with arbitrary bodies', async (t) => {
    const tally = new Tally()
    const json = fc.jsonValue({ maxDepth: 2 })
    const value = fc.oneof(scalarOf(docFields), fc.array(scalarOf(docFields), { maxLength: 3 }), json)
    const paging = fc.oneof(
      fc.record({ limit: fc.oneof(fc.integer({ min: -2, max: 120 }), json), offset: fc.oneof(fc.nat(5), json), cursor: fc.oneof(fc.constantFrom(...docCursors), json) }, { requiredKeys: [] }),
      json
    )
    const clean = fc.oneof(
      fiqlOf(docFields).map((filter) => ({ filter })),
      fc.record({ status: fc.array(fc.constantFrom('DRAFT', 'PUBLISHED')), ordering: fc.constantFrom('name', '-pageCount'), paging: fc.record({ limit: fc.integer({ min: 1, max: 5 }) }) }, { requiredKeys: [] })
    )
    const body = fc.oneof(
      { weight: 3, arbitrary: clean },
      { weight: 5, arbitrary: fc.record({ filter: fiqlOf(docFields), ordering: fc.oneof(fc.constantFrom('name', '-pageCount', 'bogus'), fc.array(fc.constantFrom('name', '-amount', 'status', 'x'), { maxLength: 3 })), paging, status: fc.oneof(fc.constantFrom('DRAFT', 'NOPE'), fc.array(fc.constantFrom('DRAFT', 'PUBLISHED'))), name: value, tags: value, pageCountFilter: fiqlOf(only(docFields, (p) => p === 'pageCount')) }, { requiredKeys: [] }) },
      { weight: 2, arbitrary: fc.dictionary(fc.constantFrom(...docFields.keys(), 'filter', 'ordering', 'paging', 'limit', '__proto__', 'constructor'), value, { maxKeys: 4 }) },
      { weight: 1, arbitrary: json }
    )
    await fc.assert(fc.asyncProperty(fc.constantFrom('/v1/documents/search', `${child}/search`, '/v1/authors/search'), body, async (path, b) => {
      const reply = await send(base, 'POST', path, good({ 'content-type': 'application/json' }), JSON.stringify(b) ?? 'null')
      judge({ method: 'POST' }, reply, tally)
      if (reply.status === 200 && !envelopeOk(reply)) throw new Error(`not a collection envelope: ${reply.text.slice(0, 300)}`)
    }), { numRuns: 700 })
    report(t, 'POST search bodies', tally)
    t.ok((tally.statuses.get(200) ?? 0) > 20, 'some searches are valid and answered')
    t.ok((tally.statuses.get(400) ?? 0) > 100, 'many are refused')
  })

  afterwards(t, base, errors)
})
