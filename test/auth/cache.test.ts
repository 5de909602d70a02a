import t from 'tap'
import { PrincipalCache, MAX_CACHE_MS } from '../../plugins/auth/cache.js'

const principal = (sub: string, exp: number): { sub: string, scopes: string[], claims: Record<string, unknown> } => ({ sub, scopes: [], claims: { sub, exp } })

t.test('a cached token is served until its exp, at most ten minutes', async t => {
  const cache = new PrincipalCache(10)
  const now = 1_000_000_000_000
  cache.set('short', principal('a', now / 1000 + 60), now)
  cache.set('long', principal('b', now / 1000 + 86_400), now)
  t.equal(cache.get('short', now + 59_999)?.sub, 'a')
  t.equal(cache.get('short', now + 60_000), undefined, 'gone at exp')
  t.equal(cache.get('short', now), undefined, 'and removed')
  t.equal(cache.get('long', now + MAX_CACHE_MS - 1)?.sub, 'b')
  t.equal(cache.get('long', now + MAX_CACHE_MS), undefined, 'never trusted longer than ten minutes')
  t.equal(cache.get('unknown', now), undefined)
})

t.test('bounded: the oldest entry leaves first', async t => {
  const cache = new PrincipalCache(2)
  const now = 1_000_000_000_000
  const exp = now / 1000 + 60
  cache.set('one', principal('1', exp), now)
  cache.set('two', principal('2', exp), now)
  cache.set('three', principal('3', exp), now)
  t.equal(cache.get('one', now), undefined)
  t.equal(cache.get('two', now)?.sub, '2')
  t.equal(cache.get('three', now)?.sub, '3')
})
