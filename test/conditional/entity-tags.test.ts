import t from 'tap'
import fc from 'fast-check'
import { opaqueTags, parseEntityTags, strongMatch, strongTags, weakMatch, type EntityTag } from '../../plugins/conditional/entity-tags.js'

t.test('parseEntityTags: valid forms (RFC 9110 §8.8.3, §13.1.1)', async t => {
  const table: Array<[string, ReturnType<typeof parseEntityTags>]> = [
    ['*', '*'],
    [' * ', '*'],
    ['"abc"', [{ weak: false, tag: '"abc"' }]],
    ['W/"abc"', [{ weak: true, tag: '"abc"' }]],
    ['""', [{ weak: false, tag: '""' }]],
    ['"a", W/"b",   "c"', [{ weak: false, tag: '"a"' }, { weak: true, tag: '"b"' }, { weak: false, tag: '"c"' }]],
    ['"a",,"b"', [{ weak: false, tag: '"a"' }, { weak: false, tag: '"b"' }]],
    [', "a" ,', [{ weak: false, tag: '"a"' }]],
    ['\t"x!#~"\t', [{ weak: false, tag: '"x!#~"' }]],
    ['"\u00e9"', [{ weak: false, tag: '"\u00e9"' }]]
  ]
  for (const [value, expected] of table) t.strictSame(parseEntityTags(value), expected, JSON.stringify(value))
})

t.test('parseEntityTags: malformed values are null', async t => {
  const table = ['', ' ', ',', 'abc', '"abc', 'abc"', '"a" "b"', '"a";"b"', 'w/"a"', 'W/abc', '"a b"', '"a\u0001"', '"a"x', '**', '*, "a"', '"a"\\', '"\u0100"']
  for (const value of table) t.equal(parseEntityTags(value), null, JSON.stringify(value))
})

t.test('comparison: strong for If-Match, weak for If-None-Match (RFC 9110 §8.8.3.2)', async t => {
  const list = parseEntityTags('W/"1", "2"') as EntityTag[]
  t.equal(strongMatch(list, '"2"'), true)
  t.equal(strongMatch(list, '"1"'), false, 'a weak tag never matches strongly')
  t.equal(weakMatch(list, '"1"'), true)
  t.equal(weakMatch(list, 'W/"2"'), true)
  t.equal(weakMatch(list, '"3"'), false)
  t.equal(strongMatch('*', '"x"'), true)
  t.equal(weakMatch('*', '"x"'), true)
  t.strictSame(strongTags(list), ['"2"'])
  t.strictSame(opaqueTags(list), ['"1"', '"2"'])
})

const etagc = fc.constantFrom(...'!#$%&\'()*+-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~'.split(''))
const tagArb = fc.record({ weak: fc.boolean(), tag: fc.string({ unit: etagc, maxLength: 12 }).map(s => `"${s}"`) }, { noNullPrototype: true })

t.test('property: a printed list of tags parses back to the same tags', async t => {
  fc.assert(fc.property(fc.array(tagArb, { minLength: 1, maxLength: 6 }), fc.constantFrom(',', ', ', ' ,\t'), (tags, sep) => {
    const printed = tags.map(x => (x.weak ? 'W/' : '') + x.tag).join(sep)
    t.strictSame(parseEntityTags(printed), tags)
  }), { numRuns: 300 })
})

t.test('property: never throws, and what it accepts is * or quoted tags', async t => {
  fc.assert(fc.property(fc.string({ maxLength: 40 }), (value) => {
    const parsed = parseEntityTags(value)
    if (parsed !== null && parsed !== '*') {
      for (const tag of parsed) {
        if (!tag.tag.startsWith('"') || !tag.tag.endsWith('"') || tag.tag.length < 2) throw new Error(`bad tag from ${value}`)
      }
    }
  }), { numRuns: 2000 })
  t.pass('no throw')
})
