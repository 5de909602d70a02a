import t from 'tap'
import fc from 'fast-check'
import {
  formatServiceHeader,
  isValidUserAgent,
  negotiate,
  parseAccept,
  parseIdempotencyKey,
  parseMediaType,
  parseServiceHeader,
  parseUserAgent,
  qualityOf
} from '../../plugins/conventions/index.js'
import type { MediaType } from '../../plugins/conventions/index.js'

const anyString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '/', ';', ',', '=', '"', '\\', ' ', '(', ')', 'q', '1', '.', '*') }))
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/)
const json: MediaType = { type: 'application', subtype: 'json', params: [] }
const csv: MediaType = { type: 'text', subtype: 'csv', params: [] }

t.test('parseMediaType', async t => {
  t.strictSame(parseMediaType(' Text/Plain ; Charset="UTF-8";; x="a\\"b;c" '), { type: 'text', subtype: 'plain', params: [['charset', 'UTF-8'], ['x', 'a"b;c']] })
  for (const bad of ['', 'text', 'text/', '/plain', 'te xt/plain', 'text/plain; =x', 'text/plain; x', 'text/plain; x="open', 'text/plain; x=a b', 'text/plain; x="\u0001"']) {
    t.equal(parseMediaType(bad), null, JSON.stringify(bad))
  }
  fc.assert(fc.property(anyString, s => {
    const mt = parseMediaType(s)
    return mt === null || (mt.type === mt.type.toLowerCase() && mt.subtype === mt.subtype.toLowerCase())
  }))
})

t.test('parseAccept', async t => {
  t.strictSame(parseAccept('text/html;level=1;q=0.5;ext=1, */*;q=0, application/json'), [
    { type: 'text', subtype: 'html', params: [['level', '1']], q: 0.5 },
    { type: '*', subtype: '*', params: [], q: 0 },
    { type: 'application', subtype: 'json', params: [], q: 1 }
  ], 'accept extensions after q are dropped')
  t.strictSame(parseAccept('a/b;q=x, */json, ,c/d;q=1.5, e/f;q=1.000, "x,y"/z'), [{ type: 'e', subtype: 'f', params: [], q: 1 }], 'invalid elements are skipped')
  t.test('property: never throws, weights stay within 0..1', async () => {
    fc.assert(fc.property(anyString, s => parseAccept(s).every(r => r.q >= 0 && r.q <= 1)))
  })
  t.test('property: generated headers parse back', async () => {
    const range = fc.record({ type: token, subtype: token, q: fc.integer({ min: 0, max: 1000 }) })
    fc.assert(fc.property(fc.array(range, { maxLength: 8 }), ranges => {
      const header = ranges.map(r => `${r.type}/${r.subtype};q=${r.q / 1000}`).join(' , ')
      const parsed = parseAccept(header)
      const expected = ranges.filter(r => r.type !== '*' || r.subtype === '*')
      return parsed.length === expected.length && parsed.every((p, i) => {
        const r = expected[i] as typeof ranges[number]
        return p.type === r.type.toLowerCase() && p.subtype === r.subtype.toLowerCase() && p.q === r.q / 1000
      })
    }))
  })
})

t.test('qualityOf and negotiate', async t => {
  const cases: Array<[string, MediaType, number]> = [
    ['*/*;q=0.1, application/*;q=0.2, application/json;q=0.3', json, 0.3],
    ['*/*;q=0.1, application/*;q=0.2', json, 0.2],
    ['*/*;q=0.1', json, 0.1],
    ['application/json;q=0.4, application/json;charset=utf-8;q=0.6', json, 0.6],
    ['application/json;charset=utf-16', json, 0],
    ['text/*', json, 0],
    ['text/csv;header=present', { type: 'text', subtype: 'csv', params: [['header', 'Present']] }, 1],
    ['text/csv;header=absent', { type: 'text', subtype: 'csv', params: [['header', 'present']] }, 0]
  ]
  for (const [header, mt, q] of cases) t.equal(qualityOf(parseAccept(header), mt), q, header)
  t.equal(negotiate(parseAccept('text/csv'), [json]), null)
  t.test('property: JSON wins whenever it is acceptable', async () => {
    const weight = fc.integer({ min: 1, max: 1000 })
    fc.assert(fc.property(weight, weight, (jq, cq) => {
      return negotiate(parseAccept(`text/csv;q=${cq / 1000}, application/json;q=${jq / 1000}`), [csv, json]) === 'application/json'
    }))
  })
  t.test('property: generated Accept headers pick as the convention says', async () => {
    // A model of the rule: JSON when its weight is above 0, else the produced type of the
    // highest weight above 0 (the first listed on a tie), else nothing (406).
    const vnd: MediaType = { type: 'application', subtype: 'vnd.svc-report.v2+json', params: [] }
    const produced = [json, csv, vnd]
    const range = fc.constantFrom('application/json', 'text/csv', 'application/vnd.svc-report.v2+json', 'text/*', 'application/*', '*/*', 'image/png', 'text/html')
    const weight = fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined })
    fc.assert(fc.property(fc.array(fc.tuple(range, weight), { maxLength: 5 }), fc.shuffledSubarray(produced, { minLength: 1 }), (elements, offered) => {
      const header = elements.map(([r, w]) => w === undefined ? r : `${r};q=${w / 1000}`).join(', ')
      const ranges = parseAccept(header)
      const weights = offered.map((mt) => qualityOf(ranges, mt))
      let expected: string | null = null
      if (offered.includes(json) && (weights[offered.indexOf(json)] as number) > 0) expected = 'application/json'
      else {
        const best = Math.max(0, ...weights)
        if (best > 0) {
          const mt = offered[weights.indexOf(best)] as MediaType
          expected = `${mt.type}/${mt.subtype}`
        }
      }
      return negotiate(ranges, offered) === expected
    }), { numRuns: 500 })
  })
})

t.test('parseUserAgent', async t => {
  t.strictSame(parseUserAgent('Mozilla/5.0 (X11; (nested)) Gecko/20100101 Firefox (x)'), {
    product: 'Mozilla',
    version: '5.0',
    products: [{ name: 'Gecko', version: '20100101' }, { name: 'Firefox' }],
    comments: ['(X11; (nested))', '(x)']
  })
  t.equal(isValidUserAgent('svc/1.2', { strictVersion: true }), false)
  t.equal(isValidUserAgent('svc/12'), true)
  t.test('property: never throws', async () => {
    fc.assert(fc.property(anyString, s => { parseUserAgent(s); return true }))
  })
  t.test('property: generated product/version (comment) values parse back', async () => {
    const comment = fc.stringMatching(/^[a-zA-Z0-9 ;:.,_-]{0,30}$/)
    fc.assert(fc.property(token, fc.stringMatching(/^[0-9][0-9.a-z-]{0,8}$/), fc.option(comment), (product, version, c) => {
      const ua = parseUserAgent(c === null ? `${product}/${version}` : `${product}/${version} (${c})`)
      return ua !== null && ua.product === product && ua.version === version && ua.comments.length === (c === null ? 0 : 1)
    }))
  })
})

t.test('parseServiceHeader', async t => {
  t.test('property: never throws', async () => {
    fc.assert(fc.property(anyString, s => { parseServiceHeader(s); return true }))
  })
  t.test('property: a generated valid header round-trips', async () => {
    const key = fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,15}$/).filter(k => k !== 'id' && k !== 'name' && !/version/i.test(k))
    const value = fc.stringMatching(/^[\x21\x23-\x2b\x2d-\x3a\x3c\x3e-\x5b\x5d-\x7e]{1,20}$/)
    const service = fc.record({
      id: fc.uuid(),
      name: fc.option(fc.stringMatching(/^[a-z0-9-]{1,60}$/), { nil: undefined }),
      attributes: fc.dictionary(key, value, { maxKeys: 5 })
    })
    fc.assert(fc.property(service, s => {
      const parsed = parseServiceHeader(formatServiceHeader(s))
      if (!parsed.ok) return false
      const expected = s.name === undefined ? { id: s.id, attributes: s.attributes } : s
      return JSON.stringify(parsed.service) === JSON.stringify(expected)
    }))
  })
})

t.test('parseIdempotencyKey', async t => {
  const key = fc.stringMatching(/^[a-z0-9-]{20,255}$/)
  t.test('property: valid keys parse, bare or quoted', async () => {
    fc.assert(fc.property(key, k => parseIdempotencyKey(k) === k && parseIdempotencyKey(`"${k}"`) === k))
  })
  t.test('property: a key with any other character is refused', async () => {
    const other = fc.string({ minLength: 1, maxLength: 1 }).filter(c => !/[a-z0-9-]/.test(c))
    fc.assert(fc.property(key, other, fc.nat(), (k, c, at) => {
      const i = at % k.length
      return parseIdempotencyKey(k.slice(0, i) + c + k.slice(i + 1)) === null
    }))
  })
})
