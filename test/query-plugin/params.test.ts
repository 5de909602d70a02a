import t from 'tap'
import fc from 'fast-check'
import { decodeComponent, isWellFormed, parseQueryString } from '../../plugins/query/params.js'
import { ifNoneMatch, collectionEtag } from '../../plugins/query/etag.js'
import type { FastifyRequest } from 'fastify'
import { linkBase, pageUrl } from '../../plugins/query/links.js'
import { collectionPath } from '../../plugins/query/route.js'

const entries = (url: string): Array<[string, string[]]> => [...parseQueryString(url).params]

t.test('the query string keeps every value of a repeated name, in order', async (t) => {
  const table: Array<[string, Array<[string, string[]]>, string[]]> = [
    ['/c', [], []],
    ['/c?', [], []],
    ['/c?a=1&b=2&a=3', [['a', ['1', '3']], ['b', ['2']]], []],
    ['/c?&&a=1&', [['a', ['1']]], []],
    ['/c?a&b=&c==x', [['a', ['']], ['b', ['']], ['c', ['=x']]], []],
    ['/c?=x', [['', ['x']]], []],
    ['/c?name=Doc+A&x=%2B1', [['name', ['Doc A']], ['x', ['+1']]], []],
    ['/c?filter=name%3D%3D%22a%20b%22%3Bx%3D%3D1', [['filter', ['name=="a b";x==1']]], []],
    ['/c?%6Cimit=5', [['limit', ['5']]], []],
    ['/c?n=%C3%A9%F0%9F%98%80', [['n', ['é😀']]], []],
    ['/c?n=%ZZ&ok=1', [['ok', ['1']]], ['n=%ZZ']],
    ['/c?%E0%A4%A=1', [], ['%E0%A4%A=1']],
    ['/c?n=%ED%A0%80', [], ['n=%ED%A0%80']],
    ['/c?n=\uD800', [], ['n=\uD800']],
    ['/c?a=1?b=2', [['a', ['1?b=2']]], []]
  ]
  for (const [url, params, malformed] of table) {
    const parsed = parseQueryString(url)
    t.strictSame([...parsed.params], params, url)
    t.strictSame(parsed.malformed, malformed, `${url} malformed`)
  }
})

t.test('decoding undoes encodeURIComponent and the form encoding of spaces', async (t) => {
  const pair = fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 12 }))
  fc.assert(fc.property(fc.array(pair, { maxLength: 6 }), (pairs) => {
    const url = '/x?' + pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v).replaceAll('%20', '+')}`).join('&')
    const expected = new Map<string, string[]>()
    for (const [n, v] of pairs) expected.set(n, [...(expected.get(n) ?? []), v])
    t.strictSame(entries(url), [...expected])
    return true
  }), { numRuns: 500 })
  t.equal(decodeComponent('a+b%2Bc'), 'a b+c')
  t.equal(decodeComponent('%'), undefined)
})

t.test('isWellFormed finds lone surrogates', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', 'a'), maxLength: 4 }), (a, b) => {
    const text = a + b
    return isWellFormed(text) === (text as unknown as { isWellFormed: () => boolean }).isWellFormed()
  }), { numRuns: 2000 })
  t.ok(isWellFormed('😀'))
  t.notOk(isWellFormed('\uD83D'))
  t.notOk(isWellFormed('\uDE00x'))
})

t.test('pageUrl percent-encodes names and values; collectionPath drops /search', async (t) => {
  t.equal(pageUrl('http://h/c', []), 'http://h/c')
  t.equal(pageUrl('/c', [['limit', '2'], ['a b', 'x&y=z;é+']]), '/c?limit=2&a%20b=x%26y%3Dz%3B%C3%A9%2B')
  const request = (host: string): FastifyRequest => ({ host, protocol: 'https' }) as unknown as FastifyRequest
  t.equal(linkBase(request('api.example.com:8443'), '/c'), 'https://api.example.com:8443/c')
  t.equal(linkBase(request(''), '/c'), '/c', 'no Host (HTTP/1.0): a path-absolute link')
  t.equal(collectionPath('/v1/a/search'), '/v1/a')
  t.equal(collectionPath('/v1/a/search/'), '/v1/a')
  t.equal(collectionPath('/v1/a'), '/v1/a')
  t.equal(collectionPath('/v1/research'), '/v1/research')
})

t.test('collection ETags are strong hashes; If-None-Match uses weak comparison', async (t) => {
  const etag = collectionEtag('{"results":[]}')
  t.match(etag, /^"[A-Za-z0-9_-]{22}"$/)
  t.equal(collectionEtag(Buffer.from('{"results":[]}')), etag)
  t.not(collectionEtag('{"results":[1]}'), etag)
  const table: Array<[string | undefined, boolean]> = [
    [undefined, false],
    [etag, true],
    [`W/${etag}`, true],
    [`"other", ${etag}`, true],
    [` "other" ,W/${etag} `, true],
    ['*', true],
    ['"other"', false],
    [etag.slice(1), false],
    ['', false]
  ]
  for (const [header, match] of table) t.equal(ifNoneMatch(header, etag), match, String(header))
})
