import t from 'tap'
import fc from 'fast-check'
import { build, get, PATH } from './helper.js'

/*
 * Hardening: random query strings against a collection over an in-memory array. Every
 * answer is a 200 envelope or a 400 problem with context; never a 5xx, never a crash.
 */

const KEYS = [
  'limit', 'offset', 'cursor', 'totalCount', 'ordering', 'filter', 'name', 'status', 'pageCount', 'byteCount',
  'amount', 'effectiveDate', 'publishedDateTime', 'active', 'flagged', 'tags', 'description', 'metadata.source.system',
  'metadata.score', 'nameFilter', 'metadataFilter', 'metadata.sourceFilter', 'pageCountFilter', 'tagsFilter',
  'unknown', '', 'Filter', 'paging', '__proto__', 'constructor', 'toString', 'a.b.c.d'
]

const TOKENS = [
  'name', 'pageCount', 'status', 'tags', 'amount', 'publishedDateTime', 'metadata.source.system', 'source.system', 'score',
  '==', '!=', '=lt=', '=ge=', '=in=', '=out=', '=isnull=', '=like=', '=containsic=', '=bogus=', '=',
  ';', ',', '(', ')', '"', "'", '\\', '*', ' ', 'DRAFT', 'true', 'false', '1', '-5', '10.50', '2147483648',
  '2024-01-01', '2024-02-01T00:00:01.000Z', 'Doc A', 'é', '😀', '%', '+', '&', '#', '-name', 'id'
]

const SAFE = /^[A-Za-z0-9\-._~!$'()*,;:@/?]$/

/** Encodes text the way a client might: some characters raw, some %XX, spaces as + or %20. */
function encode (text: string, seed: number): string {
  let out = ''
  let state = seed >>> 0
  for (const ch of text) {
    state = (state * 1103515245 + 12345) >>> 0
    const pick = state % 4
    if (ch === ' ') out += pick < 2 ? '+' : '%20'
    else if (SAFE.test(ch) && pick !== 0) out += ch
    else out += encodeURIComponent(ch)
  }
  return out
}

const fiqlish = fc.array(fc.constantFrom(...TOKENS), { maxLength: 16 }).map((parts) => parts.join(''))

t.test('10,000 random query strings: 200 or a 400 problem with context, never a 5xx', async (t) => {
  const app = await build(t)
  const cursors: string[] = []
  for (const q of ['limit=2', 'limit=3&ordering=-pageCount', 'limit=1&status=DRAFT', 'limit=5&ordering=name&ordering=-amount']) {
    const res = await get(app, `${PATH}?${q}`)
    cursors.push(res.body.paging.next.cursor)
  }
  const cursor = fc.oneof(
    fc.constantFrom(...cursors),
    fc.tuple(fc.constantFrom(...cursors), fc.nat(200), fc.constantFrom('A', '_', '-', '=', '%', '')).map(([c, at, ch]) => c.slice(0, at % c.length) + ch + c.slice(at % c.length + 1))
  )
  const value = fc.oneof(
    { weight: 4, arbitrary: fiqlish },
    { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
    { weight: 2, arbitrary: fc.oneof(fc.integer().map(String), fc.constantFrom('', '0', '1', '-1', '7', '100', '101', '1e3', '0x10', '9'.repeat(400))) },
    { weight: 1, arbitrary: cursor },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(5000), '('.repeat(400) + 'name==a' + ')'.repeat(400), 'name=in=(' + 'a,'.repeat(300) + 'a)', Array(80).fill('name==a').join(';')) }
  )
  const part = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), value, fc.nat(), fc.nat()).map(([k, v, s1, s2]) => `${encode(k, s1)}=${encode(v, s2)}`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'limit', '=', '%', '%ZZ=1', 'name=%E0%A4', 'name=%C0%AF', '%F0%9F=1', 'a=%ED%A0%80') }
  )
  const queryString = fc.array(part, { maxLength: 8 }).map((parts) => parts.join('&'))

  const seen = { 200: 0, 400: 0 }
  await fc.assert(fc.asyncProperty(queryString, async (qs) => {
    const res = await app.inject(`${PATH}?${qs}`)
    if (res.statusCode === 200) {
      const body = res.json()
      if (!Array.isArray(body.results) || typeof body.paging !== 'object' || !(body.paging.limit >= 1 && body.paging.limit <= 100)) return false
      seen[200]++
      return true
    }
    if (res.statusCode !== 400 || !String(res.headers['content-type']).startsWith('application/problem+json')) return false
    const body = res.json()
    seen[400]++
    return body.status === 400 && Array.isArray(body.context) && body.context.length > 0 &&
      body.context.every((c: Record<string, unknown>) => typeof c.message === 'string' && c.message !== '' && typeof c.code === 'string' && c.source === 'query')
  }), { numRuns: 10_000 })
  t.ok(seen[200] > 500, `valid queries are reached (${seen[200]} answered 200)`)
  t.ok(seen[400] > 500, `invalid ones too (${seen[400]} answered 400)`)
})
