import t from 'tap'
import Fastify from 'fastify'
import problem from '../../plugins/problem/index.js'
import conventions from '../../plugins/conventions/index.js'
import { Memo } from '../../plugins/conventions/memo.js'
import fc from 'fast-check'

t.test('Memo computes each key once, keeps null answers, and starts over when full', async t => {
  const calls: string[] = []
  const memo = new Memo<string | null>((k) => { calls.push(k); return k === 'none' ? null : k.toUpperCase() }, 2)
  t.equal(memo.get('a'), 'A')
  t.equal(memo.get('a'), 'A')
  t.equal(memo.get('none'), null)
  t.equal(memo.get('none'), null, 'a null answer is remembered too')
  t.strictSame(calls, ['a', 'none'])
  t.equal(memo.get('b'), 'B', 'a third key starts the memo over')
  t.equal(memo.get('a'), 'A')
  t.strictSame(calls, ['a', 'none', 'b', 'a'])
})

t.test('Memo answers as its check would, for any sequence of values; a repeated value is not checked again', async t => {
  // Falsy answers (false, null, '') too: the memo must not take them for misses.
  const check = (k: string): string | boolean | null => k.length === 0 ? '' : k.startsWith('n') ? null : k.startsWith('f') ? false : k.toUpperCase()
  fc.assert(fc.property(
    fc.array(fc.constantFrom('', 'a', 'b', 'n1', 'n2', 'f1', 'f2', 'ab'), { maxLength: 60 }),
    fc.integer({ min: 1, max: 4 }),
    (keys, max) => {
      let calls = 0
      const memo = new Memo((k) => { calls++; return check(k) }, max)
      let previous: string | undefined
      for (const key of keys) {
        const before = calls
        if (memo.get(key) !== check(key)) return false
        // The same value twice in a row never reaches the check, even when the map started over.
        if (key === previous && calls !== before) return false
        previous = key
      }
      return calls <= keys.length
    }
  ))
  t.pass('property held')
})

t.test('a synchronous custom User-Agent predicate', async t => {
  const app = Fastify()
  await app.register(problem)
  await app.register(conventions, { userAgent: { validate: (value) => value === 'allowed/1' } })
  app.get('/x', async () => ({ ok: true }))
  t.equal((await app.inject({ url: '/x', headers: { 'user-agent': 'allowed/1' } })).statusCode, 200)
  const refused = await app.inject({ url: '/x', headers: { 'user-agent': 'other/1' } })
  t.equal(refused.statusCode, 403)
  t.match(JSON.parse(refused.body).detail, /other\/1/)
  await app.close()
})
