import t from 'tap'
import fc from 'fast-check'
import { fields } from './fixtures.js'
import { compareCodePoints, compareDecimals, compareValues, compilePredicate, keyComparator, queryMemory, unicodeLower } from '../../store/memory-query.js'
import { parseFilter } from '../../plugins/query/fiql-check.js'
import type { CollectionQuery, Filter } from '../../model/query.js'

t.test('compareCodePoints is the order of UTF-8 bytes (PostgreSQL COLLATE "C")', async (t) => {
  const text = fc.string({ unit: fc.oneof(fc.constantFrom('a', 'Z', '\uFFFD', '\uE000', '😀', '\u{10FFFF}', 'é'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 6 })
  fc.assert(fc.property(text, text, (a, b) => compareCodePoints(a, b) === Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)))), { numRuns: 3000 })
  t.equal(compareCodePoints('\uFFFD', '😀'), -1, 'U+FFFD before U+1F600, unlike UTF-16 order')
  t.equal(compareCodePoints('😀', '\uE000'), 1)
  t.equal(compareCodePoints('ab', 'a'), 1)
  t.equal(compareCodePoints('a', 'a'), 0)
})

t.test('compareDecimals is exact', async (t) => {
  const decimal = fc.tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.nat({ max: 8 }), fc.nat({ max: 2 }), fc.nat({ max: 2 }))
  const text = ([n, scale, lead, trail]: [bigint, number, number, number]): string => {
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0')
    const whole = '0'.repeat(lead) + (scale === 0 ? digits : digits.slice(0, -scale))
    const fraction = (scale === 0 ? '' : digits.slice(-scale)) + '0'.repeat(scale === 0 ? 0 : trail)
    return (n < 0n ? '-' : '') + whole + (fraction === '' ? '' : '.' + fraction)
  }
  fc.assert(fc.property(decimal, decimal, (a, b) => {
    const x = a[0] * 10n ** BigInt(8 - a[1])
    const y = b[0] * 10n ** BigInt(8 - b[1])
    return compareDecimals(text(a), text(b)) === (x === y ? 0 : x < y ? -1 : 1)
  }), { numRuns: 3000 })
  const cases: Array<[string, string, number]> = [['-0', '0', 0], ['-0.00', '0.0', 0], ['10.5', '10.50', 0], ['-1', '-2', 1], ['0.001', '-1', 1], ['9', '10', -1], ['007', '7.000', 0]]
  for (const [a, b, expected] of cases) t.equal(compareDecimals(a, b), expected, `${a} vs ${b}`)
})

t.test('compareValues by type', async (t) => {
  const cases: Array<[Parameters<typeof compareValues>[0], unknown, unknown, number]> = [
    ['int32', 2, 10, -1], ['int32', -5, -5, 0],
    ['int64', '9223372036854775807', '9223372036854775806', 1], ['int64', 9007199254740993n.toString(), '9007199254740992', 1], ['int64', 10, '10', 0],
    ['decimal', '10.25', '9.5', 1],
    ['date', '2024-02-29', '2024-03-01', -1],
    ['date-time', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.000Z', 0], ['date-time', '2024-01-01T00:00:00.5Z', '2024-01-01T00:00:00.499Z', 1],
    ['boolean', false, true, -1], ['boolean', true, true, 0],
    ['string', 'B', 'a', -1], ['enum', 'PUBLISHED', 'DRAFT', 1]
  ]
  for (const [type, a, b, expected] of cases) t.equal(compareValues(type, a, b), expected, `${type} ${String(a)} vs ${String(b)}`)
})

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase())

t.test('patterns match like an anchored glob of * only; ic folds Unicode letters, or ASCII ones when told', async (t) => {
  // Letters whose lower case JavaScript's whole-string mapping gives code point by code point too.
  const text = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'é', 'É', 'Ж', 'ж', '😀', '%', '*'), maxLength: 8 })
  const segments = fc.array(fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'é', 'É', 'ж', 'Ж', '😀', '%'), maxLength: 2 }), { minLength: 1, maxLength: 4 })
  // Case-sensitive; case-insensitive by default (Unicode); case-insensitive told ASCII.
  const modes = fc.constantFrom([false, undefined], [true, undefined], [true, 'ascii'] as const)
  fc.assert(fc.property(text, segments, modes, fc.constantFrom('like', 'notlike'), (name, wildcard, [ci, folding], op) => {
    const filter: Filter = { kind: 'cmp', field: 'name', op, values: [{ wildcard }], ci }
    const fold = !ci ? (s: string): string => s : folding === 'ascii' ? asciiLower : (s: string): string => s.toLowerCase()
    const oracle = new RegExp('^' + wildcard.map((s) => escapeRegex(fold(s))).join('[\\s\\S]*') + '$').test(fold(name))
    return compilePredicate(filter, fields, { folding })({ name }) === (op === 'like' ? oracle : !oracle)
  }), { numRuns: 3000 })
  const test = (fiql: string, name: string | null): boolean => compilePredicate(parseFilter(fiql, fields), fields)({ name, description: name })
  const ascii = (fiql: string, name: string): boolean => compilePredicate(parseFilter(fiql, fields), fields, { folding: 'ascii' })({ name })
  t.ok(test('name=containsic=ÉA', 'xÉax'))
  t.ok(test('name=containsic=éa', 'xÉax'), 'É is é')
  t.ok(test('name=startswithic=émile', 'Émile'))
  t.ok(test('name=containsic=ünï', 'Zoë Ünïcode'))
  t.notOk(ascii('name=containsic=éa', 'xÉax'), 'told the store folds ASCII only, É is not é')
  t.ok(ascii('name=containsic=ÉA', 'xÉax'))
  t.ok(test('name=startswith=ab', 'abc'))
  t.notOk(test('name=endswith=ab', 'abc'))
  t.ok(test('name=like=a*a', 'aa'))
  t.notOk(test('name=like=a*a', 'a'), 'prefix and suffix may not overlap')
  t.notOk(test('description=notlike=x', null), 'negations exclude nulls too')
  t.notOk(test('description!=x', null))
  t.notOk(test('description=out=(x)', null))
  t.ok(test('description=isnull=true', null))
})

t.test('unicodeLower: the simple lower case of each code point, as PostgreSQL\'s lower() under pg_c_utf8 and C.utf8', async (t) => {
  const cases: Array<[string, string]> = [
    ['ÉMILE ZOË', 'émile zoë'], ['ÜÖÄ', 'üöä'], ['ΩΑΣ', 'ωασ'], ['ЖИЗНЬ', 'жизнь'], ['ŁŹŻ', 'łźż'],
    ['ß', 'ß'], ['ẞ', 'ß'], ['İ', 'i'], ['İstanbul', 'istanbul'], ['ǅ', 'ǆ'], ['\u212A', 'k'], ['ſ', 'ſ'], ['ς', 'ς'],
    ['😀A', '😀a'], ['', ''], ['ABC', 'abc']
  ]
  for (const [text, lower] of cases) t.equal(unicodeLower(text), lower, text)
  const any = fc.string({ unit: 'binary', maxLength: 8 })
  fc.assert(fc.property(any, (s) => [...unicodeLower(s)].length === [...s].length), { numRuns: 2000 })
})

t.test('compilePredicate over all types', async (t) => {
  const item = { pageCount: 3, byteCount: '10', amount: '1.50', tags: ['x', 'y'], active: true, status: 'DRAFT', metadata: null }
  const cases: Array<[string, boolean]> = [
    ['pageCount=in=(1,3)', true], ['pageCount=out=(1,3)', false], ['byteCount=gt=9', true], ['amount==1.5', true], ['amount=le=1.49', false],
    ['tags==x', true], ['tags!=x', false], ['tags=in=(z,y)', true], ['tags=out=(z)', true], ['active==true', true], ['status=ge=DRAFT', true],
    ['metadata.source.system=isnull=true', true], ['metadata.source.system!=a', false], ['pageCount=lt=3,amount=gt=1', true], ['pageCount=lt=3;amount=gt=1', false]
  ]
  for (const [fiql, expected] of cases) t.equal(compilePredicate(parseFilter(fiql, fields), fields)(item), expected, fiql)
  t.equal(compilePredicate(null, fields)({}), true)
})

t.test('keyComparator: null greater than every value, missing keys are null', async (t) => {
  const compare = keyComparator([{ field: 'pageCount', direction: 'asc' }, { field: 'name', direction: 'desc' }], fields)
  t.equal(compare([null, 'a'], [1, 'a']), 1)
  t.equal(compare([1, null], [1, 'a']), -1, 'descending: null first')
  t.equal(compare([null, null], [null, null]), 0)
  t.equal(compare([1], [1, null]), 0)
})

t.test('queryMemory: offset paging, total count and programming errors', async (t) => {
  const docs = [3, 1, 2, 5, 4].map((n) => ({ id: `d${n}`, pageCount: n }))
  const ordering = [{ field: 'pageCount', direction: 'desc' as const }, { field: 'id', direction: 'asc' as const }]
  const page = queryMemory(docs, { filter: null, ordering, paging: { kind: 'offset', limit: 2, offset: 1, totalCount: true } }, fields)
  t.strictSame(page.items.map((d) => d.id), ['d4', 'd3'])
  t.strictSame([page.totalCount, page.hasNext, page.hasPrevious], [5, true, true])
  const noCount = queryMemory(docs, { filter: parseFilter('pageCount=gt=1', fields), ordering, paging: { kind: 'offset', limit: 5, offset: 3, totalCount: false } }, fields)
  t.strictSame([noCount.items.map((d) => d.id), noCount.totalCount, noCount.hasNext], [['d2'], undefined, false])
  const after = queryMemory(docs, { filter: null, ordering, paging: { kind: 'cursor', limit: 2, cursor: { direction: 'next', values: [1, 'd1'] } } }, fields)
  t.strictSame([after.items, after.hasNext, after.hasPrevious, after.previous], [[], false, true, { direction: 'previous', values: [] }], 'nothing after the last item: a link back to the last items')
  const before = queryMemory(docs, { filter: null, ordering, paging: { kind: 'cursor', limit: 2, cursor: { direction: 'previous', values: [0, 'd0'] } } }, fields)
  t.strictSame([before.items.map((d) => d.id), before.hasNext, before.hasPrevious], [['d2', 'd1'], true, true], 'before a boundary past the end: the last page')

  const bad: Array<[CollectionQuery, string]> = [
    [{ filter: { kind: 'cmp', field: 'nope', op: 'eq', values: [1], ci: false }, ordering, paging: { kind: 'cursor', limit: 1 } }, 'memory-query: the query names nope, which is not in the field map'],
    [{ filter: null, ordering: [{ field: 'nope', direction: 'asc' }], paging: { kind: 'cursor', limit: 1 } }, 'memory-query: the query names nope, which is not in the field map'],
    [{ filter: null, ordering, paging: { kind: 'cursor', limit: 1, cursor: { direction: 'next', values: [1] } } }, 'memory-query: the cursor has 1 values for an ordering of 2']
  ]
  for (const [query, message] of bad) t.throws(() => queryMemory(docs, query, fields), new TypeError(message), message)
})
