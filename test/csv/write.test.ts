import t from 'tap'
import fc from 'fast-check'
import { parse } from 'csv-parse/sync'
import { Type } from '@sinclair/typebox'
import { columnsOf, writeCsv } from '../../plugins/csv/index.js'
import { Nullable } from '../../schemas/index.js'
import { fieldText, quoteField } from '../../plugins/csv/write.js'
import { itemSchemaOf } from '../../plugins/csv/columns.js'
import { linkHeader, resultsOf } from '../../plugins/csv/page.js'

// The writer against RFC 4180 as a maintained parser (csv-parse) reads it.

const read = (text: string): string[][] => parse(text, { record_delimiter: '\r\n', relax_column_count: false }) as string[][]

t.test('columns: the schema\'s order, nested objects as dotted names', async t => {
  const Item = Type.Object({
    id: Type.String(),
    tags: Type.Array(Type.String()),
    metadata: Nullable(Type.Object({ source: Nullable(Type.Object({ system: Type.String(), region: Nullable(Type.String()) })) })),
    owner: Type.Object({ name: Type.String() }),
    free: Type.Object({}),
    either: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
    count: Type.Integer()
  })
  t.strictSame(columnsOf(Item).map((c) => c.name), ['id', 'tags', 'metadata.source.system', 'metadata.source.region', 'owner.name', 'free', 'either', 'count'])
  t.strictSame(columnsOf(Nullable(Type.Object({ x: Type.String() }))).map((c) => c.path), [['x']], 'a nullable object item')
  for (const bad of [Type.String(), Type.Object({}), null, 'x', { anyOf: [Type.String()] }, { oneOf: [Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })] }]) {
    t.throws(() => columnsOf(bad), { name: 'TypeError', message: 'the item schema must be an object schema with properties' }, JSON.stringify(bad))
  }
  t.strictSame(columnsOf({ oneOf: [{ type: 'null' }, Type.Object({ a: Type.String() })] }).map((c) => c.name), ['a'])
  t.strictSame(columnsOf({ type: 'object', properties: { any: true, n: { type: 'number' } } }).map((c) => c.name), ['any', 'n'], 'a boolean schema is one column')
})

t.test('the item schema of a collection response', async t => {
  const item = Type.Object({ id: Type.String() })
  t.equal(itemSchemaOf({ 200: Type.Object({ results: Type.Array(item), paging: Type.Object({}) }) }), item)
  t.equal(itemSchemaOf({ '2xx': { type: 'object', properties: { results: { type: 'array', items: item } } } }), item)
  for (const response of [undefined, null, {}, { 200: item }, { 200: 'x' }, { 200: Type.Object({ results: Type.String() }) }]) {
    t.equal(itemSchemaOf(response), null, JSON.stringify(response))
  }
})

t.test('what a page takes from the envelope', async t => {
  for (const payload of [null, 'text', 1, {}, { results: 'x' }]) t.equal(resultsOf(payload), null, JSON.stringify(payload))
  t.strictSame(resultsOf({ results: [1] }), [1])
  const cases: Array<[unknown, string | null]> = [
    [{}, null],
    [{ paging: null }, null],
    [{ paging: { next: null, previous: null } }, null],
    [{ paging: { next: 'x', previous: { url: '' } } }, null],
    [{ paging: { next: { url: 1 } } }, null],
    [{ paging: { next: { url: '/a?cursor=1' } } }, '</a?cursor=1>; rel="next"'],
    [{ paging: { previous: { cursor: 'c', url: 'http://h/a' } } }, '<http://h/a>; rel="prev"']
  ]
  for (const [payload, header] of cases) t.equal(linkHeader(payload), header, JSON.stringify(payload))
})

t.test('fields: quoting and values, case by case', async t => {
  const cases: Array<[unknown, string]> = [
    [null, ''],
    [undefined, ''],
    ['', ''],
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\r\nbreak', '"line\r\nbreak"'],
    ['cr\ronly', '"cr\ronly"'],
    ['lf\nonly', '"lf\nonly"'],
    [' spaced ', ' spaced '],
    ['Grüße 日本語 😀', 'Grüße 日本語 😀'],
    [0, '0'],
    [-1.5, '-1.5'],
    [true, 'true'],
    [false, 'false'],
    [10n, '10'],
    [['a', 'b', 'c'], 'a|b|c'],
    [[], ''],
    [['x,y', 'z'], '"x,y|z"'],
    [[1, null, true], '1||true'],
    [{ a: 1 }, '"{""a"":1}"'],
    [[{ a: 1 }], '"{""a"":1}"']
  ]
  for (const [value, written] of cases) t.equal(quoteField(fieldText(value, '|')), written, JSON.stringify(String(value)))
  t.equal(fieldText(['a', 'b'], ';'), 'a;b', 'another separator')
})

t.test('a page: header row, one record per item, CRLF after each', async t => {
  const columns = columnsOf(Type.Object({ id: Type.String(), 'odd,name': Type.String(), meta: Type.Object({ deep: Type.String() }) }))
  const text = writeCsv(columns, [{ id: '1', 'odd,name': 'x', meta: { deep: 'd' } }, { id: '2', meta: null }, 'not an object'])
  t.equal(text, 'id,"odd,name",meta.deep\r\n1,x,d\r\n2,,\r\n,,\r\n')
  t.equal(writeCsv(columns, []), 'id,"odd,name",meta.deep\r\n', 'an empty page is its header row')
  t.equal(writeCsv(columnsOf(Type.Object({ a: Type.String() })), [{ a: null }, { a: 'x' }]), 'a\r\n""\r\nx\r\n', 'one empty field is quoted, not a blank line')
})

t.test('property: every generated page reads back, field by field, with csv-parse', async () => {
  // Text with every character that needs quoting, and some that do not.
  const text = fc.string({ unit: fc.oneof(fc.constantFrom(',', '"', '\r', '\n', ' ', '|', 'a', 'é', '日', '😀'), fc.string({ minLength: 1, maxLength: 1 })) })
  const value = fc.oneof(text, fc.constant(null), fc.integer(), fc.boolean(), fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n') }), { maxLength: 3 }))
  const names = fc.uniqueArray(fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\r\n', 'é'), minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 })
  fc.assert(fc.property(names, fc.array(fc.array(value, { minLength: 5, maxLength: 5 }), { maxLength: 8 }), (keys, rows) => {
    const schema = Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Unknown()])))
    const items = rows.map((r) => Object.fromEntries(keys.map((k, i) => [k, r[i]])))
    const text = writeCsv(columnsOf(schema), items)
    const expected = [keys, ...items.map((item) => keys.map((k) => fieldText(item[k], '|')))]
    return JSON.stringify(read(text)) === JSON.stringify(expected) && text.endsWith('\r\n')
  }), { numRuns: 300 })
})
